//===- Compile.cpp - The compile pipeline ---------------------------------===//
//
// The stages after the front end, in the order Compile.h lists them.
//
//===----------------------------------------------------------------------===//

#include "compiler/Compile.h"
#include "compiler/instantiate/Instantiate.h"
#include "compiler/instantiate/Placement.h"
#include "plan/Limits.h"
#include "plan/Verifier.h"

#include <algorithm>

namespace cclc::compiler {

std::optional<BuiltTarget> buildTarget(const TargetOptions &Options, SourceManager &SM,
                                       DiagnosticEngine &Diags) {
  BuiltTarget Built;
  if (Options.Topo.empty()) {
    if (Options.NRanks % Options.Nodes != 0) {
      Diags.error(SourceLoc{}, "--nranks " + std::to_string(Options.NRanks) +
                                   " is not a multiple of --nodes " +
                                   std::to_string(Options.Nodes) +
                                   "; every node holds as many ranks");
      return std::nullopt;
    }
    if (Options.Cpu && Options.Nodes > 1) {
      Diags.error(SourceLoc{}, "--cpu prices the ranks of one host, and --nodes " +
                                   std::to_string(Options.Nodes) +
                                   " spreads them over several; drop one of the two");
      return std::nullopt;
    }
    Built.Target = Options.Cpu ? target::cpuTarget(Options.NRanks)
                               : target::flatTarget(Options.NRanks, Options.Nodes);
    return Built;
  }
  // machine: read the topology, search it and connect its nodes.
  std::optional<topo::NcclEnv> Env = topo::readNcclEnv(Options.Nccl, Diags);
  if (!Env)
    return std::nullopt;
  std::optional<topo::Machine> Machine =
      topo::loadMachine(Options.Topo, Options.Nodes, *Env, SM, Diags);
  if (!Machine)
    return std::nullopt;
  // A plan holds at most plan::MaxRanks ranks; say so before building more.
  if (Machine->Conn.NRanks > plan::MaxRanks) {
    Diags.error(SourceLoc{}, "--nodes " + std::to_string(Options.Nodes) + " of " +
                                 std::to_string(Machine->Conn.NRanks / Options.Nodes) +
                                 " GPUs each make " + std::to_string(Machine->Conn.NRanks) +
                                 " ranks, more than cclc compiles for (" +
                                 std::to_string(plan::MaxRanks) + ")");
    return std::nullopt;
  }
  Built.Machine = std::make_unique<topo::Machine>(std::move(*Machine));
  // target: the ranks, rings and trees the algorithm runs over.
  std::string Description =
      std::to_string(Built.Machine->Conn.NRanks) + " ranks on " + Options.Topo;
  if (Options.Nodes > 1)
    Description += " x " + std::to_string(Options.Nodes) + " nodes";
  Built.Target = target::topologyTarget(Built.Machine->Sys, Built.Machine->Conn,
                                        Built.Machine->ringGraph().BwIntra,
                                        std::move(Description));
  return Built;
}

int32_t pipelineChannels(const BuildOptions &Options, const target::Target &Target) {
  return Options.Channels ? Options.Channels : std::max(1, static_cast<int>(Target.Rings.size()));
}

std::optional<sched::Schedule> instantiateSchedule(const dsl::Algorithm &Algo,
                                                   const target::Target &Target,
                                                   const BuildOptions &Options,
                                                   DiagnosticEngine &Diags) {
  inst::InstantiateOptions InstOpts;
  InstOpts.Root = Options.Root;
  InstOpts.BufferSlots = Options.BufferSlots;
  InstOpts.RankZeroOnly = Options.RankZeroOnly && Options.Verify.UseSymmetry;

  // place: `remap auto` searches for a placement whose pairs have direct links.
  const dsl::RemapStmt *Remap = Algo.Remap;
  bool AutoRemap = Remap && Remap->TheForm == dsl::RemapStmt::Form::Auto;
  if (AutoRemap) {
    std::optional<std::vector<int32_t>> Placement = inst::placeAuto(Algo, Target, InstOpts, Diags);
    if (!Placement)
      return std::nullopt;
    InstOpts.Placement = std::move(*Placement);
  }

  // instantiate: every rank's steps on every channel.
  std::optional<sched::Schedule> Schedule = inst::instantiate(Algo, Target, InstOpts, Diags);
  if (!Schedule)
    return std::nullopt;

  // verify: the algorithm as written.
  if (!verify::verifySchedule(*Schedule, Diags, Options.Verify))
    return std::nullopt;
  if (Remap && !AutoRemap)
    inst::checkRemapLinks(*Schedule, Target, *Remap, Diags);
  return Schedule;
}

bool optimizeSchedule(sched::Schedule &S, const target::Target &Target,
                      const BuildOptions &Options, std::ostream &Log, DiagnosticEngine &Diags) {
  // passes: chunking, channel parallelism, fusion.
  passes::PipelineOptions Pipeline = Options.Pipeline;
  Pipeline.Channels = pipelineChannels(Options, Target);
  if (Pipeline.Stats)
    Log << "stats: instantiate: "
        << (S.Rotated ? "rank 0's program, rotated for every other rank" : "every rank's program")
        << '\n';
  if (!passes::runPipeline(S, Pipeline, Log, Diags))
    return false;

  // verify: what the passes made.
  verify::ProofKind Proof = verify::ProofKind::Exhaustive;
  if (!verify::verifySchedule(S, Diags, Options.Verify, &Proof)) {
    Diags.note(SourceLoc{}, "the schedule fails verification after the optimization passes; "
                            "--disable-pass=NAME and --print-after=NAME find the pass at fault");
    return false;
  }
  if (Pipeline.Stats)
    Log << "stats: verify: " << verify::proofName(Proof) << '\n';
  return true;
}

std::optional<sched::Schedule> buildSchedule(const dsl::Algorithm &Algo,
                                             const target::Target &Target,
                                             const BuildOptions &Options, std::ostream &Log,
                                             DiagnosticEngine &Diags) {
  std::optional<sched::Schedule> Schedule = instantiateSchedule(Algo, Target, Options, Diags);
  if (!Schedule || !optimizeSchedule(*Schedule, Target, Options, Log, Diags))
    return std::nullopt;
  return Schedule;
}

} // namespace cclc::compiler
