//===- AllReduceSweep.h - One measurement protocol for every library ------===//
//
// The allreduce benchmark compares cclc with Open MPI and Gloo. A comparison
// is only fair when every library runs exactly the same protocol: the same
// message sizes, the same check of the result, the same warmups, iterations
// and trials, timed the same way. This file is that protocol; each library
// only supplies an AllReduceRunner. Rank 0 prints one line per size that the
// driver reads back, whether its ranks were forked or started by mpirun.
//
//===----------------------------------------------------------------------===//

#ifndef CCLC_TEST_BENCH_ALLREDUCESWEEP_H
#define CCLC_TEST_BENCH_ALLREDUCESWEEP_H

#include <CLI/CLI.hpp>

#include <cstddef>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

namespace cclc::bench {

/// The message sizes and repetitions of one sweep.
struct SweepOptions {
  size_t MinBytes = 4;
  size_t MaxBytes = size_t(256) << 20;
  size_t Factor = 4;
  /// Iterations per trial are chosen so that a trial moves about this many
  /// bytes per rank: many iterations for small messages, few for large ones.
  size_t BytesPerTrial = size_t(512) << 20;
  size_t MinIterations = 4;
  size_t MaxIterations = 200;
  size_t Trials = 5;

  std::vector<size_t> sizes() const;
  size_t iterations(size_t Bytes) const;
  size_t warmups(size_t Bytes) const;
  /// The options as command-line arguments, to hand the same sweep to a
  /// program that mpirun starts.
  std::vector<std::string> arguments() const;
};

/// Adds the sweep's options to a command line.
void addSweepOptions(CLI::App &App, SweepOptions &Options);

/// One library's f32 sum allreduce on one rank.
class AllReduceRunner {
public:
  virtual ~AllReduceRunner() = default;
  /// Makes the buffers (and whatever the library sets up per size) for Count
  /// floats; a runner may run in place, with input() == output().
  virtual void prepare(size_t Count) = 0;
  virtual float *input() = 0;
  virtual const float *output() = 0;
  virtual void allReduce() = 0;
  /// Lines the ranks up before a timed trial.
  virtual void barrier() = 0;
  /// The algorithm the library ran for the last call, as it names it.
  virtual std::string algorithm() = 0;
};

/// A runner whose library reads one host buffer and writes another.
class OutOfPlaceRunner : public AllReduceRunner {
public:
  void prepare(size_t Count) override {
    Input.assign(Count, 0.0f);
    Output.assign(Count, 0.0f);
  }
  float *input() override { return Input.data(); }
  const float *output() override { return Output.data(); }

protected:
  std::vector<float> Input, Output;
};

/// What rank 0 reports for one message size.
struct Figure {
  size_t Bytes = 0;
  std::string Algorithm;
  /// The median over trials of the time of one allreduce.
  double TimeUs = 0;

  /// nccl-tests' bus bandwidth: algorithm bandwidth times 2 (n - 1) / n.
  double busBandwidthGBs(int NRanks) const;
};

/// Runs the sweep on this rank; rank 0 writes one figure line per size to Out.
/// Each size is first checked (rank-dependent inputs, exact f32 sums), then
/// timed on zero inputs so that repeated in-place runs stay finite. Returns
/// how many elements this rank got wrong, over all sizes, having said where
/// on stderr.
size_t runSweep(AllReduceRunner &Runner, int Rank, int NRanks, const SweepOptions &Options,
                FILE *Out);

double median(std::vector<double> Values);

/// Reads a line written by runSweep; anything else (a launcher's notices)
/// gives nullopt.
std::optional<Figure> parseFigure(const std::string &Line);

} // namespace cclc::bench

#endif // CCLC_TEST_BENCH_ALLREDUCESWEEP_H
