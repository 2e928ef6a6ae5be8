//===- Limits.h - The largest values a schedule may carry -------*- C++ -*-===//
//
// Plans and MSCCL-IR files come from anywhere, and the runtime sizes its
// buffers, connections and shared memory from what they say. These bounds are
// checked where such a file is read (plan/PlanJson.cpp,
// compiler/import/MscclImport.cpp) and match what `cclc compile` can write, so
// every plan the compiler makes loads, and a plan that asks for more is
// refused with the field's name before anything is allocated for it.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>

namespace cclc::plan {

/// Ranks of a schedule.
inline constexpr int32_t MaxRanks = 1 << 16;
/// Chunks of one unit (nchannels * chunks_per_channel): chunk grids are int32,
/// and this bound keeps every product inside it.
inline constexpr int32_t MaxGrid = 1 << 16;
/// Channels of a schedule (`cclc compile --channels` gives at most this many).
inline constexpr int32_t MaxChannels = 1024;
/// Channel programs of a schedule, nranks * nchannels.
inline constexpr int64_t MaxRankChannels = int64_t(1) << 20;
/// Messages a connection buffers (`cclc compile --buffer-slots`): the
/// runtime reserves this many slots per (sender, receiver, channel).
inline constexpr int32_t MaxBufferSlots = 64;
/// Steps one rank's program may expand to, on all its channels: a rolled
/// step ("repeat") is cheap to write but not to run.
inline constexpr int64_t MaxRankSteps = int64_t(1) << 24;
/// Steps a whole plan may expand to where a reader expands every rank
/// (`cclc plan-check`); the runtime expands its own rank alone beyond
/// RuntimeProofSteps and needs no such bound.
inline constexpr int64_t MaxPlanSteps = int64_t(1) << 26;
/// Steps of the largest plan the runtime expands for every rank, to prove it
/// again at load; beyond, each rank expands its own program alone and relies
/// on the proof of `cclc compile` (`cclc plan-check` repeats it), since
/// proving takes every rank's steps and memory in proportion.
inline constexpr int64_t RuntimeProofSteps = int64_t(1) << 20;
/// How deeply JSON values may nest in a plan; a plan nests 8 deep.
inline constexpr unsigned MaxJsonDepth = 64;

} // namespace cclc::plan
