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
//===----------------------------------------------------------------------===//
#pragma once

#include "plan/Schedule.h"
#include "plan/Diagnostics.h"

namespace cclc::verify {

/// True when S is proved correct; otherwise the reasons are in Diags.
bool verifySchedule(const sched::Schedule &S, DiagnosticEngine &Diags);

} // namespace cclc::verify
