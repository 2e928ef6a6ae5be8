//===- Pipeline.cpp - The optimization passes, in order -------------------===//

#include "compiler/passes/Pipeline.h"
#include "compiler/passes/ChannelParallel.h"
#include "compiler/passes/Chunking.h"
#include "compiler/passes/Fusion.h"
#include "compiler/passes/ProtocolSelection.h"
#include "compiler/emit/ScheduleText.h"
#include "plan/CopyElision.h"
#include "plan/CopyFolding.h"
#include "plan/Verifier.h"

#include <algorithm>
#include <functional>
#include <optional>
#include <ostream>

namespace cclc::passes {

namespace {

/// Runs one pass: its statistics line, or nullopt after a diagnostic.
using PassFn = std::function<std::optional<std::string>(sched::Schedule &, const PipelineOptions &,
                                                        DiagnosticEngine &)>;

struct Pass {
  std::string Name;
  PassFn Run;
};

/// Runs Apply when Option's Value is at most Limit; reports it otherwise.
template <typename Fn>
std::optional<std::string> ifWithin(const sched::Schedule &S, DiagnosticEngine &Diags,
                                    const std::string &Option, int32_t Value, int32_t Limit,
                                    Fn Apply) {
  if (Value <= Limit)
    return Apply();
  Diags.error(SourceLoc{}, Option + " " + std::to_string(Value) + " is too large for '" +
                               S.Algorithm + "' on " + std::to_string(S.NRanks) +
                               (S.NRanks == 1 ? " rank" : " ranks") + " (at most " +
                               std::to_string(Limit) + ")");
  return std::nullopt;
}

const std::vector<Pass> &passes() {
  static const std::vector<Pass> List = {
      {"channel-parallel",
       [](sched::Schedule &S, const PipelineOptions &Opts, DiagnosticEngine &Diags) {
         return ifWithin(S, Diags, "--channels", Opts.Channels, maxParallelChannels(S),
                         [&] { return parallelizeChannels(S, Opts.Channels).summary(); });
       }},
      {"copy-elision",
       [](sched::Schedule &S, const PipelineOptions &, DiagnosticEngine &)
           -> std::optional<std::string> { return plan::elideCopies(S).summary(); }},
      {"chunking",
       [](sched::Schedule &S, const PipelineOptions &Opts, DiagnosticEngine &Diags) {
         return ifWithin(S, Diags, "--chunks-factor", Opts.ChunksFactor, maxChunkingFactor(S),
                         [&] {
                           // Pipelining plans stages over every rank's program.
                           if (Opts.ChunksFactor != 1)
                             sched::expandRotation(S);
                           return chunkSchedule(S, Opts.ChunksFactor).summary();
                         });
       }},
      {"fusion",
       [](sched::Schedule &S, const PipelineOptions &,
          DiagnosticEngine &) -> std::optional<std::string> { return fuseSteps(S).summary(); }},
      {"copy-folding",
       [](sched::Schedule &S, const PipelineOptions &, DiagnosticEngine &)
           -> std::optional<std::string> { return plan::foldCopies(S).summary(); }},
      {"protocol",
       [](sched::Schedule &S, const PipelineOptions &Opts, DiagnosticEngine &)
           -> std::optional<std::string> { return selectProtocol(S, Opts.Proto).summary(); }},
  };
  return List;
}

bool listed(const std::vector<std::string> &Names, const std::string &Name) {
  return std::find(Names.begin(), Names.end(), Name) != Names.end();
}

} // namespace

std::vector<std::string> passNames() {
  std::vector<std::string> Names;
  for (const Pass &P : passes())
    Names.push_back(P.Name);
  return Names;
}

bool runPipeline(sched::Schedule &S, const PipelineOptions &Options, std::ostream &Log,
                 DiagnosticEngine &Diags) {
  for (const Pass &P : passes()) {
    if (listed(Options.Disabled, P.Name))
      continue;
    std::optional<std::string> Stats = P.Run(S, Options, Diags);
    if (!Stats)
      return false;
    if (Options.Stats)
      Log << "stats: " << P.Name << ": " << *Stats << '\n';
    if (listed(Options.PrintAfter, P.Name) || listed(Options.PrintAfter, "all")) {
      Log << "*** schedule after " << P.Name << " ***\n";
      sched::expandRotation(S);
      sched::printSchedule(S, Log);
    }
    if (Options.VerifyEach && !verify::verifySchedule(S, Diags)) {
      Diags.note(SourceLoc{}, "the schedule fails verification after pass '" + P.Name + "'");
      return false;
    }
  }
  return true;
}

} // namespace cclc::passes
