//===- AllReduceSweep.h - One measurement protocol for every library ------===//
//
// The collective benchmark compares cclc with Open MPI and Gloo. A comparison
// is only fair when every library runs exactly the same protocol: the same
// message sizes, the same check of the result, the same warmups, iterations
// and trials, timed the same way. This file is that protocol, and the one
// description of each collective that every library's program shares: its
// buffers, the result it must produce and nccl-tests' bus bandwidth factor.
// Each library only supplies a CollectiveRunner that makes its call. Every
// rank prints its trials' times, a line per size, that the driver reads back
// whether its ranks were forked or started by mpirun: a call's time is the
// slowest rank's, since a root that returns once its message is queued has
// not finished the collective its peers still run.
//
//===----------------------------------------------------------------------===//

#ifndef CCLC_TEST_BENCH_ALLREDUCESWEEP_H
#define CCLC_TEST_BENCH_ALLREDUCESWEEP_H

#include "plan/Assert.h"

#include <CLI/CLI.hpp>

#include <cstddef>
#include <cstdio>
#include <cstring>
#include <map>
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

/// The root of broadcast and reduce.
constexpr int Root = 0;

/// How a message divides into one rank's buffers.
enum class Layout {
  /// Send and receive the whole message.
  Whole,
  /// Send one block of the message, receive every rank's block.
  Gather,
  /// Send every rank's block, receive the reduction of one.
  Scatter,
};

/// One rank's buffers for one call, in f32 elements. Bytes is the message
/// size as nccl-tests counts it: the larger of the two buffers.
struct Message {
  size_t SendCount = 0;
  size_t RecvCount = 0;
  /// Elements of one rank's block in a gather or scatter; SendCount else.
  size_t Block = 0;
  size_t Bytes = 0;
};

/// One collective as every library's program sees it. The memory copy that
/// bounds the collectives is described the same way, so that one sweep
/// measures it too.
struct Collective {
  const char *Name;
  Layout Shape;
  /// Whether only the root's output is defined (reduce).
  bool OutputAtRootOnly;
  /// The correct output element I on Rank when every rank R sends
  /// checkValue(R, J) as its element J.
  float (*Expected)(int Rank, int NRanks, size_t Block, size_t I);
  /// nccl-tests' bus bandwidth over algorithm bandwidth.
  double (*BusFactor)(int NRanks);

  /// The buffers of a message of Bytes: a gather's or scatter's message is
  /// rounded down to whole elements per rank. nullopt when not one element
  /// per rank is left.
  std::optional<Message> message(size_t Bytes, int NRanks) const;
};

/// Every collective the benchmark measures, in the order it reports them.
extern const std::vector<Collective> Collectives;
/// Each rank copies its input to its output: what memory allows a rank.
extern const Collective MemoryCopy;

/// The collective named Name (as in Collectives), or nullptr.
const Collective *findCollective(const std::string &Name);

/// A library's entry for C in its table of calls, which has one entry per
/// collective, named by its Collective member.
template <typename Entry, size_t N>
const Entry &entryFor(const Entry (&Table)[N], const Collective &C) {
  for (const Entry &E : Table)
    if (std::strcmp(E.Collective, C.Name) == 0)
      return E;
  CCLC_UNREACHABLE("a library's table of calls lacks a collective");
}

/// The input element I of Rank in a checked call: small integers, so that
/// every sum of them is exact in f32.
float checkValue(int Rank, size_t Index);

/// A zeroed buffer of floats from the memory a library works best on: the
/// C heap, or cclc's cclcMemAlloc.
class Floats {
public:
  /// Where a buffer's memory comes from.
  struct Source {
    float *(*Allocate)(size_t Count);
    void (*Free)(float *);
  };
  static const Source Heap;

  explicit Floats(Source From) : From(From) {}
  ~Floats() { clear(); }
  Floats(const Floats &) = delete;
  Floats &operator=(const Floats &) = delete;

  void assign(size_t Count);
  void clear();
  float *data() { return Data; }

private:
  Source From;
  float *Data = nullptr;
};

/// One library's call of one collective, f32 and sum where it reduces, on
/// one rank.
class CollectiveRunner {
public:
  /// A runner in place reads its input from and writes its output to the
  /// start of one buffer, as Gloo's algorithms and MPI_Bcast do.
  explicit CollectiveRunner(bool InPlace = false, Floats::Source From = Floats::Heap)
      : Input(From), Output(From), InPlace(InPlace) {}
  virtual ~CollectiveRunner() = default;

  /// Makes the buffers for M; a library that sets up per size extends it.
  virtual void prepare(const Message &M);
  float *input() { return Input.data(); }
  const float *output() { return InPlace ? Input.data() : Output.data(); }
  virtual void run() = 0;
  /// Lines the ranks up before a timed trial.
  virtual void barrier() = 0;
  /// The algorithm the library ran for the last call, as it names it.
  virtual std::string algorithm() = 0;

protected:
  float *outputBuffer() { return InPlace ? Input.data() : Output.data(); }

  Message Msg;
  Floats Input, Output;
  bool InPlace;
};

/// A job's result for one message size.
struct Figure {
  /// The size of the sweep the figure belongs to, which names its row;
  /// Collective::message gives the message actually sent.
  size_t Bytes = 0;
  /// The algorithm rank 0 ran.
  std::string Algorithm;
  /// The median over trials of the time of one call on the rank slowest
  /// in that trial. Trials begin on a barrier, so this is the time the job
  /// takes per call: as nccl-tests' maximum (`-a 3`) and OSU's max latency.
  double TimeUs = 0;
};

/// Runs the sweep of C on this rank, which writes one line of its trials'
/// times per size to Out. Each size is first checked (rank-dependent
/// inputs, exact f32 sums), then timed on zero inputs so that repeated
/// in-place runs stay finite. Sizes with less than an element per rank are
/// left out. The sweep ends on a barrier, so that every rank's last call is
/// over before any rank's connections close. Returns how many elements this
/// rank got wrong, over all sizes, having said where on stderr.
size_t runSweep(CollectiveRunner &Runner, const Collective &C, int Rank, int NRanks,
                const SweepOptions &Options, FILE *Out);

double median(std::vector<double> Values);

/// Makes a job's figures of the lines its ranks wrote with runSweep.
class FigureCollector {
public:
  /// Takes one line of a rank's output; false, having kept nothing, for a
  /// line runSweep did not write (a launcher's notices).
  bool take(const std::string &Line);
  /// One figure per size, smallest first; a size some rank left out of its
  /// lines, or timed in fewer trials, keeps the trials every rank has.
  std::vector<Figure> figures() const;

private:
  struct Size {
    std::string Algorithm;
    /// Per trial, the slowest time of the ranks read so far.
    std::vector<double> SlowestUs;
    size_t Ranks = 0;
  };
  std::map<size_t, Size> Sizes;
};

} // namespace cclc::bench

#endif // CCLC_TEST_BENCH_ALLREDUCESWEEP_H
