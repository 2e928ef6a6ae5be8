//===- CompileCommand.cpp - cclc compile ----------------------------------===//
//
// The compiler's main path: check the algorithm, build the target (a searched
// and connected topology, or a bare rank count), instantiate, verify, run the
// pass pipeline and emit the requested format.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"
#include "InputOutput.h"

#include "compiler/cost/Explain.h"
#include "compiler/passes/Pipeline.h"
#include "compiler/schedule/Instantiate.h"
#include "compiler/schedule/Placement.h"
#include "compiler/topology/Machine.h"
#include "compiler/verify/Verifier.h"
#include "dsl/Frontend.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <filesystem>
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
  /// Channels for flat algorithms; 0 means as many as the target has rings.
  int Channels = 0;
  passes::PipelineOptions Pipeline;
  /// Print the cost model's predictions and compare with the library.
  bool Explain = false;
  /// Where --explain finds the library algorithms to compare with.
  std::string Algorithms = CCLC_ALGORITHMS_DIR;
};

/// Places, instantiates, verifies and optimizes Algo for Target, printing what
/// the passes are asked to print to Log. Nullopt after a diagnostic.
std::optional<sched::Schedule> buildSchedule(const dsl::Algorithm &Algo, const sched::Target &Target,
                                             const CompileOptions &Opts, std::ostream &Log,
                                             DiagnosticEngine &Diags) {
  sched::InstantiateOptions InstOpts;
  InstOpts.Root = Opts.Root;
  InstOpts.BufferSlots = Opts.BufferSlots;
  const dsl::RemapStmt *Remap = Algo.Remap;
  bool AutoRemap = Remap && Remap->TheForm == dsl::RemapStmt::Form::Auto;
  if (AutoRemap) {
    std::optional<std::vector<int32_t>> Placement =
        sched::placeAuto(Algo, Target, InstOpts, Diags);
    if (!Placement)
      return std::nullopt;
    InstOpts.Placement = std::move(*Placement);
  }
  std::optional<sched::Schedule> Schedule = sched::instantiate(Algo, Target, InstOpts, Diags);
  if (!Schedule)
    return std::nullopt;
  if (!verify::verifySchedule(*Schedule, Diags))
    return std::nullopt;
  if (Remap && !AutoRemap)
    sched::checkRemapLinks(*Schedule, Target, *Remap, Diags);

  passes::PipelineOptions Pipeline = Opts.Pipeline;
  Pipeline.Channels =
      Opts.Channels ? Opts.Channels : std::max(1, static_cast<int>(Target.Rings.size()));
  if (!passes::runPipeline(*Schedule, Pipeline, Log, Diags))
    return std::nullopt;
  if (!verify::verifySchedule(*Schedule, Diags)) {
    Diags.note(SourceLoc{}, "the schedule fails verification after the optimization passes; "
                            "--disable-pass=NAME and --print-after=NAME find the pass at fault");
    return std::nullopt;
  }
  return Schedule;
}

/// --explain: the cost model's table for S, then S against the library's
/// algorithms of the same collective on the same target (those that compile
/// for it); the sizes where S wins become the plan's size window.
void explain(const sched::Schedule &S, const sched::Target &Target, const CompileOptions &Opts,
             SourceManager &SM, emit::PlanInfo &Info) {
  cost::CostModel Model(Target);
  std::vector<uint64_t> Sizes = cost::explainSizes();
  std::vector<cost::AlgorithmCurve> Curves = {{S.Algorithm, Model.predict(S, Sizes)}};
  cost::printPredictions(S.Algorithm, Target.Description, Curves[0].Points, std::cout);

  std::vector<std::filesystem::path> Library;
  std::error_code Error;
  for (const auto &Entry : std::filesystem::directory_iterator(Opts.Algorithms, Error))
    if (Entry.path().extension() == ".ccl")
      Library.push_back(Entry.path());
  std::sort(Library.begin(), Library.end());
  // Library algorithms that do not fit this target are left out silently, and
  // the user's pass printing is for the compiled algorithm only.
  DiagnosticEngine Quiet(SM);
  Quiet.setSilent(true);
  CompileOptions LibraryOpts = Opts;
  LibraryOpts.Pipeline.PrintAfter.clear();
  LibraryOpts.Pipeline.Stats = false;
  std::ostream Discard(nullptr);
  dsl::OperationCatalog Ops;
  for (const std::filesystem::path &File : Library) {
    std::string LoadError;
    std::optional<uint32_t> Id = SM.loadFile(File.string(), LoadError);
    std::unique_ptr<dsl::Algorithm> Algo = Id ? dsl::parseAndCheck(*Id, Ops, Quiet) : nullptr;
    if (!Algo || Algo->Collective != S.Collective || Algo->Name == S.Algorithm)
      continue;
    if (std::optional<sched::Schedule> Other = buildSchedule(*Algo, Target, LibraryOpts, Discard, Quiet))
      Curves.push_back({Other->Algorithm, Model.predict(*Other, Sizes)});
  }
  if (Curves.size() == 1) {
    std::cout << "compare: no other " << dsl::collectiveName(S.Collective)
              << " algorithm in " << Opts.Algorithms << " compiles for this target\n";
    return;
  }
  cost::printComparison(Curves, std::cout);
  std::optional<cost::SizeWindow> Window = cost::fastestWindow(Curves, 0);
  if (!Window) {
    std::cout << "window: " << S.Algorithm << " is never the fastest; the plan keeps every size\n";
    return;
  }
  Info.MinBytes = Window->MinBytes;
  Info.MaxBytes = Window->MaxBytes;
  std::cout << "window: " << S.Algorithm << " is the fastest "
            << cost::describeWindow(*Window) << "\n";
}

int compile(const CompileOptions &Opts, const CommonOptions &Common) {
  SourceManager SM;
  DiagnosticEngine Diags(SM);
  configure(Diags, Common);
  std::optional<uint32_t> Id = loadSource(SM, Diags, Opts.File);
  if (!Id)
    return 1;
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

  std::optional<sched::Schedule> Schedule = buildSchedule(*Algo, Target, Opts, std::cerr, Diags);
  if (!Schedule)
    return 1;

  emit::PlanInfo Info;
  Info.Source = Opts.File;
  Info.Target = Target.Description;
  Info.Generator = generatorName();
  if (Opts.Explain)
    explain(*Schedule, Target, Opts, SM, Info);
  bool Written = writeOutput(Opts.Output, Diags, [&](std::ostream &OS) {
    emitSchedule(*Schedule, Opts.Emit, Info, OS, Diags);
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
      ->check(CLI::IsMember(scheduleFormats()))
      ->capture_default_str();
  Cmd->add_option("-o,--output", Opts->Output, "Output file ('-' for stdout)")
      ->capture_default_str();
  Cmd->add_option("--chunks-factor", Opts->Pipeline.ChunksFactor,
                  "Split every chunk into F sub-chunks and pipeline the steps over them")
      ->check(CLI::Range(1, 1 << 16))
      ->capture_default_str();
  Cmd->add_option("--channels", Opts->Channels,
                  "Channels a flat algorithm runs on (default: the target's ring channels)")
      ->check(CLI::Range(1, 1024));
  std::vector<std::string> PassNames = passes::passNames();
  Cmd->add_option("--disable-pass", Opts->Pipeline.Disabled, "Do not run pass NAME")
      ->check(CLI::IsMember(PassNames));
  PassNames.push_back("all");
  Cmd->add_option("--print-after", Opts->Pipeline.PrintAfter,
                  "Print the schedule to stderr after pass NAME ('all': after every pass)")
      ->check(CLI::IsMember(PassNames));
  Cmd->add_flag("--verify-each", Opts->Pipeline.VerifyEach,
                "Verify the schedule after every pass, not only at the end");
  Cmd->add_flag("--explain", Opts->Explain,
                "Print predicted time and bandwidth per message size, compare with the "
                "library's algorithms of the same collective, and record in the plan the "
                "sizes where this algorithm is the fastest");
  Cmd->add_option("--algorithms", Opts->Algorithms,
                  "Library algorithms --explain compares with")
      ->capture_default_str();
  Cmd->add_flag("--stats", Opts->Pipeline.Stats, "Print what every pass did to stderr");
  Cmd->callback([Cmd, Topo, NRanks, Opts, &Common, &ExitCode] {
    if (!*Topo && !*NRanks)
      throw CLI::RequiredError("compile needs a target: --topo FILE or --nranks N");
    ExitCode = compile(*Opts, Common);
  });
}

} // namespace cclc::driver
