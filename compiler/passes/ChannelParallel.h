//===- ChannelParallel.h - Flat algorithms on every channel -----*- C++ -*-===//
//
// Ring and tree algorithms run once per channel the topology search found,
// each channel on its share of the data. A flat algorithm (one written
// without `on ring` / `on tree`) is instantiated on a single channel; this
// pass replicates it on C channels so that it too drives every channel's
// connections at once. Channel h runs the same steps on its own share of
// every unit: chunk g of the single channel becomes chunk
// h * channelChunks + g (see the chunk grid in Schedule.h), so the slices stay
// contiguous and the data each rank ends up with is unchanged.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "plan/Schedule.h"

#include <cstdint>
#include <string>

namespace cclc::passes {

struct ChannelParallelResult {
  int32_t ChannelsBefore = 1;
  int32_t ChannelsAfter = 1;
  /// "1 -> 4 channels" for the statistics line.
  std::string summary() const;
};

/// The most channels S can be replicated on within the chunk grid's index
/// range.
int32_t maxParallelChannels(const sched::Schedule &S);

/// Replicates a flat single-channel schedule on Channels channels
/// (1 <= Channels <= maxParallelChannels(S)); leaves ring and tree schedules,
/// which already have their channels, alone.
ChannelParallelResult parallelizeChannels(sched::Schedule &S, int32_t Channels);

} // namespace cclc::passes
