//===- BuildSchedule.cpp - From a checked algorithm to a schedule ---------===//

#include "compiler/passes/BuildSchedule.h"
#include "compiler/schedule/Instantiate.h"
#include "compiler/schedule/Placement.h"
#include "compiler/verify/Verifier.h"

#include <algorithm>

namespace cclc::passes {

std::optional<sched::Schedule> buildSchedule(const dsl::Algorithm &Algo,
                                             const sched::Target &Target,
                                             const BuildOptions &Options, std::ostream &Log,
                                             DiagnosticEngine &Diags) {
  sched::InstantiateOptions InstOpts;
  InstOpts.Root = Options.Root;
  InstOpts.BufferSlots = Options.BufferSlots;
  const dsl::RemapStmt *Remap = Algo.Remap;
  bool AutoRemap = Remap && Remap->TheForm == dsl::RemapStmt::Form::Auto;
  if (AutoRemap) {
    std::optional<std::vector<int32_t>> Placement = sched::placeAuto(Algo, Target, InstOpts, Diags);
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

  PipelineOptions Pipeline = Options.Pipeline;
  Pipeline.Channels =
      Options.Channels ? Options.Channels : std::max(1, static_cast<int>(Target.Rings.size()));
  if (!runPipeline(*Schedule, Pipeline, Log, Diags))
    return std::nullopt;
  if (!verify::verifySchedule(*Schedule, Diags)) {
    Diags.note(SourceLoc{}, "the schedule fails verification after the optimization passes; "
                            "--disable-pass=NAME and --print-after=NAME find the pass at fault");
    return std::nullopt;
  }
  return Schedule;
}

} // namespace cclc::passes
