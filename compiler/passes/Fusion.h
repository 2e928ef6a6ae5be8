//===- Fusion.h - Fused receive-and-forward steps ---------------*- C++ -*-===//
//
// A rank that receives a slice and then forwards it (the ring's reduce-scatter
// and allgather hops, a tree node passing data up or down) runs faster as one
// fused primitive: the data is sent on as it arrives instead of after a
// round trip through the kernel's step loop. This pass turns
//   recv_reduce X <- P ... send X -> Q   into   recv_reduce_send X <- P -> Q
//   recv X <- P ...        send X -> Q   into   recv_copy_send X <- P -> Q
// when every step in between is a local copy or reduce that does not write X.
// Moving the send up past local steps changes neither any connection's
// message order nor what the send reads, and it moves no send past a
// receive, so it cannot introduce a deadlock. Steps done by a primitive the
// algorithm chose (Step::Primitive) are neither fused nor absorbed.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "plan/Schedule.h"

#include <cstddef>
#include <string>

namespace cclc::passes {

struct FusionResult {
  size_t RecvReduceSend = 0;
  size_t RecvCopySend = 0;
  /// "12 recv_reduce_send, 12 recv_copy_send" for the statistics line.
  std::string summary() const;
};

FusionResult fuseSteps(sched::Schedule &S);

} // namespace cclc::passes
