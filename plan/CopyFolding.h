//===- CopyFolding.h - Copies folded into the steps that use them -*- C++ -*-===//
//
// Algorithms that must leave their input intact start by copying it to where
// they work (`copy(input, scratch)`, `copy(input, output)`), then send from
// the copy or receive-reduce into it. Each such chunk is passed over twice:
// the copy reads the source and writes the chunk, and the step that uses it
// reads it again. This pass folds the copy into its use:
//
//   copy X -> A ... recv_reduce A' <- P     into  recv_reduce_copy A' <- P + X'
//   copy X -> A ... send A' -> P            into  send X' -> P
//
// where A' is part of A and X' the part of X it was copied from: the
// receive writes A' = X' (op) message in one pass (MSCCL's rrc), and the
// send reads the source itself, which a receiver on the same host may then
// read in place. The copy keeps the rest of A. A fold needs that no step in
// between touches A' or writes X'; a send's, that A' is scratch which
// nothing touches after it (output holds the result, and keeps its copy).
// And where a receive that combines into scratch A' is the last to write it
// before the next step to touch A' copies it out, with nothing touching it
// after (`copy(scratch[rank], output)`), the receive writes the result where
// that copy would have put it:
//
//   recv_reduce_copy A' <- P + X' ... copy A' -> B   into  recv_reduce_copy B <- P + X'
//   recv_reduce A' <- P ... copy A' -> B             into  recv_reduce_copy B <- P + A'
//
// when no step in between touches B. At 2 ranks the recursive-halving
// reduce-scatter then reads each rank's input once, its peer's half in
// place and its own half combined straight into output, where it copied all
// of its input to scratch, combined half of it there and copied that out.
//
// Every check counts an input chunk as the output chunk it is in place, so
// folds are sound out of place and in place. Only steps of the default
// primitives are folded, and only in schedules that hold every rank's
// program (not Schedule::Rotated), whose copies may be cut anywhere. A
// receive that runs with the send before it stays with it: lowering keeps
// such a pair as the send, then the receive (plan::sendsWithReceive).
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

struct CopyFoldingResult {
  size_t ReduceCopies = 0; ///< recv_reduce steps that became recv_reduce_copy.
  size_t Forwarded = 0;    ///< Of those, the ones that write a copy-out's destination.
  size_t Sends = 0;        ///< Sends that now read the copy's source.
  /// "4 recv_reduce_copy (2 into the copy-out's destination), 2 sends from
  /// the source" for the statistics line.
  std::string summary() const;
};

CopyFoldingResult foldCopies(sched::Schedule &S);

} // namespace cclc::plan
