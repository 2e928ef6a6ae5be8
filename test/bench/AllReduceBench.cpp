//===- AllReduceBench.cpp - cclc's collectives against Open MPI and Gloo --===//
//
// Measures, in one run and with one protocol (AllReduceSweep.h), the f32
// collectives of cclc, Open MPI and Gloo with the same number of ranks on
// this host: allreduce by default, and allgather, reduce-scatter, broadcast
// and reduce on request. Next to them it measures what memory allows: every
// rank copying the size between two buffers of its own, all ranks at once.
//
// cclc runs through its C API with the plans it is given; by default the
// benchmark compiles the library's algorithms for each collective measured
// (and for allreduce, which its barrier runs) for the rank count with `cclc
// compile --emit=json --explain`, so that each plan carries the size window
// where the cost model predicts it fastest, and the runtime chooses among
// them per call: priced as CPUs (`--cpu`) for cclcMemAlloc's buffers, whose
// messages move in one memcpy, and by the simple protocol on the GPU link
// model for the heap's, as the PyTorch backend's plans are (python/cclc/plans.py). The cclc, Gloo
// and copy ranks are forked from this process; the MPI ranks are started by
// mpirun running cclc-allreduce-bench-mpi.
//
// Prints one table per collective with latency, nccl-tests' bus bandwidth,
// cclc's speedup over Open MPI and over the fastest Gloo algorithm, and
// cclc's algorithm bandwidth as a fraction of the bound the copy implies;
// writes every figure to a CSV file, whose allreduce lines
// plot-allreduce.py draws.
//
//===----------------------------------------------------------------------===//

#include "AllReduceSweep.h"

#include "plan/Vocabulary.h"
#include "runtime/api/cclc.h"
#include "runtime/net/Children.h"
#include "runtime/perf/LocalRanks.h"

#include <gloo/allgather.h>
#include <gloo/allreduce_halving_doubling.h>
#include <gloo/allreduce_ring_chunked.h>
#include <gloo/barrier.h>
#include <gloo/broadcast.h>
#include <gloo/math.h>
#include <gloo/reduce.h>
#include <gloo/reduce_scatter.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/file_store.h>
#include <gloo/transport/tcp/device.h>

#include <pthread.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <memory>
#include <optional>
#include <stdexcept>
#include <streambuf>
#include <thread>
#include <type_traits>

using namespace cclc::bench;
namespace fs = std::filesystem;

namespace {

enum class LibraryKind { Cclc, OpenMpi, Gloo, Copy };

struct Library {
  const char *Name;
  LibraryKind Kind;
};

/// Gloo's algorithms count as libraries of their own: each has its own
/// calls, and serves only some collectives.
const Library Libraries[] = {
    {"cclc", LibraryKind::Cclc},
    {"openmpi", LibraryKind::OpenMpi},
    {"gloo-ring-chunked", LibraryKind::Gloo},
    {"gloo-halving-doubling", LibraryKind::Gloo},
    {"gloo-ring", LibraryKind::Gloo},
    {"gloo-binomial-tree", LibraryKind::Gloo},
};

/// The copy that bounds the collectives, measured like a library.
const Library Copy = {"memcpy", LibraryKind::Copy};

using GlooContext = std::shared_ptr<gloo::rendezvous::Context>;

/// One of Gloo's algorithms for a collective: made once per size over the
/// rank's buffers, it gives what runs one call.
struct GlooCall {
  const char *Library;
  /// The algorithm's name in the tables.
  const char *Algorithm;
  /// Gloo's classic algorithms reduce in place, the result at the start of
  /// the buffer.
  bool InPlace;
  std::function<void()> (*Make)(const GlooContext &Context, float *In, float *Out,
                                const Message &M);
};

/// How cclc and Gloo run one collective of Collectives (Open MPI's calls are
/// in AllReduceMpi.cpp, the program mpirun starts).
struct CollectiveCalls {
  const char *Collective;
  /// cclc runs it in place, as Open MPI and Gloo do where their API has one
  /// buffer (broadcast): an out-of-place broadcast also copies the root's
  /// input to its output, which the others never do.
  bool InPlace;
  /// The library algorithms cclc chooses among when no --plan is given.
  std::vector<const char *> Plans;
  cclcResult_t (*Cclc)(const float *In, float *Out, const Message &M, cclcComm_t Comm);
  std::vector<GlooCall> Gloo;
};

/// Gloo's classic allreduce algorithms are objects made over the buffer once
/// per size, which every call runs.
template <typename Algorithm>
std::function<void()> glooAllReduce(const GlooContext &Context, float *Buffer, float *,
                                    const Message &M) {
  auto A = std::make_shared<Algorithm>(Context, std::vector<float *>{Buffer}, int(M.SendCount));
  return [A] { A->run(); };
}

/// Gloo's collective functions take their buffers in an options object,
/// which serves every call of a size.
template <typename Options, void (*Run)(Options &)>
std::function<void()> glooFunction(const GlooContext &Context, float *In, float *Out,
                                   const Message &M) {
  auto O = std::make_shared<Options>(Context);
  if constexpr (std::is_same_v<Options, gloo::BroadcastOptions>) {
    // Only the root may give Gloo's broadcast an input.
    if (Context->rank == Root)
      O->setInput(In, M.SendCount);
  } else {
    O->setInput(In, M.SendCount);
  }
  O->setOutput(Out, M.RecvCount);
  if constexpr (std::is_same_v<Options, gloo::ReduceOptions>)
    O->setReduceFunction(
        static_cast<void (*)(void *, const void *, const void *, size_t)>(&gloo::sum<float>));
  if constexpr (!std::is_same_v<Options, gloo::AllgatherOptions>)
    O->setRoot(Root);
  return [O] { Run(*O); };
}

const CollectiveCalls Calls[] = {
    {"allreduce",
     false,
     {"butterfly-allreduce", "halving-doubling-allreduce", "ring-allreduce"},
     [](const float *In, float *Out, const Message &M, cclcComm_t Comm) {
       return cclcAllReduce(In, Out, M.SendCount, cclcFloat32, cclcSum, Comm, nullptr);
     },
     {{"gloo-ring-chunked", "ring_chunked", true, glooAllReduce<gloo::AllreduceRingChunked<float>>},
      {"gloo-halving-doubling", "halving_doubling", true,
       glooAllReduce<gloo::AllreduceHalvingDoubling<float>>}}},
    {"allgather",
     false,
     {"recursive-doubling-allgather", "ring-allgather"},
     [](const float *In, float *Out, const Message &M, cclcComm_t Comm) {
       return cclcAllGather(In, Out, M.Block, cclcFloat32, Comm, nullptr);
     },
     {{"gloo-ring", "ring", false, glooFunction<gloo::AllgatherOptions, gloo::allgather>}}},
    {"reduce-scatter",
     false,
     {"recursive-halving-reduce-scatter", "ring-reduce-scatter"},
     [](const float *In, float *Out, const Message &M, cclcComm_t Comm) {
       return cclcReduceScatter(In, Out, M.Block, cclcFloat32, cclcSum, Comm, nullptr);
     },
     {{"gloo-halving-doubling", "halving_doubling", true,
       [](const GlooContext &Context, float *Buffer, float *, const Message &M) {
         auto A = std::make_shared<gloo::ReduceScatterHalvingDoubling<float>>(
             Context, std::vector<float *>{Buffer}, int(M.SendCount),
             std::vector<int>(Context->size, int(M.Block)));
         return std::function<void()>([A] { A->run(); });
       }}}},
    {"broadcast",
     true,
     {"binomial-broadcast", "ring-broadcast"},
     [](const float *In, float *Out, const Message &M, cclcComm_t Comm) {
       return cclcBroadcast(In, Out, M.SendCount, cclcFloat32, Root, Comm, nullptr);
     },
     {{"gloo-binomial-tree", "binomial_tree", false,
       glooFunction<gloo::BroadcastOptions, gloo::broadcast>}}},
    {"reduce",
     false,
     {"binomial-reduce", "halving-doubling-reduce", "ring-reduce"},
     [](const float *In, float *Out, const Message &M, cclcComm_t Comm) {
       return cclcReduce(In, Out, M.SendCount, cclcFloat32, cclcSum, Root, Comm, nullptr);
     },
     {{"gloo-ring", "ring", false, glooFunction<gloo::ReduceOptions, gloo::reduce>}}},
};

/// Gloo's algorithm of Library for C, or nullptr where Library has none.
const GlooCall *glooCallFor(const Collective &C, const char *Library) {
  for (const GlooCall &G : entryFor(Calls, C).Gloo)
    if (std::strcmp(G.Library, Library) == 0)
      return &G;
  return nullptr;
}

/// Learns which algorithm cclc runs from the runtime itself: with
/// CCLC_DEBUG=INFO it logs "allreduce of 1 KiB (f32, sum) runs NAME (...)"
/// the first time a call runs an algorithm. Installed as the runtime's log
/// handler (one per process: a rank of the sweep), it keeps those lines off
/// the terminal, remembers the last algorithm named, and writes every other
/// line as the runtime would. Since a sweep's sizes only grow and each
/// algorithm serves one window of sizes, the last algorithm named is the
/// one that ran the last call.
class ChoiceLog {
public:
  ChoiceLog() {
    Active = this;
    cclcSetLogHandler(&ChoiceLog::line);
  }
  ~ChoiceLog() {
    cclcSetLogHandler(nullptr);
    Active = nullptr;
  }
  ChoiceLog(const ChoiceLog &) = delete;
  ChoiceLog &operator=(const ChoiceLog &) = delete;

  const std::string &last() const { return Last; }
  /// While paused, choices are not remembered: the barrier's one-element
  /// calls are not what the sweep measures.
  void pause(bool Paused) { this->Paused = Paused; }

private:
  static void line(const char *Level, int Rank, const char *Message) {
    static const std::string Runs = ") runs ";
    const std::string Text = Message;
    const size_t At = Text.find(Runs);
    if (std::string(Level) == "INFO" && At != std::string::npos) {
      const size_t Start = At + Runs.size();
      if (Active && !Active->Paused)
        Active->Last = Text.substr(Start, Text.find(' ', Start) - Start);
      return;
    }
    std::fprintf(stderr, "cclc %s rank %d: %s\n", Level, Rank, Message);
  }

  static inline ChoiceLog *Active = nullptr;
  std::string Last;
  bool Paused = false;
};

/// cclc through its C API, with every plan loaded into the communicator.
class CclcRunner : public CollectiveRunner {
public:
  /// Registered: the buffers come from cclcMemAlloc, which the peers map.
  CclcRunner(const CollectiveCalls &Calls, const cclcUniqueId &Id, int Rank, int NRanks,
             const std::vector<std::string> &Plans, bool Registered)
      : CollectiveRunner(Calls.InPlace, Registered ? SharedMemory : Floats::Heap), Calls(Calls) {
    // The runtime reads CCLC_DEBUG when the communicator is made.
    setenv("CCLC_DEBUG", "INFO", 1);
    check(cclcCommInitRank(&Comm, NRanks, Id, Rank), "cclcCommInitRank");
    for (const std::string &Plan : Plans)
      check(cclcCommLoadPlan(Comm, Plan.c_str()), "cclcCommLoadPlan " + Plan);
  }
  ~CclcRunner() override {
    if (Comm)
      cclcCommDestroy(Comm);
  }

  void run() override {
    // The timed call: its description is built only when it fails.
    if (cclcResult_t Result = Calls.Cclc(Input.data(), outputBuffer(), Msg, Comm);
        Result != cclcSuccess)
      check(Result, std::string("cclc ") + Calls.Collective);
  }
  void barrier() override {
    float One = 1, Sum = 0;
    Log.pause(true);
    check(cclcAllReduce(&One, &Sum, 1, cclcFloat32, cclcSum, Comm, nullptr), "cclcAllReduce");
    Log.pause(false);
  }
  std::string algorithm() override { return Log.last(); }

private:
  /// cclcMemAlloc's memory, as a runner's buffers.
  static constexpr Floats::Source SharedMemory = {
      [](size_t Count) {
        void *P = nullptr;
        if (cclcMemAlloc(&P, Count * sizeof(float)) != cclcSuccess)
          throw std::runtime_error(std::string("cclcMemAlloc failed: ") +
                                   cclcGetLastError(nullptr));
        return static_cast<float *>(P);
      },
      [](float *P) { cclcMemFree(P); }};

  void check(cclcResult_t Result, const std::string &What) {
    if (Result != cclcSuccess)
      throw std::runtime_error(What + " failed: " + cclcGetErrorString(Result) + ": " +
                               cclcGetLastError(Comm));
  }

  const CollectiveCalls &Calls;
  ChoiceLog Log;
  cclcComm_t Comm = nullptr;
};

/// Gloo's algorithms over its TCP transport on loopback, connected through a
/// file store: how Gloo runs ranks of one host without a launcher.
class GlooRunner : public CollectiveRunner {
public:
  GlooRunner(const GlooCall &Call, int Rank, int NRanks, const fs::path &StoreDir)
      : CollectiveRunner(Call.InPlace), Call(Call),
        Context(std::make_shared<gloo::rendezvous::Context>(Rank, NRanks)) {
    gloo::transport::tcp::attr Loopback("127.0.0.1");
    std::shared_ptr<gloo::transport::Device> Device =
        gloo::transport::tcp::CreateDevice(Loopback);
    gloo::rendezvous::FileStore Store(StoreDir);
    Context->connectFullMesh(Store, Device);
  }

  void prepare(const Message &M) override {
    // The last size's algorithm holds on to the buffers about to be replaced.
    Run = nullptr;
    CollectiveRunner::prepare(M);
    Run = Call.Make(Context, Input.data(), outputBuffer(), M);
  }
  void run() override { Run(); }
  void barrier() override {
    gloo::BarrierOptions Options(Context);
    gloo::barrier(Options);
  }
  std::string algorithm() override { return Call.Algorithm; }

private:
  const GlooCall &Call;
  GlooContext Context;
  std::function<void()> Run;
};

/// A barrier of forked ranks, in memory they share: made before the fork.
class SharedBarrier {
public:
  explicit SharedBarrier(int NRanks) {
    void *Memory = mmap(nullptr, sizeof(pthread_barrier_t), PROT_READ | PROT_WRITE,
                        MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (Memory == MAP_FAILED)
      throw std::runtime_error(std::string("mmap: ") + std::strerror(errno));
    Barrier = static_cast<pthread_barrier_t *>(Memory);
    pthread_barrierattr_t Attributes;
    pthread_barrierattr_init(&Attributes);
    pthread_barrierattr_setpshared(&Attributes, PTHREAD_PROCESS_SHARED);
    pthread_barrier_init(Barrier, &Attributes, unsigned(NRanks));
    pthread_barrierattr_destroy(&Attributes);
  }
  ~SharedBarrier() {
    pthread_barrier_destroy(Barrier);
    munmap(Barrier, sizeof(pthread_barrier_t));
  }
  SharedBarrier(const SharedBarrier &) = delete;
  SharedBarrier &operator=(const SharedBarrier &) = delete;

  void wait() { pthread_barrier_wait(Barrier); }

private:
  pthread_barrier_t *Barrier;
};

/// Every rank copies its input to its output: the fastest any collective
/// can read its input and write its output.
class CopyRunner : public CollectiveRunner {
public:
  explicit CopyRunner(SharedBarrier &Barrier) : Barrier(Barrier) {}
  void run() override { std::memcpy(Output.data(), Input.data(), Msg.Bytes); }
  void barrier() override { Barrier.wait(); }
  std::string algorithm() override { return "memcpy"; }

private:
  SharedBarrier &Barrier;
};

/// Reads Fd to its end, one line at a time.
void forEachLine(int Fd, const std::function<void(const std::string &)> &OnLine) {
  FILE *In = fdopen(Fd, "r");
  char *Line = nullptr;
  size_t Capacity = 0;
  for (ssize_t N; (N = getline(&Line, &Capacity, In)) > 0;)
    OnLine(std::string(Line, static_cast<size_t>(N)));
  std::free(Line);
  std::fclose(In);
}

/// Gives the ranks' lines of times to Figures; other lines (a launcher's
/// notices) go on to stderr.
std::function<void(const std::string &)> figureCollector(FigureCollector &Figures) {
  return [&Figures](const std::string &Line) {
    if (!Figures.take(Line))
      std::fputs(Line.c_str(), stderr);
  };
}

bool succeeded(int Status) { return WIFEXITED(Status) && WEXITSTATUS(Status) == 0; }

/// True when every rank of Job exited with 0; says how the others ended.
bool ranksSucceeded(const std::string &Job, const std::vector<int> &Status) {
  bool Ok = true;
  for (size_t Rank = 0; Rank < Status.size(); ++Rank)
    if (!succeeded(Status[Rank])) {
      std::fprintf(stderr, "error: %s rank %zu %s\n", Job.c_str(), Rank,
                   cclc::perf::describeStatus(Status[Rank]).c_str());
      Ok = false;
    }
  return Ok;
}

/// Runs Arguments as a command, passing each line of its stdout to OnLine;
/// returns whether it succeeded.
bool runCommand(std::vector<std::string> Arguments,
                const std::function<void(const std::string &)> &OnLine) {
  std::vector<char *> Argv;
  for (std::string &A : Arguments)
    Argv.push_back(A.data());
  Argv.push_back(nullptr);
  int Pipe[2];
  if (pipe(Pipe) != 0)
    return false;
  std::fflush(nullptr);
  pid_t Child = fork();
  if (Child == 0) {
    close(Pipe[0]);
    dup2(Pipe[1], STDOUT_FILENO);
    execv(Argv[0], Argv.data());
    std::perror(Argv[0]);
    _exit(127);
  }
  close(Pipe[1]);
  forEachLine(Pipe[0], OnLine);
  int Status = 0;
  return Child > 0 && waitpid(Child, &Status, 0) == Child && succeeded(Status);
}

struct BenchConfig {
  int NRanks = 4;
  SweepOptions Sweep;
  std::vector<std::string> Plans;
  /// cclc's buffers from cclcMemAlloc rather than the C heap.
  bool Registered = true;
  /// Where the Gloo store and the compiled plans live during the run.
  fs::path WorkDir;
};

/// One rank's part of a forked job: makes its runner and runs the sweep of
/// C, writing its times to Fd. Returns the rank's exit code, which
/// is not 0 when the rank got wrong results.
int sweepRank(const BenchConfig &Config, const Collective &C, int Rank, int Fd,
              const std::function<std::unique_ptr<CollectiveRunner>()> &MakeRunner) {
  FILE *Out = fdopen(Fd, "w");
  int Code = 0;
  try {
    std::unique_ptr<CollectiveRunner> Runner = MakeRunner();
    Code = runSweep(*Runner, C, Rank, Config.NRanks, Config.Sweep, Out) ? 1 : 0;
  } catch (const std::exception &E) {
    std::fprintf(stderr, "rank %d: %s\n", Rank, E.what());
    Code = 1;
  }
  std::fclose(Out);
  return Code;
}

/// Runs Body(Rank) in NRanks forked processes and returns their wait
/// statuses; a rank that could not be forked is reported and counts as
/// failed.
std::vector<int> forkRanks(int NRanks, const std::function<int(int Rank)> &Body) {
  std::fflush(nullptr);
  std::vector<pid_t> Children;
  for (int Rank = 0; Rank < NRanks; ++Rank) {
    pid_t Child = fork();
    if (Child == 0)
      _exit(Body(Rank));
    if (Child < 0) {
      std::perror("fork");
      break;
    }
    Children.push_back(Child);
  }
  std::vector<int> Status = cclc::net::waitForChildren(Children, {});
  // A rank never forked "exited with 1".
  Status.resize(size_t(NRanks), 1 << 8);
  return Status;
}

/// Runs a job of forked ranks: Launch starts them, each writing its times to
/// the file descriptor it is given, and returns their wait statuses.
/// Returns the figures, or nullopt when a rank failed.
std::optional<std::vector<Figure>>
runForkedJob(const std::string &Job, const std::function<std::vector<int>(int Fd)> &Launch) {
  int Pipe[2];
  if (pipe(Pipe) != 0)
    return std::nullopt;
  std::vector<int> Status;
  try {
    Status = Launch(Pipe[1]);
  } catch (const std::exception &E) {
    std::fprintf(stderr, "error: %s: %s\n", Job.c_str(), E.what());
    Status.assign(1, 1 << 8);
  }
  close(Pipe[1]);
  // The figures wait in the pipe: a sweep writes far less than it holds.
  FigureCollector Figures;
  forEachLine(Pipe[0], figureCollector(Figures));
  return ranksSucceeded(Job, Status) ? std::optional(Figures.figures()) : std::nullopt;
}

std::optional<std::vector<Figure>> runCclc(const Collective &C, const BenchConfig &Config) {
  return runForkedJob(std::string("cclc ") + C.Name, [&](int Fd) {
    return cclc::perf::runLocalRanks(Config.NRanks, [&](int Rank, const cclcUniqueId &Id) {
      return sweepRank(Config, C, Rank, Fd, [&] {
        return std::make_unique<CclcRunner>(entryFor(Calls, C), Id, Rank, Config.NRanks,
                                            Config.Plans, Config.Registered);
      });
    });
  });
}

std::optional<std::vector<Figure>> runGloo(const Collective &C, const GlooCall &Call,
                                           const BenchConfig &Config) {
  fs::path StoreDir = Config.WorkDir / "gloo-store";
  fs::remove_all(StoreDir);
  fs::create_directories(StoreDir);
  return runForkedJob(std::string(Call.Library) + " " + C.Name, [&](int Fd) {
    return forkRanks(Config.NRanks, [&](int Rank) {
      return sweepRank(Config, C, Rank, Fd, [&] {
        return std::make_unique<GlooRunner>(Call, Rank, Config.NRanks, StoreDir);
      });
    });
  });
}

std::optional<std::vector<Figure>> runCopy(const BenchConfig &Config) {
  SharedBarrier Barrier(Config.NRanks);
  return runForkedJob(Copy.Name, [&](int Fd) {
    return forkRanks(Config.NRanks, [&](int Rank) {
      return sweepRank(Config, MemoryCopy, Rank, Fd,
                       [&] { return std::make_unique<CopyRunner>(Barrier); });
    });
  });
}

/// The MPI side runs under mpirun, unbound and allowed to oversubscribe the
/// cores like the forked ranks, its TCP traffic on loopback only.
std::optional<std::vector<Figure>> runOpenMpi(const Collective &C, const BenchConfig &Config) {
  std::vector<std::string> Arguments = {CCLC_MPIEXEC, "-np", std::to_string(Config.NRanks),
                                        "--oversubscribe", "--bind-to", "none",
                                        "--mca", "oob_tcp_if_include", "lo",
                                        "--mca", "btl_tcp_if_include", "lo"};
  if (geteuid() == 0)
    Arguments.push_back("--allow-run-as-root");
  Arguments.push_back(CCLC_ALLREDUCE_BENCH_MPI);
  for (const std::string &A : Config.Sweep.arguments())
    Arguments.push_back(A);
  Arguments.push_back("--collective");
  Arguments.push_back(C.Name);
  FigureCollector Figures;
  if (!runCommand(Arguments, figureCollector(Figures)))
    return std::nullopt;
  return Figures.figures();
}

/// One sweep of the run: a library's calls of one collective, or the copy.
struct Job {
  const Collective *C;
  const Library *Lib;
  /// Gloo's algorithm, for Gloo's libraries.
  const GlooCall *Gloo = nullptr;
  std::vector<std::vector<Figure>> Rounds = {};
  bool Failed = false;
};

std::optional<std::vector<Figure>> runJob(const Job &J, const BenchConfig &Config) {
  switch (J.Lib->Kind) {
  case LibraryKind::Cclc:
    return runCclc(*J.C, Config);
  case LibraryKind::OpenMpi:
    return runOpenMpi(*J.C, Config);
  case LibraryKind::Gloo:
    return runGloo(*J.C, *J.Gloo, Config);
  case LibraryKind::Copy:
    return runCopy(Config);
  }
  return std::nullopt;
}

/// Compiles the default algorithms of the measured collectives, and of
/// allreduce, which cclc's barrier runs, for the configured rank count,
/// leaving out those that do not serve it (the power-of-two ones for 6
/// ranks); each plan records the size window where the cost model predicts
/// it fastest, and `--explain` prints as a "window:" line. For cclcMemAlloc's
/// buffers the model prices CPUs (`--cpu`); for the heap's, whose large
/// messages take a system call or two copies, which no model prices, the GPU
/// link model by the simple protocol host executors run, whose windows match
/// what was measured there.
void compileDefaultPlans(BenchConfig &Config, const std::vector<const Collective *> &Measured) {
  for (const CollectiveCalls &Entry : Calls) {
    bool Needed = std::strcmp(Entry.Collective, "allreduce") == 0 ||
                  std::any_of(Measured.begin(), Measured.end(), [&](const Collective *C) {
                    return std::strcmp(C->Name, Entry.Collective) == 0;
                  });
    if (!Needed)
      continue;
    for (const char *Algorithm : Entry.Plans) {
      fs::path Plan = Config.WorkDir / (std::string(Algorithm) + ".json");
      bool Ok = runCommand({CCLC_COMPILER, "compile",
                            std::string(CCLC_ALGORITHMS_DIR) + "/" + Algorithm + ".ccl", "--nranks",
                            std::to_string(Config.NRanks), "--root", std::to_string(Root),
                            "--emit=json", Config.Registered ? "--cpu" : "--protocol=simple",
                            "--buffers", Config.Registered ? "mapped" : "unmapped", "--explain",
                            "--algorithms", CCLC_ALGORITHMS_DIR, "-o", Plan.string()},
                           [&](const std::string &Line) {
                             if (Line.rfind("window:", 0) == 0)
                               std::fprintf(stderr, "cclc plan %s %s", Algorithm, Line.c_str());
                           });
      if (Ok)
        Config.Plans.push_back(Plan.string());
      else
        std::fprintf(stderr, "cclc plan %s left out: it does not compile for %d ranks\n", Algorithm,
                     Config.NRanks);
    }
  }
}

/// One library's rounds, size by size: the median time.
std::vector<Figure> combineRounds(const std::vector<std::vector<Figure>> &Rounds) {
  std::vector<Figure> Combined = Rounds.front();
  for (size_t I = 0; I < Combined.size(); ++I) {
    std::vector<double> Times;
    for (const std::vector<Figure> &Round : Rounds)
      if (I < Round.size())
        Times.push_back(Round[I].TimeUs);
    Combined[I].TimeUs = median(Times);
  }
  return Combined;
}

/// The load average over 1, 5 and 15 minutes: the figures depend on what
/// else the machine runs.
std::string loadAverage() {
  double Load[3] = {0, 0, 0};
  getloadavg(Load, 3);
  char Text[64];
  std::snprintf(Text, sizeof Text, "%.2f %.2f %.2f", Load[0], Load[1], Load[2]);
  return Text;
}

/// A library's combined figures for one collective.
struct Result {
  const Library *Lib;
  std::vector<Figure> Figures;

  /// The figure of the sweep's size Bytes, if the library has one.
  const Figure *at(size_t Bytes) const {
    auto It = std::find_if(Figures.begin(), Figures.end(),
                           [&](const Figure &F) { return F.Bytes == Bytes; });
    return It == Figures.end() ? nullptr : &*It;
  }
};

/// What one collective's table and CSV lines need.
struct Report {
  const Collective *C;
  std::vector<Result> Results;
};

double algBandwidthGBs(const Message &M, const Figure &F) {
  return static_cast<double>(M.Bytes) / (F.TimeUs * 1e3);
}

/// The algorithm bandwidth memory allows a collective: every rank must at
/// least read its input and write its output once, SendCount + RecvCount
/// elements, where the copy reads and writes its size once each. So a call
/// takes at least (send + receive bytes) / (2 × the copy's GB/s).
double boundGBs(const Message &M, double CopyGBs) {
  double Moved = static_cast<double>((M.SendCount + M.RecvCount) * sizeof(float));
  return 2.0 * CopyGBs * static_cast<double>(M.Bytes) / Moved;
}

/// The copy's GB/s per rank at the sweep's size Bytes, if it was measured.
std::optional<double> copyGBs(const Result &CopyResult, size_t Bytes, int NRanks) {
  const Figure *F = CopyResult.at(Bytes);
  if (!F)
    return std::nullopt;
  return algBandwidthGBs(*MemoryCopy.message(Bytes, NRanks), *F);
}

/// The time of the fastest library Select accepts at the sweep's size Bytes.
std::optional<double> bestTime(const std::vector<Result> &Results, size_t Bytes,
                               const std::function<bool(const Library &)> &Select) {
  std::optional<double> Best;
  for (const Result &R : Results)
    if (const Figure *F = R.at(Bytes); F && Select(*R.Lib))
      Best = std::min(Best.value_or(F->TimeUs), F->TimeUs);
  return Best;
}

bool isCclc(const Library &L) { return L.Kind == LibraryKind::Cclc; }

/// cclc's speedup over the libraries Select accepts: their best time over
/// cclc's, which is also cclc's bus bandwidth over theirs.
void printSpeedup(const std::vector<Result> &Results, size_t Bytes,
                  const std::function<bool(const Library &)> &Select) {
  std::optional<double> Cclc = bestTime(Results, Bytes, isCclc);
  std::optional<double> Other = bestTime(Results, Bytes, Select);
  if (Cclc && Other)
    std::printf("  %9.2fx", *Other / *Cclc);
  else
    std::printf("  %10s", "-");
}

/// What a collective's size counts, for its table's heading.
const char *sizeMeaning(Layout Shape) {
  switch (Shape) {
  case Layout::Whole:
    return "each rank's message";
  case Layout::Gather:
    return "each rank's output, n x its input";
  case Layout::Scatter:
    return "each rank's input, n x its output";
  }
  return "";
}

void printTable(const Report &R, const Result &CopyResult, const SweepOptions &Options,
                int NRanks) {
  const Collective &C = *R.C;
  std::printf("\n# %s: size is %s; busbw = algbw x %.3g; bound = algbw the copy allows\n", C.Name,
              sizeMeaning(C.Shape), C.BusFactor(NRanks));
  std::printf("%10s", "size");
  for (const Result &Res : R.Results)
    std::printf("  %22s", Res.Lib->Name);
  std::printf("  %10s  %10s  %10s  %10s  %10s  %s\n", "cclc/ompi", "cclc/gloo", "copy", "bound",
              "cclc", "cclc algorithm");
  std::printf("%10s", "");
  for (size_t I = 0; I < R.Results.size(); ++I)
    std::printf("  %10s %11s", "time us", "busbw GB/s");
  std::printf("  %10s  %10s  %10s  %10s  %10s\n", "speedup", "speedup", "GB/s/rank", "algbw GB/s",
              "/ bound");
  for (size_t Bytes : Options.sizes()) {
    std::optional<Message> M = C.message(Bytes, NRanks);
    if (!M)
      continue;
    std::printf("%10s", cclc::plan::formatBytes(M->Bytes).c_str());
    std::string CclcAlgorithm = "-";
    std::optional<double> CclcAlgBw;
    for (const Result &Res : R.Results) {
      const Figure *F = Res.at(Bytes);
      if (!F) {
        std::printf("  %10s %11s", "-", "-");
        continue;
      }
      // Below 10 us a tenth is a third of a small call: two decimals.
      std::printf("  %10.*f %11.3f", F->TimeUs < 10 ? 2 : 1, F->TimeUs,
                  algBandwidthGBs(*M, *F) * C.BusFactor(NRanks));
      if (isCclc(*Res.Lib)) {
        CclcAlgorithm = F->Algorithm;
        CclcAlgBw = algBandwidthGBs(*M, *F);
      }
    }
    printSpeedup(R.Results, Bytes, [](const Library &L) { return L.Kind == LibraryKind::OpenMpi; });
    printSpeedup(R.Results, Bytes, [](const Library &L) { return L.Kind == LibraryKind::Gloo; });
    if (std::optional<double> CopyGBs = copyGBs(CopyResult, Bytes, NRanks)) {
      double Bound = boundGBs(*M, *CopyGBs);
      std::printf("  %10.3f  %10.3f", *CopyGBs, Bound);
      if (CclcAlgBw)
        std::printf("  %10.3f", *CclcAlgBw / Bound);
      else
        std::printf("  %10s", "-");
    } else {
      std::printf("  %10s  %10s  %10s", "-", "-", "-");
    }
    std::printf("  %s\n", CclcAlgorithm.c_str());
  }
}

/// Every figure, one line per collective, library and size; the copy's lines
/// come under the collective "copy".
void writeCsv(const std::string &Path, const std::vector<Report> &Reports, const Result &CopyResult,
              int NRanks, const std::string &Machine) {
  std::ofstream Out(Path);
  // The plot's title.
  Out << "# " << Machine << "\n";
  Out << "collective,library,algorithm,bytes,count,time_us,algbw_gbs,busbw_gbs,"
         "bound_algbw_gbs,of_bound\n";
  auto WriteLines = [&](const Collective &C, const Result &Res) {
    for (const Figure &F : Res.Figures) {
      Message M = *C.message(F.Bytes, NRanks);
      double AlgBw = algBandwidthGBs(M, F);
      Out << C.Name << ',' << Res.Lib->Name << ',' << F.Algorithm << ',' << M.Bytes << ','
          << M.Bytes / sizeof(float) << ',' << F.TimeUs << ',' << AlgBw << ','
          << AlgBw * C.BusFactor(NRanks) << ',';
      if (std::optional<double> CopyGBs = copyGBs(CopyResult, F.Bytes, NRanks)) {
        double Bound = boundGBs(M, *CopyGBs);
        Out << Bound << ',' << AlgBw / Bound;
      } else {
        Out << ',';
      }
      Out << '\n';
    }
  };
  WriteLines(MemoryCopy, CopyResult);
  for (const Report &R : Reports)
    for (const Result &Res : R.Results)
      WriteLines(*R.C, Res);
}

} // namespace

int main(int Argc, char **Argv) {
  CLI::App App("Measures the f32 collectives of cclc, Open MPI and Gloo on this host against a "
               "memory copy, prints a comparison and writes a CSV");
  BenchConfig Config;
  addSweepOptions(App, Config.Sweep);
  App.add_option("-n,--nranks", Config.NRanks, "Ranks per library")
      ->capture_default_str()
      ->check(CLI::Range(2, 64));
  App.add_option("--plan", Config.Plans,
                 "A plan cclc loads (cclc compile --emit=json); default: the library's "
                 "algorithms for each collective measured, with the cost model's windows")
      ->check(CLI::ExistingFile);
  std::string Buffers = "cclcMemAlloc";
  App.add_option("--cclc-buffers", Buffers,
                 "Where cclc's buffers come from: cclcMemAlloc, which the ranks of the host "
                 "map (as NCCL's registered buffers), or malloc, like the other libraries'")
      ->capture_default_str()
      ->check(CLI::IsMember({"cclcMemAlloc", "malloc"}));
  std::string CsvPath = "allreduce-bench.csv";
  App.add_option("--csv", CsvPath, "Where to write every figure")->capture_default_str();
  std::vector<std::string> Selected;
  for (const Library &L : Libraries)
    Selected.push_back(L.Name);
  std::vector<std::string> Names = Selected;
  App.add_option("--libraries", Selected, "Libraries to measure")
      ->capture_default_str()
      ->check(CLI::IsMember(Names));
  std::vector<std::string> CollectiveNames = {"allreduce"};
  std::vector<std::string> KnownCollectives = {"all"};
  for (const Collective &C : Collectives)
    KnownCollectives.push_back(C.Name);
  App.add_option("--collectives", CollectiveNames,
                 "Collectives to measure (repeatable), or all of them")
      ->capture_default_str()
      ->check(CLI::IsMember(KnownCollectives));
  int NRounds = 1;
  App.add_option("--rounds", NRounds,
                 "Sweeps per library, taking turns so that a change in the machine's load "
                 "falls on every library; each size reports the median round")
      ->capture_default_str()
      ->check(CLI::Range(1, 100));
  CLI11_PARSE(App, Argc, Argv);
  Config.Registered = Buffers == "cclcMemAlloc";

  std::vector<const Collective *> Measured;
  for (const Collective &C : Collectives)
    if (std::any_of(CollectiveNames.begin(), CollectiveNames.end(),
                    [&](const std::string &N) { return N == "all" || N == C.Name; }))
      Measured.push_back(&C);

  std::string Template = (fs::temp_directory_path() / "cclc-allreduce-bench-XXXXXX").string();
  if (!mkdtemp(Template.data())) {
    std::perror("mkdtemp");
    return 1;
  }
  Config.WorkDir = Template;
  if (Config.Plans.empty())
    compileDefaultPlans(Config, Measured);

  std::string LoadBefore = loadAverage();
  std::printf("# %d ranks on %u cores, load average %s; cclc's buffers from %s\n",
              Config.NRanks, std::thread::hardware_concurrency(), LoadBefore.c_str(),
              Buffers.c_str());
  // The copy first, then every library that has a call for each collective.
  std::vector<Job> Jobs = {{&MemoryCopy, &Copy}};
  for (const Collective *C : Measured)
    for (const Library &L : Libraries) {
      if (std::find(Selected.begin(), Selected.end(), L.Name) == Selected.end())
        continue;
      const GlooCall *Gloo = L.Kind == LibraryKind::Gloo ? glooCallFor(*C, L.Name) : nullptr;
      if (L.Kind != LibraryKind::Gloo || Gloo)
        Jobs.push_back({C, &L, Gloo});
    }
  for (int Round = 1; Round <= NRounds; ++Round)
    for (Job &J : Jobs) {
      if (J.Failed)
        continue;
      std::fprintf(stderr, "measuring %s %s, round %d of %d\n", J.Lib->Name, J.C->Name, Round,
                   NRounds);
      if (std::optional<std::vector<Figure>> Figures = runJob(J, Config))
        J.Rounds.push_back(std::move(*Figures));
      else
        J.Failed = true;
    }
  fs::remove_all(Config.WorkDir);

  bool Ok = true;
  Result CopyResult{&Copy, {}};
  std::vector<Report> Reports;
  for (const Collective *C : Measured)
    Reports.push_back({C, {}});
  for (const Job &J : Jobs) {
    if (J.Failed) {
      std::fprintf(stderr, "error: %s %s failed; its figures are left out\n", J.Lib->Name,
                   J.C->Name);
      Ok = false;
      continue;
    }
    Result Res{J.Lib, combineRounds(J.Rounds)};
    if (J.C == &MemoryCopy)
      CopyResult = std::move(Res);
    else
      std::find_if(Reports.begin(), Reports.end(), [&](const Report &R) {
        return R.C == J.C;
      })->Results.push_back(std::move(Res));
  }
  for (const Report &R : Reports)
    printTable(R, CopyResult, Config.Sweep, Config.NRanks);
  std::string LoadAfter = loadAverage();
  std::printf("# load average %s after the run\n", LoadAfter.c_str());
  writeCsv(CsvPath, Reports, CopyResult, Config.NRanks,
           std::to_string(Config.NRanks) + " ranks on " +
               std::to_string(std::thread::hardware_concurrency()) + " cores, load average " +
               LoadBefore + " before and " + LoadAfter + " after the run");
  return Ok ? 0 : 1;
}
