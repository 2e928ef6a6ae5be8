//===- Postcondition.h - What each collective leaves in output --*- C++ -*-===//
//
// The end state the verifier proves, per collective, stated for one output
// chunk in the terms of Contents.h: which input chunk's data it holds and of
// which ranks. Buffers are laid out as Schedule.h's bufferUnits says: unit u
// of a multi-unit buffer is chunks [u * chunksPerUnit, (u + 1) * chunksPerUnit).
//
//   allreduce       every rank's output[c]: input[c] of all ranks
//   reduce          root's output[c]: input[c] of all ranks (others: anything)
//   broadcast       every rank's output[c]: input[c] of the root
//   allgather       output unit u, chunk k: input[k] of rank u
//   reduce_scatter  rank r's output[k]: input unit r, chunk k, of all ranks
//   alltoall        rank r's output unit u, chunk k: input unit r, chunk k, of rank u
//
//===----------------------------------------------------------------------===//
#pragma once

#include "compiler/schedule/Schedule.h"

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
