//===- Verifier.h - Proves an instantiated schedule correct -----*- C++ -*-===//
//
// Runs the schedule symbolically, chunk by chunk, under the execution model of
// Schedule.h (per rank and channel in program order; a bounded FIFO of
// BufferSlots messages per sender, receiver and channel; WithNext groups run
// together), moving descriptions of data (Contents.h) instead of data. It
// proves that:
//
//  - every peer is a rank other than the sender, every slice lies inside its
//    buffer and nothing writes the read-only input;
//  - the slices of a WithNext group's sends and receives are identical or
//    disjoint (an exchange reads its send slice before the receive lands);
//  - every send meets exactly one receive of the same size, in FIFO order,
//    and no rank blocks forever (a deadlock is reported with its cycle of
//    waiting ranks);
//  - nothing reads output or scratch before data arrived there, nor touches a
//    chunk another channel of the same rank writes (channels run unordered);
//  - no reduction counts a rank twice or combines different input chunks;
//  - at the end, every output chunk holds what the collective promises
//    (Postcondition.h).
//
// Every failure is an error at the .ccl statement of the step responsible,
// naming its rank, channel and step, with a note at the other step involved.
// A wrong chunk is reported once, where it went wrong: its descendants are
// poisoned rather than reported again.
//
// A schedule that is the image of one rank's program under a symmetry (a ring
// rotated, a butterfly's bits flipped: Symmetry.h) is first run at that rank
// alone, every message from a peer taken as the image of the rank's own. Its
// cost is one rank's, not n ranks'. Only when that run fails is the schedule
// run rank by rank, which reports what is wrong (or, for a rotated schedule
// too large to expand, the run at one rank reports).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "plan/Schedule.h"
#include "plan/Diagnostics.h"

namespace cclc::verify {

/// How a schedule was proved: rank by rank, or at one rank alone under a
/// symmetry (Symmetry.h) of every rank's program.
enum class ProofKind : uint8_t { Exhaustive, Rotation, Xor };

/// "every rank's program run", "one rank's program run under a rotation of
/// the ranks" or "... under a flip of rank bits", for --stats.
const char *proofName(ProofKind Proof);

struct VerifyOptions {
  /// Try a symmetry first. Off, every schedule is run rank by rank; the
  /// verdict is the same either way, only the time differs.
  bool UseSymmetry = true;
  /// A rotated schedule (sched::Rotation) whose proof at rank 0 fails is
  /// expanded to every rank to report what that run reports, when its ranks
  /// hold at most this many steps; a larger one is reported from rank 0's
  /// run (the messages name rank 0's steps, and a deadlock rank 0's wait).
  int64_t ReportSteps = int64_t(1) << 24;
};

/// True when S is proved correct; otherwise the reasons are in Diags. Proof,
/// when given, says how the verdict was reached.
bool verifySchedule(const sched::Schedule &S, DiagnosticEngine &Diags,
                    const VerifyOptions &Options = {}, ProofKind *Proof = nullptr);

} // namespace cclc::verify
