//===- Instantiate.h - From a checked algorithm to a schedule ---*- C++ -*-===//
//
// Runs the algorithm's body once per (logical rank, channel) with the target's
// facts bound, evaluating every expression to a concrete value, and records
// the operations as steps. Errors that only show for a concrete target (a
// requirement not met, a peer out of range, a slice past the end of a buffer)
// are diagnosed at the expression responsible, naming the rank and channel.
//
// With RankZeroOnly it first tries rank 0 alone, tracking how each value
// depends on the rank (RankForm.h); where that shows the other ranks' programs
// to be rank 0's rotated, the schedule holds rank 0's program and the
// rotation, and otherwise it starts over with every rank.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "plan/Schedule.h"
#include "compiler/target/Target.h"
#include "dsl/AST.h"
#include "plan/Diagnostics.h"

#include <optional>

namespace cclc::inst {

using sched::Schedule;
using target::Target;

struct InstantiateOptions {
  int32_t Root = 0;
  int32_t BufferSlots = 2;
  /// The logical -> physical placement; empty means "from the algorithm's
  /// remap statement" (or the identity without one). `remap auto` needs the
  /// placement search to fill it in.
  std::vector<int32_t> Placement;
  /// Run rank 0 alone and return a rotated schedule (sched::Rotation) when
  /// the algorithm's text shows that every rank runs rank 0's program
  /// rotated: an allreduce on a flat target, without a remap, whose branches
  /// and loop bounds do not depend on the rank, whose peers are rank 0's
  /// moved one place per rank (`ring.next`, `(rank + k) % nranks`) and whose
  /// slices are whole buffers or single chunks moved a fixed number of
  /// places per rank (RankForm.h). Otherwise every rank runs, as without it.
  bool RankZeroOnly = false;
};

std::optional<Schedule> instantiate(const dsl::Algorithm &Algo, const Target &T,
                                    const InstantiateOptions &Options,
                                    DiagnosticEngine &Diags);

} // namespace cclc::inst
