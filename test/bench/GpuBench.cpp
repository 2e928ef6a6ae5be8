//===- GpuBench.cpp - Allreduce on one GPU against its copy bandwidth -----===//
//
// cclc-gpu-bench measures how close cclc's allreduce comes, on one GPU, to
// the speed at which that GPU copies memory, and what the generated CUDA
// kernels gain over the GPU plan interpreter. Its ranks (8 by default) are
// threads of this process, each with a communicator and a stream of its own
// on device 0 (test/gpu/RankThreads.h), so every rank's kernel runs at once
// on the one GPU. For every size, from 8 B to 1 GiB by default, it measures
//
//   - the device-to-device copy: every rank copies the size from one buffer
//     to another with cudaMemcpyAsync on its stream, all ranks at once;
//   - the f32 sum allreduce, out of place, of the ring and (for a power of
//     two ranks) butterfly algorithms, through the generated CUDA kernels
//     linked into the program (compiled for 8 ranks) and through the GPU
//     plan interpreter running the same algorithms' plans, compiled with
//     the protocol --protocol names (so that, with ll or ll128, the last
//     column compares that protocol with the kernels' simple one).
//
// and prints time, algorithm and bus bandwidth as nccl-tests does, the bus
// bandwidth as a share of the copy's, and the interpreter's time over the
// kernels'. First, alone on the GPU, it measures the copy primitive the
// kernels move data with: on one block (one channel) and on as many blocks
// as the algorithms have channels, each channel's bandwidth as a fraction
// of a lone cudaMemcpyAsync's, which says how many channels a collective
// needs to reach the GPU's copy speed. Every size's first call is checked element by element. Times
// are taken with events on each rank's stream around -n calls after -w warmups, the ranks lined up
// before each loop, and averaged over the ranks.
//
//===----------------------------------------------------------------------===//

#include "GpuBenchKernels.h"
#include "RankThreads.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <barrier>
#include <bit>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

using namespace cclc;
using namespace cclc::gputest;
namespace fs = std::filesystem;

namespace {

struct Options {
  int NRanks = 8;
  uint64_t MinBytes = 8;
  uint64_t MaxBytes = uint64_t(1) << 30;
  uint64_t Factor = 2;
  int Iters = 20;
  int Warmup = 5;
  /// How the interpreter's plans send their messages (cclc compile
  /// --protocol); the linked kernels send the simple way.
  std::string Protocol = "simple";
};

/// One algorithm as the benchmark runs it.
struct Algorithm {
  std::string Stem;
  /// Its name in its .ccl file, as the runtime's log and the tables say it.
  std::string Name;
  std::string PlanPath;
  int Channels = 1;
  /// The linked kernels; null when they are not compiled for the rank count.
  const KernelTable *Kernels = nullptr;
};

/// Compiles algorithms/<Stem>.ccl with the cclc tool into a plan at Path.
/// For the kernels' rank count the target is theirs (they run the same
/// schedule); for another, a flat target whose flat algorithms run Channels
/// channels. Returns false, having said why, when it does not compile.
bool compilePlan(const std::string &Stem, int NRanks, int Channels, const std::string &Protocol,
                 const fs::path &Path) {
  std::string Target = NRanks == bench::KernelRanks ? "--topo '" CCLC_BENCH_TOPOLOGY "'"
                                                    : "--nranks " + std::to_string(NRanks) +
                                                          " --channels " + std::to_string(Channels);
  std::string Command = "'" CCLC_COMPILER "' compile '" CCLC_ALGORITHMS_DIR "/" + Stem + ".ccl' " +
                        Target + " --protocol " + Protocol + " --emit=json -o '" + Path.string() +
                        "'";
  if (std::system(Command.c_str()) == 0)
    return true;
  std::fprintf(stderr, "cclc-gpu-bench: %s does not compile for %d ranks: %s\n", Stem.c_str(),
               NRanks, Command.c_str());
  return false;
}

/// The algorithms to measure: ring, and butterfly for a power of two ranks.
std::optional<std::vector<Algorithm>> algorithms(const Options &O, int Sms, const fs::path &Dir) {
  std::vector<std::string> Stems = {"ring-allreduce"};
  if (std::has_single_bit(unsigned(O.NRanks)))
    Stems.push_back("butterfly-allreduce");
  // Every rank's blocks wait on its peers' blocks, so all must be resident at
  // once: at most one block per SM for every rank.
  int Channels = std::clamp(Sms / O.NRanks, 1, 16);
  std::vector<Algorithm> Algos;
  for (const std::string &Stem : Stems) {
    Algorithm A;
    A.Stem = Stem;
    A.PlanPath = (Dir / (Stem + ".json")).string();
    if (!compilePlan(Stem, O.NRanks, Channels, O.Protocol, A.PlanPath))
      return std::nullopt;
    std::ifstream In(A.PlanPath);
    nlohmann::json Plan = nlohmann::json::parse(In);
    A.Name = Plan["algorithm"].get<std::string>();
    A.Channels = Plan["nchannels"].get<int>();
    if (O.NRanks == bench::KernelRanks)
      for (const KernelTable &T : bench::allReduceKernels())
        if (Stem == T.Stem)
          A.Kernels = &T;
    Algos.push_back(std::move(A));
  }
  return Algos;
}

double busFactor(int NRanks) { return 2.0 * (NRanks - 1) / NRanks; }

/// GB/s of Bytes in Us microseconds.
double gbPerSecond(uint64_t Bytes, double Us) { return double(Bytes) / Us / 1e3; }

/// What the ranks measure together and rank 0 prints: each rank writes its
/// own slot before the ranks line up, and rank 0 reads them after.
struct Shared {
  explicit Shared(int NRanks)
      : Lineup(NRanks), Copy(size_t(NRanks)), Generated(size_t(NRanks)),
        Interpreted(size_t(NRanks)) {}

  std::barrier<> Lineup;
  /// Microseconds per call at the current size, by rank.
  std::vector<double> Copy, Generated, Interpreted;
  /// The copy's GB/s per rank at each size, for the allreduce tables.
  std::vector<double> CopyGbs;
  std::atomic<size_t> WrongResults = 0;
};

double meanOf(const std::vector<double> &Us) {
  return std::accumulate(Us.begin(), Us.end(), 0.0) / double(Us.size());
}

/// A rank's start and stop events.
class Timer {
public:
  Timer() {
    CCLC_CUDA(cudaEventCreate(&Start));
    CCLC_CUDA(cudaEventCreate(&Stop));
  }
  Timer(const Timer &) = delete;
  Timer &operator=(const Timer &) = delete;
  ~Timer() {
    cudaEventDestroy(Start);
    cudaEventDestroy(Stop);
  }

  /// Microseconds per call of Call on R's stream: Warmup calls, then, once
  /// every rank is ready, Iters calls between the events.
  double time(RankThread &R, Shared &S, const Options &O, const std::function<void()> &Call) {
    for (int I = 0; I < O.Warmup; ++I)
      Call();
    CCLC_CUDA(cudaStreamSynchronize(R.stream()));
    S.Lineup.arrive_and_wait();
    return span(R.stream(), O.Iters, Call);
  }

  /// Microseconds per call of Iters calls of Call on Stream, between the
  /// events.
  double span(cudaStream_t Stream, int Iters, const std::function<void()> &Call) {
    CCLC_CUDA(cudaEventRecord(Start, Stream));
    for (int I = 0; I < Iters; ++I)
      Call();
    CCLC_CUDA(cudaEventRecord(Stop, Stream));
    CCLC_CUDA(cudaEventSynchronize(Stop));
    float Ms = 0;
    CCLC_CUDA(cudaEventElapsedTime(&Ms, Start, Stop));
    return double(Ms) * 1e3 / Iters;
  }

private:
  cudaEvent_t Start = nullptr, Stop = nullptr;
};

/// The copy primitive's bandwidth per channel against cudaMemcpyAsync's, at
/// every size, alone on device 0, on one channel and on Channels; each
/// size's first copy on Channels is checked. Returns the sizes it copied
/// wrong.
size_t measureCopyPrimitive(const Options &O, const std::vector<uint64_t> &Sizes, int Channels) {
  std::printf("#\n# The copy primitive (cuda::copy) alone on the GPU, one block of the "
              "interpreter's\n# threads per channel, against one cudaMemcpyAsync of the size: "
              "GB/s per channel, and\n# per channel / memcpy\n#\n");
  std::printf("# %12s %10s | %10s %10s | %10s %10s %10s\n", "size", "memcpy", "1 channel",
              "/memcpy", (std::to_string(Channels) + " ch").c_str(), "per ch", "/memcpy");
  std::printf("# %12s %10s | %10s %10s | %10s %10s %10s\n", "(B)", "(GB/s)", "(GB/s)", "", "(GB/s)",
              "(GB/s)", "");
  DeviceBuffer<float> In(O.MaxBytes / 4), Out(O.MaxBytes / 4);
  DeviceBuffer<unsigned long long> Wrong(1);
  Stream S;
  Timer T;
  size_t WrongSizes = 0;
  CCLC_CUDA(bench::fillFloats(In.get(), O.MaxBytes / 4, 1.0f, S.get()));
  for (uint64_t Bytes : Sizes) {
    CCLC_CUDA(cudaMemsetAsync(Out.get(), 0, Bytes, S.get()));
    CCLC_CUDA(cudaMemsetAsync(Wrong.get(), 0, Wrong.bytes(), S.get()));
    CCLC_CUDA(bench::copyPrimitive(In.get(), Out.get(), Bytes / 4, Channels, S.get()));
    CCLC_CUDA(bench::countDifferent(Out.get(), Bytes / 4, 1.0f, Wrong.get(), S.get()));
    CCLC_CUDA(cudaStreamSynchronize(S.get()));
    if (unsigned long long Bad = Wrong.download()[0]) {
      std::fprintf(stderr, "cclc-gpu-bench: the copy primitive of %llu B: %llu wrong elements\n",
                   static_cast<unsigned long long>(Bytes), Bad);
      ++WrongSizes;
    }
    auto GbPerSecond = [&](const std::function<void()> &Call) {
      for (int I = 0; I < O.Warmup; ++I)
        Call();
      return gbPerSecond(Bytes, T.span(S.get(), O.Iters, Call));
    };
    auto Primitive = [&](int Blocks) {
      return GbPerSecond([&] {
        CCLC_CUDA(bench::copyPrimitive(In.get(), Out.get(), Bytes / 4, Blocks, S.get()));
      });
    };
    double Memcpy = GbPerSecond([&] {
      CCLC_CUDA(cudaMemcpyAsync(Out.get(), In.get(), Bytes, cudaMemcpyDeviceToDevice, S.get()));
    });
    double One = Primitive(1), All = Primitive(Channels), PerChannel = All / Channels;
    std::printf("  %12llu %10.2f | %10.2f %10.3f | %10.2f %10.2f %10.3f\n",
                static_cast<unsigned long long>(Bytes), Memcpy, One, One / Memcpy, All, PerChannel,
                PerChannel / Memcpy);
  }
  std::fflush(stdout);
  return WrongSizes;
}

/// One rank's buffers and the calls it measures.
class RankBench {
public:
  RankBench(RankThread &R, Shared &S, const Options &O)
      : R(R), S(S), O(O), In(O.MaxBytes / 4), Out(O.MaxBytes / 4), Wrong(1) {
    CCLC_CUDA(bench::fillFloats(In.get(), O.MaxBytes / 4, float(R.rank() + 1), R.stream()));
  }

  double copy(uint64_t Bytes) {
    return T.time(R, S, O, [&] {
      CCLC_CUDA(cudaMemcpyAsync(Out.get(), In.get(), Bytes, cudaMemcpyDeviceToDevice, R.stream()));
    });
  }

  /// Checks one allreduce of Bytes on Comm, then times it.
  double allReduce(cclcComm_t Comm, uint64_t Bytes, const std::string &What) {
    size_t Count = Bytes / 4;
    auto Call = [&] {
      perf::check(cclcAllReduce(In.get(), Out.get(), Count, cclcFloat32, cclcSum, Comm, R.stream()),
                  What);
    };
    CCLC_CUDA(cudaMemsetAsync(Out.get(), 0, Bytes, R.stream()));
    CCLC_CUDA(cudaMemsetAsync(Wrong.get(), 0, Wrong.bytes(), R.stream()));
    Call();
    int N = R.nranks();
    CCLC_CUDA(
        bench::countDifferent(Out.get(), Count, float(N * (N + 1) / 2), Wrong.get(), R.stream()));
    unsigned long long Bad = 0;
    CCLC_CUDA(cudaMemcpyAsync(&Bad, Wrong.get(), sizeof Bad, cudaMemcpyDeviceToHost, R.stream()));
    finish(Comm, R.stream(), What);
    if (Bad) {
      std::fprintf(stderr, "cclc-gpu-bench: %s of %llu B: %llu wrong elements on rank %d\n",
                   What.c_str(), static_cast<unsigned long long>(Bytes), Bad, R.rank());
      ++S.WrongResults;
    }
    double Us = T.time(R, S, O, Call);
    finish(Comm, R.stream(), What);
    return Us;
  }

private:
  RankThread &R;
  Shared &S;
  const Options &O;
  DeviceBuffer<float> In, Out;
  DeviceBuffer<unsigned long long> Wrong;
  Timer T;
};

std::vector<uint64_t> sizes(const Options &O) {
  std::vector<uint64_t> Sizes;
  for (uint64_t Bytes = O.MinBytes; Bytes <= O.MaxBytes; Bytes *= O.Factor)
    Sizes.push_back(Bytes / 4 * 4);
  return Sizes;
}

void printCopyHeader(const Options &O) {
  std::printf(
      "#\n# Device-to-device copy: every rank copies the size with cudaMemcpyAsync on its\n"
      "# own stream, all %d at once. GB/s counts every byte copied once (size / time), as\n"
      "# nccl-tests counts a copy's bytes; the memory reads and writes twice that. The\n"
      "# allreduce tables divide their busbw by this GB/s at the same size (bus/copy).\n#\n",
      O.NRanks);
  std::printf("# %12s %10s %10s %10s\n# %12s %10s %10s %10s\n", "size", "time", "GB/s", "all GB/s",
              "(B)", "(us)", "(rank)", "(ranks)");
}

void printCopyRow(Shared &S, uint64_t Bytes, int NRanks) {
  double Us = meanOf(S.Copy);
  S.CopyGbs.push_back(gbPerSecond(Bytes, Us));
  std::printf("  %12llu %10.2f %10.2f %10.2f\n", static_cast<unsigned long long>(Bytes), Us,
              S.CopyGbs.back(), S.CopyGbs.back() * NRanks);
  std::fflush(stdout);
}

void printAllReduceHeader(const Algorithm &A, const Options &O, int Sms) {
  int Blocks = O.NRanks * A.Channels;
  std::printf("#\n# %s: f32 sum, out of place, %d channel%s: %d ranks x %d = %d blocks on %d SMs\n",
              A.Name.c_str(), A.Channels, A.Channels == 1 ? "" : "s", O.NRanks, A.Channels, Blocks,
              Sms);
  if (Blocks > Sms)
    std::printf("# more blocks than SMs: if they cannot all be resident at once, blocks wait on\n"
                "# peers that cannot start, and calls time out\n");
  std::string Interpreter = "GPU plan interpreter, " + O.Protocol;
  std::printf("#\n# %12s | %-38s | %-38s | %8s\n", "", "generated CUDA kernel, simple",
              Interpreter.c_str(), "interp");
  auto Row = [](const char *Size, const char *Time, const char *AlgBw, const char *BusBw,
                const char *Ratio, const char *Speedup) {
    std::printf("# %12s |", Size);
    for (int Side = 0; Side < 2; ++Side)
      std::printf(" %10s %8s %8s %8s |", Time, AlgBw, BusBw, Ratio);
    std::printf(" %8s\n", Speedup);
  };
  Row("size", "time", "algbw", "busbw", "bus/copy", "/gen");
  Row("(B)", "(us)", "(GB/s)", "(GB/s)", "", "");
}

/// Time, algbw, busbw and bus/copy of one executor, or dashes.
void printSide(std::optional<double> Us, uint64_t Bytes, double CopyGbs, int NRanks) {
  if (!Us) {
    std::printf(" %10s %8s %8s %8s |", "-", "-", "-", "-");
    return;
  }
  double AlgBw = gbPerSecond(Bytes, *Us), BusBw = AlgBw * busFactor(NRanks);
  std::printf(" %10.2f %8.2f %8.2f %8.3f |", *Us, AlgBw, BusBw, BusBw / CopyGbs);
}

void printAllReduceRow(const Shared &S, size_t Size, uint64_t Bytes, bool HasKernels, int NRanks) {
  std::optional<double> Generated;
  if (HasKernels)
    Generated = meanOf(S.Generated);
  double Interpreted = meanOf(S.Interpreted);
  std::printf("  %12llu |", static_cast<unsigned long long>(Bytes));
  printSide(Generated, Bytes, S.CopyGbs[Size], NRanks);
  printSide(Interpreted, Bytes, S.CopyGbs[Size], NRanks);
  if (Generated)
    std::printf(" %8.2f\n", Interpreted / *Generated);
  else
    std::printf(" %8s\n", "-");
  std::fflush(stdout);
}

/// One rank's whole run: communicators for every algorithm and executor,
/// the copy at every size, then every algorithm at every size.
void runRank(RankThread &R, Shared &S, const Options &O, const std::vector<Algorithm> &Algos,
             int Sms) {
  int Rank = R.rank();
  RankBench B(R, S, O);
  // Every rank makes its communicators in the same order: per algorithm,
  // the kernels' (where linked), then the plan's.
  std::vector<ScopedComm> Kernels, Plans;
  for (const Algorithm &A : Algos) {
    if (A.Kernels) {
      Kernels.push_back(R.newComm());
      perf::check(
          cclcCommRegisterCudaKernels(Kernels.back().get(), A.Kernels->Infos, A.Kernels->Count),
          "registering the kernels of " + A.Name);
    }
    Plans.push_back(R.newComm());
    perf::check(cclcCommLoadPlan(Plans.back().get(), A.PlanPath.c_str()), "loading " + A.PlanPath);
  }
  std::vector<uint64_t> Sizes = sizes(O);
  if (Rank == 0)
    printCopyHeader(O);
  for (uint64_t Bytes : Sizes) {
    S.Copy[size_t(Rank)] = B.copy(Bytes);
    S.Lineup.arrive_and_wait();
    if (Rank == 0)
      printCopyRow(S, Bytes, O.NRanks);
  }
  for (size_t I = 0, K = 0; I < Algos.size(); ++I) {
    const Algorithm &A = Algos[I];
    cclcComm_t Kernel = A.Kernels ? Kernels[K++].get() : nullptr;
    if (Rank == 0)
      printAllReduceHeader(A, O, Sms);
    for (size_t Size = 0; Size < Sizes.size(); ++Size) {
      if (Kernel)
        S.Generated[size_t(Rank)] =
            B.allReduce(Kernel, Sizes[Size], A.Name + " (generated CUDA kernel)");
      S.Interpreted[size_t(Rank)] =
          B.allReduce(Plans[I].get(), Sizes[Size], A.Name + " (GPU plan interpreter)");
      S.Lineup.arrive_and_wait();
      if (Rank == 0)
        printAllReduceRow(S, Size, Sizes[Size], Kernel != nullptr, O.NRanks);
    }
  }
  for (ScopedComm &C : Kernels)
    C.destroy();
  for (ScopedComm &C : Plans)
    C.destroy();
}

} // namespace

int main(int Argc, char **Argv) {
  Options O;
  CLI::App App{"cclc-gpu-bench: allreduce on one GPU, ranks as threads, against the GPU's "
               "device-to-device copy"};
  App.add_option("--ranks", O.NRanks, "Ranks, threads of this process on device 0")
      ->check(CLI::Range(2, 64));
  App.add_option("-b,--minbytes", O.MinBytes, "Smallest size (K, M, G suffixes)")
      ->transform(CLI::AsSizeValue(false));
  App.add_option("-e,--maxbytes", O.MaxBytes, "Largest size")->transform(CLI::AsSizeValue(false));
  App.add_option("-f,--stepfactor", O.Factor, "Sizes grow by this factor")
      ->check(CLI::Range(2, 1024));
  App.add_option("-n,--iters", O.Iters, "Timed calls per size")->check(CLI::Range(1, 1000000));
  App.add_option("-w,--warmup_iters", O.Warmup, "Untimed calls first")
      ->check(CLI::Range(0, 1000000));
  App.add_option("--protocol", O.Protocol,
                 "How the interpreter's plans send: simple, ll or ll128")
      ->check(CLI::IsMember({"simple", "ll", "ll128"}))
      ->capture_default_str();
  CLI11_PARSE(App, Argc, Argv);
  if (O.MinBytes < 4 || O.MinBytes > O.MaxBytes) {
    std::fprintf(stderr, "cclc-gpu-bench: the sizes must satisfy 4 <= -b <= -e\n");
    return 1;
  }
  if (std::string Why = noDeviceReason(); !Why.empty()) {
    std::fprintf(stderr, "cclc-gpu-bench: %s; it measures collectives on a GPU\n", Why.c_str());
    return 1;
  }
  cudaDeviceProp Device;
  CCLC_CUDA(cudaGetDeviceProperties(&Device, 0));
  int Sms = Device.multiProcessorCount;

  fs::path Dir = fs::temp_directory_path() / ("cclc-gpu-bench-" + std::to_string(getpid()));
  fs::create_directories(Dir);
  std::optional<std::vector<Algorithm>> Algos = algorithms(O, Sms, Dir);
  if (!Algos)
    return 1;
  std::printf("# cclc-gpu-bench: %d ranks, threads of one process with a stream each, on device "
              "0: %s, %d SMs\n"
              "# sizes %llu..%llu B by %llu, iters %d, warmup %d; each time is the mean over the "
              "ranks of\n"
              "# the time per call between events on the rank's stream\n"
              "# busbw = algbw x 2(n-1)/n, as nccl-tests scales allreduce; bus/copy = busbw / "
              "copy GB/s\n",
              O.NRanks, Device.name, Sms, static_cast<unsigned long long>(O.MinBytes),
              static_cast<unsigned long long>(O.MaxBytes),
              static_cast<unsigned long long>(O.Factor), O.Iters, O.Warmup);
  if (O.NRanks != bench::KernelRanks)
    std::printf("# the linked kernels are compiled for %d ranks: only the interpreter runs\n",
                bench::KernelRanks);
  size_t WrongCopies = measureCopyPrimitive(O, sizes(O), Algos->front().Channels);

  Shared S(O.NRanks);
  std::vector<std::string> Failures = runRanks(
      O.NRanks,
      [&](RankThread &R) {
        try {
          runRank(R, S, O, *Algos, Sms);
        } catch (...) {
          // The other ranks no longer wait for this one to line up.
          S.Lineup.arrive_and_drop();
          throw;
        }
      },
      std::chrono::hours(2));
  fs::remove_all(Dir);
  bool Failed = S.WrongResults > 0 || WrongCopies > 0;
  for (size_t Rank = 0; Rank < Failures.size(); ++Rank)
    if (!Failures[Rank].empty()) {
      std::fprintf(stderr, "cclc-gpu-bench: rank %zu: %s\n", Rank, Failures[Rank].c_str());
      Failed = true;
    }
  return Failed ? 1 : 0;
}
