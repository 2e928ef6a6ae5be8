//===- Program.h - Encodes a schedule for the plan interpreters -*- C++ -*-===//
//
// Both plan interpreters, the host's and the GPU's, run a rank's schedule as
// the flat arrays of common/Program.h: the GPU kernel cannot walk the
// compiler's containers, and one encoding for both keeps them running the
// same steps. Encoding resolves what the step loop would otherwise decide on
// every round: which buffer a slice names, and which sends pair with the
// receive after them into an exchange.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "compiler/schedule/Schedule.h"

#include "common/Program.h"

#include <cstdint>
#include <vector>

namespace cclc::exec {

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

/// Rank's program of S, which must be verified.
EncodedProgram encodeProgram(const sched::Schedule &S, const kern::ProgramShape &Shape, int Rank);

} // namespace cclc::exec
