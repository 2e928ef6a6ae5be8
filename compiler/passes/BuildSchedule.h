//===- BuildSchedule.h - From a checked algorithm to a schedule -*- C++ -*-===//
//
// The compiler's main path after the front end, shared by `cclc compile` and
// the runtime (which compiles its fallback algorithms in process): place
// (for `remap auto`), instantiate, verify, run the pass pipeline and verify
// again.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "compiler/passes/Pipeline.h"
#include "compiler/schedule/Schedule.h"
#include "compiler/schedule/Target.h"
#include "dsl/AST.h"
#include "dsl/Diagnostics.h"

#include <iosfwd>
#include <optional>

namespace cclc::passes {

struct BuildOptions {
  int32_t Root = 0;
  /// Messages each connection buffers (the runtime's slots).
  int32_t BufferSlots = 2;
  /// Channels for flat algorithms; 0 means as many as the target has rings.
  int32_t Channels = 0;
  /// The pipeline's options; its Channels is replaced by the one above.
  PipelineOptions Pipeline;
};

/// Places, instantiates, verifies and optimizes Algo for Target, printing what
/// the passes are asked to print to Log. Nullopt after a diagnostic.
std::optional<sched::Schedule> buildSchedule(const dsl::Algorithm &Algo,
                                             const sched::Target &Target,
                                             const BuildOptions &Options, std::ostream &Log,
                                             DiagnosticEngine &Diags);

} // namespace cclc::passes
