//===- Explain.h - What the cost model says, for people ---------*- C++ -*-===//
//
// `cclc compile --explain` prints the cost model's predictions for the
// compiled schedule (time, algorithm and bus bandwidth, chunk factor per
// message size, in nccl-tests' units), then the same collective's library
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

/// Where Curves[Index] is the fastest: from the first size it wins to the
/// last, unbounded at either end when it wins there. Nullopt when it never
/// wins. Ties go to the curve listed first.
std::optional<SizeWindow> fastestWindow(const std::vector<AlgorithmCurve> &Curves, size_t Index);

} // namespace cclc::cost
