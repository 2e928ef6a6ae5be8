//===- Algorithms.h - Loaded algorithms and the choice per call -*- C++ -*-===//
//
// A communicator runs a collective with one of the algorithms loaded into it:
// plans (run by the plan interpreter, on the host or as the GPU's generic
// kernel), generated host kernels and generated CUDA kernels. Each is meant
// for a window of message sizes; a call takes the algorithm whose window
// holds its size and that can run where the call runs (host kernels never
// serve a GPU call, CUDA kernels never a host call), preferring a generated
// kernel to the interpreter (same results, less dispatch), then the plan
// chosen for the call's kind (in place or not, on mapped buffers or not:
// plan::PlanInfo, where the fastest plan depends on the call as well as its
// size; Algorithm::fit), then the narrowest window (the most specific
// tuning), then the first loaded. A plan chosen for another kind of call
// still serves where nothing fits better. Every rank loads the same
// algorithms in the same order and makes calls of the same kind, so every
// rank chooses alike.
//
// When nothing loaded serves a call, the communicator falls back on the
// library's ring algorithm (Fallback.h) and says so on stderr, always: a
// fallback is correct but rarely fast. With CCLC_DEBUG=INFO every choice is
// logged too, once per collective, algorithm and executor.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/api/LinkSets.h"
#include "runtime/exec/Interpreter.h"
#include "runtime/transport/Transport.h"

#include "plan/Vocabulary.h"
#include "host/Kernel.h"

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

namespace cclc::cuda {
/// A generated CUDA kernel's description (templates/cuda/Kernel.cuh), which
/// only CUDA code reads: the runtime keeps pointers to a registered table's
/// entries.
struct KernelInfo;
} // namespace cclc::cuda

namespace cclc::runtime {

/// Where a call runs: on the host, returning once done, or on the GPU,
/// enqueued on a CUDA stream.
enum class Target { Host, Gpu };

/// What one collective call asks for.
struct Request {
  plan::CollectiveKind Collective = plan::CollectiveKind::AllReduce;
  /// The call's root; 0 for collectives without one.
  int32_t Root = 0;
  /// The per-rank element count (the schedules' unit).
  size_t Count = 0;
  host::DType Type = host::DType::F32;
  host::RedOp Op = host::RedOp::Sum;
  Target Where = Target::Host;
  /// Whether the call runs in place (NCCL's meaning: the output is the
  /// input, or holds it at the rank's block), and on host buffers the ranks
  /// map (cclcMemAlloc's); asked of algorithms chosen for such calls.
  bool InPlace = false;
  bool Mapped = false;
  /// Count elements of Type: what size windows are measured in.
  uint64_t bytes() const;
  bool operator==(const Request &) const = default;
};

/// "allreduce of 4 KiB (f32, sum)", "broadcast of 8 B (u8, root 2)".
std::string describeCall(const Request &R);

/// One entry of a generated kernel table, host::KernelInfo or
/// cuda::KernelInfo, as loading checks and groups it whatever its target.
struct KernelEntry {
  const char *Algorithm = nullptr;
  const char *Collective = nullptr;
  int NRanks = 0;
  int Root = 0;
  kern::GridShape Shape;
  int InputUnits = 0, OutputUnits = 0, ScratchUnits = 0;
  host::DType Type = host::DType::F32;
  host::RedOp Op = host::RedOp::Sum;
  size_t MinBytes = 0, MaxBytes = 0;
  /// Whether the entry names its kernel function (KernelInfo::Run).
  bool HasFunction = false;
  /// Threads of each block of a CUDA kernel; 0 for a host kernel.
  int BlockThreads = 0;
  host::KernelFn Host = nullptr;          ///< A host table's kernel.
  const cuda::KernelInfo *Cuda = nullptr; ///< A CUDA table's entry, which launching reads.
};

/// The entry of K, a host::KernelInfo or cuda::KernelInfo: the fields both
/// have; the caller adds its target's.
template <class Info> KernelEntry entryOf(const Info &K) {
  KernelEntry E;
  E.Algorithm = K.Algorithm;
  E.Collective = K.Collective;
  E.NRanks = K.NRanks;
  E.Root = K.Root;
  E.Shape = K.Shape;
  E.InputUnits = K.InputUnits;
  E.OutputUnits = K.OutputUnits;
  E.ScratchUnits = K.ScratchUnits;
  E.Type = K.Type;
  E.Op = K.Op;
  E.MinBytes = K.MinBytes;
  E.MaxBytes = K.MaxBytes;
  E.HasFunction = K.Run != nullptr;
  return E;
}

/// One algorithm a communicator can run, with what connecting it takes.
struct Algorithm {
  /// What the algorithm is made of: generated host kernels, generated CUDA
  /// kernels, or a schedule, which the plan interpreter runs on either target.
  enum class Executor { Kernel, CudaKernel, Interpreter };

  std::string Name;
  /// A hash of what fixes its schedule and messages, whichever executor runs
  /// it: name, collective, root, chunk grid and buffer units. Every message
  /// of a call carries it (kern::CallStamp::Plan); the table sets it.
  uint64_t Identity = 0;
  /// Where it came from, for logs: "plan ring.json", "kernels", "the
  /// library's ring, built into the runtime".
  std::string Origin;
  plan::CollectiveKind Collective = plan::CollectiveKind::AllReduce;
  int32_t Root = 0;
  uint64_t MinBytes = 0;
  std::optional<uint64_t> MaxBytes;
  /// The calls it was chosen for (plan::PlanInfo::InPlace, MappedBuffers);
  /// unset for either.
  std::optional<bool> ForInPlace;
  std::optional<bool> ForMapped;
  exec::ScheduleShape Shape;
  Executor Kind = Executor::Interpreter;
  /// Whether this rank's program runs an in-place call on the caller's
  /// buffer as it is (plan::runsInPlace), not on a copy of its input.
  bool InPlace = false;
  /// The line protocol its steps take, if any (Simple for none), which GPU
  /// executors run and the log says (host executors send such steps the
  /// simple way).
  sched::Protocol Lines = sched::Protocol::Simple;
  /// The schedule, for the interpreter.
  std::shared_ptr<const exec::Interpreter> Interp;
  /// Generated kernels, one per (type, operator) they were compiled for.
  std::map<std::pair<host::DType, host::RedOp>, host::KernelFn> Kernels;
  std::map<std::pair<host::DType, host::RedOp>, const cuda::KernelInfo *> CudaKernels;
  /// Every message stream of the algorithm's ranks and the FIFO shape they
  /// need: what connecting it takes, on the host when it is loaded and on
  /// the GPU at its first GPU call.
  LinkSet Links;
  net::LinkOptions LinkOptions;
  /// The host connections it runs on, once connected, and their slot size.
  net::Connections *Net = nullptr;
  size_t SlotBytes = 0;
  /// Where waits yield (the ranks share cores) and its own slots are shaped
  /// for calls larger than SmallCallBytes (LinkSets.h), the connections
  /// with many small slots that its calls up to SmallCallBytes run on, and
  /// their slot size; null otherwise.
  net::Connections *SmallNet = nullptr;
  size_t SmallSlotBytes = 0;

  /// True when the window holds Bytes.
  bool holds(uint64_t Bytes) const;
  /// How well the kind of call it was chosen for fits R's: 1 for each kind
  /// R is of (in place or not, on mapped buffers or not), -2 for each it is
  /// not, 0 for what it was not chosen for. A plan chosen for R's kind beats
  /// one chosen for any call, which beats one chosen for another kind.
  int fit(const Request &R) const;
  /// The kernel for R's type and operator (any operator for collectives
  /// that do not reduce); null when there is none.
  host::KernelFn kernelFor(const Request &R) const;
  const cuda::KernelInfo *cudaKernelFor(const Request &R) const;
  /// True when this algorithm can run R where R runs.
  bool serves(const Request &R) const;
  /// Runs channel Channel of host call R with Args.
  void run(const Request &R, const host::KernelArgs &Args, int Channel) const;
  /// The trace of host call R with Args (host/Trace.h), for a caller that
  /// repeats it; null where the call is not traced: a generated kernel's,
  /// one of several channels, or one of more rounds than MaxTracedRounds,
  /// whose data dwarfs what a trace saves.
  std::unique_ptr<host::Trace> trace(const Request &R, const host::KernelArgs &Args) const;
  static constexpr size_t MaxTracedRounds = 4;
  /// "ring_allreduce (plan ring.json, plan interpreter, 1 channel, sizes
  /// 0 B..1 MiB)", naming the executor that runs it on Where.
  std::string describe(Target Where = Target::Host) const;
};

/// "ring_allreduce#1a2b3c4d": Name, and Identity in short, which tells apart
/// two plans of one algorithm compiled differently.
std::string planTag(const std::string &Name, uint64_t Identity);

class AlgorithmTable {
public:
  AlgorithmTable(int Rank, int NRanks);

  void add(Algorithm A);

  /// The algorithm for R: the best loaded one, else the fallback for R's
  /// collective, root and target, made by MakeFallback on first use and
  /// kept. Logs as the file comment says.
  const Algorithm &choose(const Request &R, const std::function<Algorithm()> &MakeFallback);

  /// Logs Message when CCLC_DEBUG asks for INFO.
  void info(const std::string &Message) const {
    if (Info)
      log("INFO", Message);
  }

  const std::deque<Algorithm> &loaded() const { return Loaded; }
  /// Whether a loaded algorithm was chosen for mapped or unmapped buffers:
  /// only then does a call ask which its buffers are.
  bool asksMapped() const { return AsksMapped; }
  /// Whether a loaded algorithm serves R (no fallback is made).
  bool servesLoaded(const Request &R) const { return best(R) != nullptr; }
  /// The loaded or fallback algorithm of identity Identity; null when none
  /// is, as for a plan only a peer loaded.
  const Algorithm *withIdentity(uint64_t Identity) const;

private:
  const Algorithm *best(const Request &R) const;
  void log(const char *Level, const std::string &Message) const;

  int Rank;
  int NRanks;
  bool Info;
  /// Stable addresses: choose() hands out references, which the GPU
  /// executor keys its per-algorithm state on.
  std::deque<Algorithm> Loaded;
  bool AsksMapped = false;
  std::map<std::tuple<plan::CollectiveKind, int32_t, Target>, Algorithm> Fallbacks;
  /// The algorithms (Loaded's or Fallbacks', whose addresses are stable)
  /// and targets already logged.
  std::set<std::pair<const Algorithm *, Target>> Logged;
  /// The last call and the algorithm chosen for it (none: null): a program
  /// makes the same call over and over, and asking every loaded algorithm
  /// again took a tenth of a small call's time. Forgotten when an
  /// algorithm is added.
  Request LastCall;
  const Algorithm *LastChoice = nullptr;
};

} // namespace cclc::runtime
