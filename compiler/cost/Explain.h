//===- Explain.h - What the cost model says, for people ---------*- C++ -*-===//
//
// `cclc compile --explain` prints the cost model's predictions for the
// compiled schedule (time, algorithm and bus bandwidth, chunk factor and
// protocol per message size, in nccl-tests' units), then the same collective's library
// algorithms side by side on the same target, where they cross over, and the
// message-size window in which the compiled algorithm is the best choice -
// the window the plan records for the runtime's choice by size.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "compiler/cost/CostModel.h"

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

namespace cclc::cost {

/// One algorithm's predictions over the same sizes as the others'.
struct AlgorithmCurve {
  std::string Name;
  std::vector<Prediction> Points;
};

/// The table for one schedule, headed by its name and target.
void printPredictions(const std::string &Algorithm, const std::string &Target,
                      const std::vector<Prediction> &Points, std::ostream &OS);

/// Time per size for every curve, the fastest per size, and the crossover
/// line ("crossover: a fastest below 64 KiB, b from 64 KiB").
void printComparison(const std::vector<AlgorithmCurve> &Curves, std::ostream &OS);

/// Message sizes [MinBytes, MaxBytes] (no upper bound when MaxBytes is
/// empty); a window ends just below the next tabulated size where another
/// algorithm wins.
struct SizeWindow {
  uint64_t MinBytes = 0;
  std::optional<uint64_t> MaxBytes;
};

/// "below 64 KiB", "from 256 KiB up", "from 64 KiB below 256 KiB" or "at
/// every size".
std::string describeWindow(const SizeWindow &W);

/// One way to run an algorithm: on Channels channels, every chunk split in
/// ChunkFactor, its messages by Proto, with its predicted time at each size.
struct Variant {
  int32_t Channels = 1;
  int32_t ChunkFactor = 1;
  sched::Protocol Proto = sched::Protocol::Simple;
  std::vector<Prediction> Points;
};

/// Tabulated sizes inside W: the sizes a window's choices are judged at.
bool inWindow(const SizeWindow &W, uint64_t Bytes);

/// The variant a plan for window W runs: the one whose worst slowdown, over
/// the fastest variant at each tabulated size inside W, is least. Variants
/// within 1% of it count as equal and go to the fewest channels, then the
/// smallest factor, then the simple protocol: a channel is a thread block on
/// a GPU and a thread on the host, which the rest of the job would rather
/// have, and LL writes twice the bytes. All variants share the sizes.
size_t chooseVariant(const std::vector<Variant> &Variants, const SizeWindow &W);

/// Every variant's worst slowdown in W, one row per channel count and
/// protocol and one column per chunk factor, then the choice.
void printVariants(const std::vector<Variant> &Variants, size_t Chosen, const SizeWindow &W,
                   std::ostream &OS);

/// Where Curves[Index] is the fastest: from the first size it wins to the
/// last, unbounded at either end when it wins there. Nullopt when it never
/// wins. Ties go to the curve listed first.
std::optional<SizeWindow> fastestWindow(const std::vector<AlgorithmCurve> &Curves, size_t Index);

} // namespace cclc::cost
