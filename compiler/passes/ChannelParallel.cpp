//===- ChannelParallel.cpp - Flat algorithms on every channel -------------===//

#include "compiler/passes/ChannelParallel.h"
#include "plan/Assert.h"

#include <algorithm>
#include <climits>

namespace cclc::passes {

using sched::BufferKind;
using sched::Schedule;

std::string ChannelParallelResult::summary() const {
  return std::to_string(ChannelsBefore) + " -> " + std::to_string(ChannelsAfter) + " channels";
}

int32_t maxParallelChannels(const Schedule &S) {
  int32_t Largest = std::max({S.channelChunks(BufferKind::Input),
                              S.channelChunks(BufferKind::Output),
                              S.channelChunks(BufferKind::Scratch), 1});
  return INT32_MAX / Largest;
}

ChannelParallelResult parallelizeChannels(Schedule &S, int32_t Channels) {
  CCLC_ASSERT(Channels >= 1 && Channels <= maxParallelChannels(S),
              "channel count out of range");
  ChannelParallelResult Result;
  Result.ChannelsBefore = Result.ChannelsAfter = S.NChannels;
  if (S.Topology != plan::TopologyKind::None || S.NChannels != 1 || Channels == 1)
    return Result;
  S.NChannels = Channels;
  // Slices a step does not use stay empty at chunk 0.
  auto Shift = [&](sched::Slice &X, int32_t Channel) {
    if (X.Count > 0)
      X.Chunk += Channel * S.channelChunks(X.Buffer);
  };
  for (sched::RankProgram &R : S.Ranks) {
    R.Channels.resize(Channels, R.Channels.front());
    for (int32_t H = 1; H < Channels; ++H)
      for (sched::Step &St : R.Channels[H].Steps) {
        Shift(St.Src, H);
        Shift(St.Dst, H);
      }
  }
  Result.ChannelsAfter = Channels;
  return Result;
}

} // namespace cclc::passes
