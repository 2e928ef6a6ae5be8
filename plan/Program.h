//===- Program.h - From schedule steps to primitive calls -------*- C++ -*-===//
//
// The one lowering from a schedule to what executes it. Every executor runs
// a rank's channel as a sequence of primitive calls: the host and GPU plan
// interpreters walk them as the flat arrays of common/Program.h, and the
// kernel generator prints them as code. Lowering decides, once for all of
// them, which steps become which call: one call per step, except that a send
// which runs together with the receive after it (WithNext) becomes one
// exchange, which the primitives perform in whichever order the two peers
// allow. The verifier admits no other WithNext group, so every verified
// schedule lowers.
//
// Encoding then resolves what the interpreters' step loop would otherwise
// decide on every round: the program's shape (grid and buffer units), each
// channel's range of steps, and which sends a receiver may read in place.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "plan/MessageMatch.h"
#include "plan/Schedule.h"

#include "common/Program.h"

#include <cstdint>
#include <set>
#include <string>
#include <tuple>
#include <vector>

namespace cclc::plan {

/// One primitive call: the encoded step, and what only the kernel generator
/// needs (the primitive the algorithm named and the .ccl statement).
struct LoweredStep {
  kern::ProgramStep Call;
  /// The template-library primitive the algorithm chose; empty for the
  /// effect's own.
  std::string Primitive;
  SourceLoc Loc;
  /// The schedule step it lowers; for an exchange, its send, whose receive
  /// is the next.
  int32_t Index = 0;
};

/// The calls of one rank's channel, in program order. Steps must be
/// verified (the verifier rejects groups that are not exchanges).
std::vector<LoweredStep> lowerChannel(const std::vector<sched::Step> &Steps);

/// True when Steps[I] and Steps[I + 1] form an exchange: a send that runs
/// together with a plain or reducing receive, and nothing more.
bool startsExchange(const std::vector<sched::Step> &Steps, size_t I);

/// True when Steps[I] and Steps[I + 1] are a send that runs together with
/// a receive, and nothing more: an exchange, or a send before a
/// recv_reduce_copy, which lowering keeps as two calls, the send first. A
/// send never waits for its receiver to receive (a verified schedule leaves
/// it a free slot), so the send and the receive after it cannot deadlock
/// whichever the peer does first.
bool sendsWithReceive(const std::vector<sched::Step> &Steps, size_t I);

/// One rank's program in host memory; copy the arrays to run it elsewhere.
struct EncodedProgram {
  std::vector<kern::ProgramStep> Steps;
  /// NChannels + 1 entries: channel C's steps are [ChannelBegin[C], ChannelBegin[C + 1]).
  std::vector<uint32_t> ChannelBegin;
  kern::ProgramShape Shape;

  /// The program as the host interpreter addresses it.
  kern::ProgramView view() const { return {Steps.data(), ChannelBegin.data(), Shape}; }
};

/// The shape of S. Its MaxSliceChunks is the largest message (the most chunks
/// a send or receive moves); local copies do not count, since they never pass
/// through a slot. Every executor of S must use this shape, or the ranks cut
/// rounds differently and their messages do not match.
kern::ProgramShape scheduleShape(const sched::Schedule &S);
/// Widens Shape, made for S, to hold step St: its message and its scratch.
/// A reader that never holds every step builds the shape with it.
void widenShape(kern::ProgramShape &Shape, const sched::Step &St, const sched::Schedule &S);

/// (sender, receiver, channel) for every message stream of a schedule.
using LinkSet = std::set<std::tuple<int, int, int>>;

/// Every stream S's steps send or receive on.
LinkSet linksOf(const sched::Schedule &S);
/// Adds the streams that step St of Rank's channel Channel uses.
void addLinks(LinkSet &Links, int Rank, int Channel, const sched::Step &St);

/// Rank's program of S, which must be verified, with the sends its
/// receivers may read in place marked (plan/StableSends.h); Match pairs S's
/// messages.
EncodedProgram encodeProgram(const sched::Schedule &S, const kern::ProgramShape &Shape, int Rank,
                             const MessageMatch &Match);

} // namespace cclc::plan
