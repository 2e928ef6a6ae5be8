//===- CopyElision.h - Smaller input copies -------------------------------===//
//
// Most algorithms start with copy(input, output) and then work in output.
// Until a chunk of output is first written it holds the input's chunk, so a
// step that reads it there (a send, a local copy or reduce) can read input
// instead; and where the chunk's first write replaces it whole (a receive,
// not a reduction), nothing needs the copy of that chunk. The halving-
// doubling and butterfly allreduces send half of their buffer in their
// first round and later receive it reduced: half of their copy goes, which
// at large sizes is a sixth of the memory traffic of two ranks.
//
// A copy is cut only where that halves it at least, so that a ring (which
// saves one chunk in n, at the cost of cutting its copy in two) keeps its
// copy whole; in a rotated schedule (sched::Rotation) only where every run
// left is one chunk or the whole region, as rank 0's program must stay a
// rotation of every rank's. Only copies that keep chunk positions
// (input[c] -> output[c], in schedules whose input and output have the same
// units) and run as the default primitive are cut, and reads move to input
// only for the chunks of a copy that is cut.
//
// The compiler runs it as a pass; it lives here because the runtime's own
// rings (RingSchedules.h) apply it too, as the compiled rings have it.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "plan/Schedule.h"

#include <cstddef>
#include <string>

namespace cclc::plan {

struct CopyElisionResult {
  size_t ChunksBefore = 0; ///< Chunks the input copies moved.
  size_t ChunksAfter = 0;
  size_t ReadsMoved = 0; ///< Steps that now read input instead of output.
  /// "copies 16 -> 8 chunks, 4 reads from input" for the statistics line.
  std::string summary() const;
};

CopyElisionResult elideCopies(sched::Schedule &S);

/// Whether Rank's program of S computes the same when its input is its
/// output (an in-place call): it reads no input chunk after writing the
/// output chunk over it, other than by copying the input there (which in
/// place copies a chunk onto itself). The runtime then runs such a call
/// without first copying the input aside. Schedules whose input and output
/// differ in units (allgather, reduce-scatter) never qualify: their
/// in-place buffers overlap without coinciding.
bool runsInPlace(const sched::Schedule &S, int32_t Rank);

} // namespace cclc::plan
