//===- StableSends.h - Which sends a receiver may read in place -*- C++ -*-===//
//
// Where the receiver of a message maps its sender's buffer, the sender may
// leave a large message where it lies and post only where it is
// (host::Outbox::sendReference), provided nothing overwrites it before the
// receiver has read it. This pass marks each call of a rank's channel that
// sends from its buffers with the calls of the collective it may do so in
// (kern::StableOutOfPlace, kern::StableInPlace): those where the first later
// step of the rank to write the sent slice is none, or is a receive of a
// message from the very reader that the reader sends in a later step than
// the one taking the sent message. The reader runs its steps in order, so it
// has read the message before it sends the one that overwrites it. In place,
// the halving-doubling allreduce sends in its reduce-scatter the half that
// comes back from the same peer in its allgather: read in place, the call
// moves half the bytes it would through the FIFOs.
//
// Later rounds of a call work on other elements, and other channels on other
// chunks, so one channel's steps decide. The first write after each send is
// found in one backward walk over the channel that keeps, per chunk, the next
// step writing it: linear in the slices' sizes, so marking a large ring costs
// no more than lowering it.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "plan/MessageMatch.h"
#include "plan/Program.h"

#include <vector>

namespace cclc::plan {

/// Sets the Stable bits of Calls, the lowered steps of channel Channel of
/// Rank in the schedule whose messages Match pairs.
void markStableSends(std::vector<LoweredStep> &Calls, int Rank, int Channel,
                     const MessageMatch &Match);

} // namespace cclc::plan
