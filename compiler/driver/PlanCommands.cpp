//===- PlanCommands.cpp - cclc plan-check and cclc import-msccl -----------===//
//
// Both read a schedule that cclc did not just compile (a plan the runtime
// will load, an MSCCL-IR algorithm), check every field, prove it with the
// verifier as `compile` does, and write it in any emit format.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"
#include "InputOutput.h"

#include "compiler/import/MscclImport.h"
#include "plan/PlanJson.h"
#include "plan/Verifier.h"

#include <CLI/CLI.hpp>

namespace cclc::driver {

namespace {

struct ReadOptions {
  std::string File;
  std::string Emit = "schedule";
  std::string Output = "-";
};

using Reader = std::optional<plan::Plan> (*)(uint32_t, SourceManager &, DiagnosticEngine &);

int readVerifyEmit(const ReadOptions &Opts, const CommonOptions &Common, Reader Read) {
  SourceManager SM;
  DiagnosticEngine Diags(SM);
  configure(Diags, Common);
  std::optional<uint32_t> Id = loadSource(SM, Diags, Opts.File);
  std::optional<plan::Plan> Plan = Id ? Read(*Id, SM, Diags) : std::nullopt;
  if (!Plan || !verify::verifySchedule(Plan->Sched, Diags))
    return 1;
  // A rotated plan is proved and rewritten as rank 0's program and its
  // rotation; the other formats show every rank.
  if (Opts.Emit != "json")
    sched::expandRotation(Plan->Sched);
  if (Plan->Info.Generator.empty())
    Plan->Info.Generator = generatorName();
  bool Written = writeOutput(Opts.Output, Diags, [&](std::ostream &OS) {
    emitSchedule(Plan->Sched, Opts.Emit, Plan->Info, OS, Diags);
  });
  return Written && !Diags.hasErrors() ? 0 : 1;
}

void addReadCommand(CLI::App &App, const CommonOptions &Common, int &ExitCode, const char *Name,
                    const char *Help, const char *FileHelp, Reader Read) {
  CLI::App *Cmd = App.add_subcommand(Name, Help);
  auto Opts = std::make_shared<ReadOptions>();
  Cmd->add_option("file", Opts->File, FileHelp)->required();
  Cmd->add_option("--emit", Opts->Emit, "Output format")
      ->check(CLI::IsMember(scheduleFormats()))
      ->capture_default_str();
  Cmd->add_option("-o,--output", Opts->Output, "Output file ('-' for stdout)")
      ->capture_default_str();
  Cmd->callback([Opts, &Common, &ExitCode, Read] { ExitCode = readVerifyEmit(*Opts, Common, Read); });
}

} // namespace

void addPlanCommands(CLI::App &App, const CommonOptions &Common, int &ExitCode) {
  addReadCommand(App, Common, ExitCode, "plan-check",
                 "Load a plan (.json) as the runtime does, check every field, verify the "
                 "schedule and print it",
                 "plan file written by 'cclc compile --emit=json'",
                 [](uint32_t FileId, SourceManager &SM, DiagnosticEngine &Diags) {
                   plan::ReadOptions Options;
                   Options.KeepRotation = true;
                   return plan::readPlanFile(FileId, SM, Diags, Options);
                 });
  addReadCommand(App, Common, ExitCode, "import-msccl",
                 "Import an MSCCL-IR algorithm (.xml, as msccl-tools, TACCL or "
                 "'cclc compile --emit=msccl-xml' write it), verify it and emit it in any "
                 "format (--emit=json gives a plan the runtime loads)",
                 "MSCCL-IR XML file", importer::readMscclXml);
}

} // namespace cclc::driver
