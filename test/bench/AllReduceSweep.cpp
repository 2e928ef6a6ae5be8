//===- AllReduceSweep.cpp - One measurement protocol for every library ----===//
//
// Sizes, checks, warmups, trials and the figure lines of the allreduce
// benchmark.
//
//===----------------------------------------------------------------------===//

#include "AllReduceSweep.h"

#include <algorithm>
#include <chrono>
#include <sstream>

namespace cclc::bench {

std::vector<size_t> SweepOptions::sizes() const {
  std::vector<size_t> Sizes;
  for (size_t Bytes = MinBytes; Bytes <= MaxBytes; Bytes *= Factor)
    Sizes.push_back(Bytes);
  return Sizes;
}

size_t SweepOptions::iterations(size_t Bytes) const {
  return std::min(std::max(BytesPerTrial / Bytes, MinIterations), MaxIterations);
}

size_t SweepOptions::warmups(size_t Bytes) const {
  return std::max<size_t>(2, iterations(Bytes) / 10);
}

std::vector<std::string> SweepOptions::arguments() const {
  return {"--min-bytes",      std::to_string(MinBytes),
          "--max-bytes",      std::to_string(MaxBytes),
          "--factor",         std::to_string(Factor),
          "--bytes-per-trial", std::to_string(BytesPerTrial),
          "--min-iterations", std::to_string(MinIterations),
          "--max-iterations", std::to_string(MaxIterations),
          "--trials",         std::to_string(Trials)};
}

void addSweepOptions(CLI::App &App, SweepOptions &Options) {
  // Sizes count f32 elements.
  CLI::Validator WholeFloats(
      [](std::string &Text) {
        return std::stoull(Text) % sizeof(float) ? "not a multiple of 4 bytes" : "";
      },
      "MULTIPLE OF 4");
  App.add_option("--min-bytes", Options.MinBytes, "Smallest message, in bytes")
      ->capture_default_str()
      ->check(CLI::PositiveNumber & WholeFloats);
  App.add_option("--max-bytes", Options.MaxBytes, "Largest message, in bytes")
      ->capture_default_str();
  App.add_option("--factor", Options.Factor, "Growth factor from one size to the next")
      ->capture_default_str()
      ->check(CLI::Range(size_t(2), size_t(1024)));
  App.add_option("--bytes-per-trial", Options.BytesPerTrial,
                 "Bytes each rank reduces per trial; sets the iterations per size")
      ->capture_default_str();
  App.add_option("--min-iterations", Options.MinIterations, "Fewest iterations per trial")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  App.add_option("--max-iterations", Options.MaxIterations, "Most iterations per trial")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  App.add_option("--trials", Options.Trials, "Timed trials per size; the median is reported")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
}

double Figure::busBandwidthGBs(int NRanks) const {
  double AlgorithmGBs = static_cast<double>(Bytes) / (TimeUs * 1e3);
  return AlgorithmGBs * 2.0 * (NRanks - 1) / NRanks;
}

namespace {

/// Small integers, so that every sum of them is exact in f32.
float checkValue(int Rank, size_t Index) {
  return static_cast<float>((Rank + 1) * static_cast<int>(Index % 7 + 1));
}

/// Runs one checked allreduce; returns how many elements are wrong.
size_t checkOnce(AllReduceRunner &Runner, int Rank, int NRanks, size_t Count) {
  float *In = Runner.input();
  for (size_t I = 0; I < Count; ++I)
    In[I] = checkValue(Rank, I);
  Runner.allReduce();
  const float *Out = Runner.output();
  size_t Wrong = 0;
  for (size_t I = 0; I < Count; ++I) {
    float Expected = 0;
    for (int R = 0; R < NRanks; ++R)
      Expected += checkValue(R, I);
    Wrong += Out[I] != Expected;
  }
  return Wrong;
}

} // namespace

double median(std::vector<double> Values) {
  std::sort(Values.begin(), Values.end());
  size_t Mid = Values.size() / 2;
  return Values.size() % 2 ? Values[Mid] : (Values[Mid - 1] + Values[Mid]) / 2;
}

size_t runSweep(AllReduceRunner &Runner, int Rank, int NRanks, const SweepOptions &Options,
                FILE *Out) {
  size_t Wrong = 0;
  for (size_t Bytes : Options.sizes()) {
    size_t Count = Bytes / sizeof(float);
    Runner.prepare(Count);
    size_t WrongHere = checkOnce(Runner, Rank, NRanks, Count);
    if (WrongHere)
      std::fprintf(stderr, "rank %d: %zu wrong elements at %zu bytes\n", Rank, WrongHere, Bytes);
    Wrong += WrongHere;
    Figure F;
    F.Bytes = Bytes;
    F.Algorithm = Runner.algorithm();
    std::fill_n(Runner.input(), Count, 0.0f);
    for (size_t I = 0, E = Options.warmups(Bytes); I < E; ++I)
      Runner.allReduce();
    size_t Iterations = Options.iterations(Bytes);
    std::vector<double> TrialUs;
    for (size_t T = 0; T < Options.Trials; ++T) {
      Runner.barrier();
      auto Start = std::chrono::steady_clock::now();
      for (size_t I = 0; I < Iterations; ++I)
        Runner.allReduce();
      std::chrono::duration<double, std::micro> Elapsed = std::chrono::steady_clock::now() - Start;
      TrialUs.push_back(Elapsed.count() / static_cast<double>(Iterations));
    }
    F.TimeUs = median(TrialUs);
    if (Rank == 0) {
      std::fprintf(Out, "figure %zu %s %.3f\n", F.Bytes, F.Algorithm.c_str(), F.TimeUs);
      std::fflush(Out);
    }
  }
  return Wrong;
}

std::optional<Figure> parseFigure(const std::string &Line) {
  std::istringstream In(Line);
  std::string Tag;
  Figure F;
  if (!(In >> Tag >> F.Bytes >> F.Algorithm >> F.TimeUs) || Tag != "figure")
    return std::nullopt;
  return F;
}

} // namespace cclc::bench
