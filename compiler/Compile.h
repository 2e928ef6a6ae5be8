//===- Compile.h - The compile pipeline -------------------------*- C++ -*-===//
//
// cclc's pipeline, stage by stage (Compile.cpp reads top to bottom in this
// order; `cclc compile` runs it and `--emit=` picks what leaves it):
//
//   check        dsl::parseAndCheck            the .ccl file, diagnosed
//   machine      topo::loadMachine             topology XML -> search -> connect
//   target       buildTarget                   ranks, rings and trees to run on
//   place        inst::placeAuto               `remap auto`: a permutation
//   instantiate  inst::instantiate             the per-rank schedule (plan/), or
//                                              rank 0's and a rotation for rings
//   verify       verify::verifySchedule        the proof (plan/)
//   passes       passes::runPipeline           chunking, channels, fusion, copy elision
//   verify       verify::verifySchedule        again, on what the passes made
//   emit         emit/, codegen/, plan JSON    text, plan, MSCCL-IR, dot, kernels
//
// Stages up to "target" need a topology only when one is given; the rest
// work the same on a bare rank count.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "compiler/passes/Pipeline.h"
#include "compiler/target/Target.h"
#include "compiler/topology/Machine.h"
#include "dsl/AST.h"
#include "plan/Diagnostics.h"
#include "plan/Schedule.h"
#include "plan/Verifier.h"

#include <iosfwd>
#include <memory>
#include <optional>
#include <string>

namespace cclc::compiler {

/// What to compile for: a topology file (times Nodes identical nodes) or,
/// without one, NRanks ranks on a flat machine of Nodes nodes.
struct TargetOptions {
  std::string Topo;
  int Nodes = 1;
  int NRanks = 0;
  /// Price the ranks' work as processes on one host's CPUs (target::CpuCosts)
  /// rather than on GPUs; with NRanks alone.
  bool Cpu = false;
  /// The NCCL knobs given on the command line for the topology search; the
  /// others are read from the environment as NCCL reads them.
  topo::NcclEnvOptions Nccl;
};

/// A target and the machine it points into (none for a bare rank count).
struct BuiltTarget {
  std::unique_ptr<topo::Machine> Machine;
  target::Target Target;
};

/// The machine and target stages. Nullopt after a diagnostic about the
/// topology.
std::optional<BuiltTarget> buildTarget(const TargetOptions &Options, SourceManager &SM,
                                       DiagnosticEngine &Diags);

struct BuildOptions {
  int32_t Root = 0;
  /// Messages each connection buffers (the runtime's slots).
  int32_t BufferSlots = 2;
  /// Channels for flat algorithms; 0 means as many as the target has rings.
  int32_t Channels = 0;
  /// The pipeline's options; its Channels is replaced by the one above.
  passes::PipelineOptions Pipeline;
  /// How the two proofs run (--exhaustive-verify turns symmetries off).
  verify::VerifyOptions Verify;
  /// Instantiate rank 0 alone where every rank runs its program rotated
  /// (inst::InstantiateOptions::RankZeroOnly; only with symmetries on). The
  /// schedule may then be rotated (sched::Rotation): for callers that read
  /// it through plan JSON or expand it.
  bool RankZeroOnly = false;
};

/// The channels the pipeline replicates a flat algorithm on under Options:
/// Options.Channels, or every ring of Target.
int32_t pipelineChannels(const BuildOptions &Options, const target::Target &Target);

/// The place, instantiate and verify stages: Algo as written, for Target.
/// Nullopt after a diagnostic.
std::optional<sched::Schedule> instantiateSchedule(const dsl::Algorithm &Algo,
                                                   const target::Target &Target,
                                                   const BuildOptions &Options,
                                                   DiagnosticEngine &Diags);

/// The passes and verify stages on a schedule instantiateSchedule made,
/// printing what the passes are asked to print to Log. False after a
/// diagnostic. Variants that differ only in channels and chunk factor share
/// one instantiation this way.
bool optimizeSchedule(sched::Schedule &S, const target::Target &Target,
                      const BuildOptions &Options, std::ostream &Log, DiagnosticEngine &Diags);

/// The place, instantiate, verify, passes and verify stages: Algo for Target,
/// printing what the passes are asked to print to Log. Nullopt after a
/// diagnostic.
std::optional<sched::Schedule> buildSchedule(const dsl::Algorithm &Algo,
                                             const target::Target &Target,
                                             const BuildOptions &Options, std::ostream &Log,
                                             DiagnosticEngine &Diags);

} // namespace cclc::compiler
