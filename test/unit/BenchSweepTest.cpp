//===- BenchSweepTest.cpp - The collective bench's figures -----------------===//
//
// cclc-allreduce-bench's ranks each print their trials' times; a figure is the
// median over trials of the slowest rank's time. These tests give the
// collector ranks' lines as the sweep prints them.
//
//===----------------------------------------------------------------------===//

#include "test/bench/AllReduceSweep.h"

#include <gtest/gtest.h>

namespace cclc::bench {
namespace {

/// The figures of the ranks' Lines, every one of which must be taken.
std::vector<Figure> figuresOf(std::initializer_list<const char *> Lines) {
  FigureCollector C;
  for (const char *Line : Lines)
    EXPECT_TRUE(C.take(Line)) << Line;
  return C.figures();
}

TEST(FigureCollector, TakesPerTrialTheSlowestRankThenTheMedian) {
  // Trials 1..3: rank 0 is slowest in the second, rank 1 in the first and third.
  std::vector<Figure> F = figuresOf({"trials 4096 butterfly_allreduce 0 1 5 3\n",
                                     "trials 4096 butterfly_allreduce 1 2 1 4\n"});
  ASSERT_EQ(1u, F.size());
  EXPECT_EQ(4096u, F[0].Bytes);
  EXPECT_EQ("butterfly_allreduce", F[0].Algorithm);
  EXPECT_DOUBLE_EQ(4.0, F[0].TimeUs); // The median of 2, 5 and 4.
}

TEST(FigureCollector, NamesRankZerosAlgorithmWhateverOrderTheLinesCome) {
  std::vector<Figure> F =
      figuresOf({"trials 64 other 1 1.5", "trials 64 binomial_broadcast 0 0.5"});
  ASSERT_EQ(1u, F.size());
  EXPECT_EQ("binomial_broadcast", F[0].Algorithm);
  EXPECT_DOUBLE_EQ(1.5, F[0].TimeUs);
}

TEST(FigureCollector, GivesSizesSmallestFirst) {
  std::vector<Figure> F = figuresOf({"trials 1024 a 0 3", "trials 4 a 0 1", "trials 64 a 0 2",
                                     "trials 4 a 1 1.25", "trials 1024 a 1 2", "trials 64 a 1 2"});
  ASSERT_EQ(3u, F.size());
  EXPECT_EQ(4u, F[0].Bytes);
  EXPECT_DOUBLE_EQ(1.25, F[0].TimeUs);
  EXPECT_EQ(64u, F[1].Bytes);
  EXPECT_EQ(1024u, F[2].Bytes);
  EXPECT_DOUBLE_EQ(3.0, F[2].TimeUs);
}

TEST(FigureCollector, KeepsTheTrialsEveryRankTimed) {
  // The third trial, which rank 1 left out, is not a figure of the job.
  EXPECT_DOUBLE_EQ(2.5, figuresOf({"trials 16 a 0 1 1 9", "trials 16 a 1 2 3"}).at(0).TimeUs);
}

TEST(FigureCollector, TakesTheDashOfALibraryThatNamedNoAlgorithm) {
  EXPECT_EQ("-", figuresOf({"trials 16 - 0 1"}).at(0).Algorithm);
}

TEST(FigureCollector, RefusesLinesTheSweepDidNotWrite) {
  FigureCollector C;
  EXPECT_FALSE(C.take("figure 4 butterfly_allreduce 0.7"));
  EXPECT_FALSE(C.take("[host:01234] mpirun notice"));
  EXPECT_FALSE(C.take("trials 4 butterfly_allreduce 0"));
  EXPECT_FALSE(C.take("trials four butterfly_allreduce 0 1"));
  EXPECT_FALSE(C.take(""));
  EXPECT_TRUE(C.figures().empty());
}

} // namespace
} // namespace cclc::bench
