//===- CompileCommand.cpp - cclc compile ----------------------------------===//
//
// The compiler's main path: check the algorithm, build the target (a searched
// and connected topology, or a bare rank count), instantiate, verify, run the
// pass pipeline and emit the requested format.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"

#include "compiler/schedule/Instantiate.h"
#include "compiler/schedule/Placement.h"
#include "compiler/schedule/ScheduleText.h"
#include "compiler/topology/Machine.h"
#include "compiler/verify/Verifier.h"
#include "dsl/Frontend.h"

#include <CLI/CLI.hpp>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>

namespace cclc::driver {

namespace {

struct CompileOptions {
  std::string File;
  std::string Topo;
  int Nodes = 1;
  int NRanks = 0;
  int Root = 0;
  int BufferSlots = 2;
  std::string Emit = "schedule";
  std::string Output = "-";
};

/// Runs Write on the file named by Path, or on stdout for "-".
template <typename Fn> bool writeOutput(const std::string &Path, DiagnosticEngine &Diags, Fn Write) {
  if (Path == "-") {
    Write(std::cout);
    return true;
  }
  std::ofstream OS(Path);
  if (!OS) {
    Diags.error(SourceLoc{}, "cannot write '" + Path + "'");
    return false;
  }
  Write(OS);
  return true;
}

int compile(const CompileOptions &Opts, const CommonOptions &Common) {
  SourceManager SM;
  DiagnosticEngine Diags(SM);
  Diags.setWarningsAsErrors(Common.WarningsAsErrors);
  Diags.setUseColor(Common.Color);

  std::string Error;
  std::optional<uint32_t> Id = SM.loadFile(Opts.File, Error);
  if (!Id) {
    Diags.error(SourceLoc{}, Error);
    return 1;
  }
  dsl::OperationCatalog Ops;
  std::unique_ptr<dsl::Algorithm> Algo = dsl::parseAndCheck(*Id, Ops, Diags);
  if (!Algo)
    return 1;

  std::optional<topo::Machine> Machine;
  sched::Target Target;
  if (!Opts.Topo.empty()) {
    Machine = topo::loadMachine(Opts.Topo, Opts.Nodes, SM, Diags);
    if (!Machine)
      return 1;
    std::string Description = std::to_string(Machine->Conn.NRanks) + " ranks on " + Opts.Topo;
    if (Opts.Nodes > 1)
      Description += " x " + std::to_string(Opts.Nodes) + " nodes";
    Target = sched::topologyTarget(Machine->Sys, Machine->Conn, std::move(Description));
  } else {
    Target = sched::flatTarget(Opts.NRanks);
  }

  sched::InstantiateOptions InstOpts;
  InstOpts.Root = Opts.Root;
  InstOpts.BufferSlots = Opts.BufferSlots;
  const dsl::RemapStmt *Remap = Algo->Remap;
  bool AutoRemap = Remap && Remap->TheForm == dsl::RemapStmt::Form::Auto;
  if (AutoRemap) {
    std::optional<std::vector<int32_t>> Placement =
        sched::placeAuto(*Algo, Target, InstOpts, Diags);
    if (!Placement)
      return 1;
    InstOpts.Placement = std::move(*Placement);
  }
  std::optional<sched::Schedule> Schedule = sched::instantiate(*Algo, Target, InstOpts, Diags);
  if (!Schedule)
    return 1;
  if (!verify::verifySchedule(*Schedule, Diags))
    return 1;
  if (Remap && !AutoRemap)
    sched::checkRemapLinks(*Schedule, Target, *Remap, Diags);

  bool Written = writeOutput(Opts.Output, Diags, [&](std::ostream &OS) {
    if (Opts.Emit == "schedule")
      sched::printSchedule(*Schedule, OS);
  });
  return Written && !Diags.hasErrors() ? 0 : 1;
}

} // namespace

void addCompileCommand(CLI::App &App, const CommonOptions &Common, int &ExitCode) {
  CLI::App *Cmd = App.add_subcommand(
      "compile", "Instantiate a .ccl algorithm for a target, verify it, optimize it and emit "
                 "a schedule, plan or kernels");
  auto Opts = std::make_shared<CompileOptions>();
  Cmd->add_option("file", Opts->File, ".ccl algorithm")->required();
  CLI::Option *Topo =
      Cmd->add_option("--topo", Opts->Topo, "NCCL topology XML of one node")->check(CLI::ExistingFile);
  Cmd->add_option("--nodes", Opts->Nodes, "Number of identical nodes (with --topo)")
      ->check(CLI::Range(1, 4096))
      ->needs(Topo)
      ->capture_default_str();
  CLI::Option *NRanks = Cmd->add_option("--nranks", Opts->NRanks,
                                        "Compile for N ranks without a topology: one ring in "
                                        "rank order and NCCL's double binary trees")
                            ->check(CLI::Range(1, 65536));
  Topo->excludes(NRanks);
  Cmd->add_option("--root", Opts->Root, "Root rank of broadcast and reduce")->capture_default_str();
  Cmd->add_option("--buffer-slots", Opts->BufferSlots,
                  "Messages each connection buffers (the runtime's slots)")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  Cmd->add_option("--emit", Opts->Emit, "Output format")
      ->check(CLI::IsMember({"schedule"}))
      ->capture_default_str();
  Cmd->add_option("-o,--output", Opts->Output, "Output file ('-' for stdout)")
      ->capture_default_str();
  Cmd->callback([Cmd, Topo, NRanks, Opts, &Common, &ExitCode] {
    if (!*Topo && !*NRanks)
      throw CLI::RequiredError("compile needs a target: --topo FILE or --nranks N");
    ExitCode = compile(*Opts, Common);
  });
}

} // namespace cclc::driver
