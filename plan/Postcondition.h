//===- Postcondition.h - What each collective leaves in output --*- C++ -*-===//
//
// The end state the verifier proves, per collective, stated for one output
// chunk in the terms of Contents.h: which input chunk's data it holds and of
// which ranks. Chunks are named by channel h, unit u and piece j as in the
// grid of Schedule.h; output piece (h, u, j) must hold input piece:
//
//   allreduce       every rank: (h, 0, j) of all ranks
//   reduce          the root: (h, 0, j) of all ranks (other ranks: anything)
//   broadcast       every rank: (h, 0, j) of the root
//   allgather       every rank: (h, 0, j) of rank u
//   reduce_scatter  rank r: (h, r, j) of all ranks
//   alltoall        rank r: (h, r, j) of rank u
//
//===----------------------------------------------------------------------===//
#pragma once

#include "plan/Schedule.h"

#include <cstdint>

namespace cclc::verify {

struct OutputExpectation {
  /// False where the collective leaves the chunk unspecified.
  bool Constrained = true;
  /// The input chunk whose data the output chunk holds.
  int32_t Label = 0;
  /// The one rank whose data it is, or -1 for the reduction over all ranks.
  int32_t Rank = -1;
};

OutputExpectation expectedOutput(const sched::Schedule &S, int32_t Rank, int32_t Chunk);

} // namespace cclc::verify
