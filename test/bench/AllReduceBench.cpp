//===- AllReduceBench.cpp - cclc's allreduce against Open MPI and Gloo ----===//
//
// Measures, in one run and with one protocol (AllReduceSweep.h), the f32 sum
// allreduce of cclc, Open MPI's MPI_Allreduce and Gloo's ring-chunked and
// halving-doubling allreduce, with the same number of ranks on this host.
//
// cclc runs through its C API with the plans it is given; by default the
// benchmark compiles the library's butterfly, halving-doubling and ring
// allreduce for the rank count with `cclc compile --emit=json --explain`, so
// that each plan carries the size window where the cost model predicts it
// fastest, and the runtime chooses among them per call. The cclc and Gloo
// ranks are forked from this process; the MPI ranks are started by mpirun
// running cclc-allreduce-bench-mpi.
//
// Prints a table with latency, nccl-tests' bus bandwidth and cclc's speedup
// over Open MPI and over the faster Gloo algorithm per size, and writes every
// figure to a CSV file that plot-allreduce.py draws.
//
//===----------------------------------------------------------------------===//

#include "AllReduceSweep.h"

#include "plan/Vocabulary.h"
#include "runtime/api/cclc.h"
#include "runtime/net/Children.h"
#include "runtime/perf/LocalRanks.h"

#include <gloo/allreduce_halving_doubling.h>
#include <gloo/allreduce_ring_chunked.h>
#include <gloo/barrier.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/file_store.h>
#include <gloo/transport/tcp/device.h>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <memory>
#include <optional>
#include <stdexcept>
#include <streambuf>
#include <thread>

using namespace cclc::bench;
namespace fs = std::filesystem;

namespace {

enum class LibraryKind { Cclc, OpenMpi, GlooRingChunked, GlooHalvingDoubling };

struct Library {
  const char *Name;
  LibraryKind Kind;
};

const Library Libraries[] = {
    {"cclc", LibraryKind::Cclc},
    {"openmpi", LibraryKind::OpenMpi},
    {"gloo-ring-chunked", LibraryKind::GlooRingChunked},
    {"gloo-halving-doubling", LibraryKind::GlooHalvingDoubling},
};

bool isGloo(LibraryKind Kind) {
  return Kind == LibraryKind::GlooRingChunked || Kind == LibraryKind::GlooHalvingDoubling;
}

/// The library algorithms cclc chooses among when no --plan is given.
const char *const DefaultAlgorithms[] = {"butterfly-allreduce", "halving-doubling-allreduce",
                                         "ring-allreduce"};

/// Learns which algorithm cclc runs from the runtime itself: with
/// CCLC_DEBUG=INFO it writes "cclc INFO rank R: allreduce of 1 KiB (f32, sum)
/// runs NAME (...)" to std::cerr the first time a call runs an algorithm.
/// Installed on std::cerr, this buffer keeps those lines off the terminal,
/// remembers the last algorithm named, and passes every other line on.
/// Since a sweep's sizes only grow and each algorithm serves one window of
/// sizes, the last algorithm named is the one that ran the last call.
class ChoiceLog : public std::streambuf {
public:
  ChoiceLog() : Forward(std::cerr.rdbuf(this)) {}
  ~ChoiceLog() override { std::cerr.rdbuf(Forward); }
  ChoiceLog(const ChoiceLog &) = delete;
  ChoiceLog &operator=(const ChoiceLog &) = delete;

  const std::string &last() const { return Last; }
  /// While paused, choices are not remembered: the barrier's one-element
  /// calls are not what the sweep measures.
  void pause(bool Paused) { this->Paused = Paused; }

protected:
  int_type overflow(int_type C) override {
    if (traits_type::eq_int_type(C, traits_type::eof()))
      return traits_type::not_eof(C);
    Line.push_back(traits_type::to_char_type(C));
    if (Line.back() == '\n')
      endLine();
    return C;
  }
  std::streamsize xsputn(const char *Text, std::streamsize N) override {
    for (std::streamsize I = 0; I < N; ++I)
      overflow(traits_type::to_int_type(Text[I]));
    return N;
  }
  int sync() override { return Forward->pubsync(); }

private:
  void endLine() {
    static const std::string Runs = ") runs ";
    size_t At = Line.find(Runs);
    if (Line.rfind("cclc INFO ", 0) == 0 && At != std::string::npos) {
      size_t Start = At + Runs.size();
      if (!Paused)
        Last = Line.substr(Start, Line.find(' ', Start) - Start);
    } else {
      Forward->sputn(Line.data(), static_cast<std::streamsize>(Line.size()));
    }
    Line.clear();
  }

  std::streambuf *Forward;
  std::string Line, Last;
  bool Paused = false;
};

/// cclc through its C API, with every plan loaded into the communicator.
class CclcRunner : public OutOfPlaceRunner {
public:
  CclcRunner(const cclcUniqueId &Id, int Rank, int NRanks, const std::vector<std::string> &Plans) {
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

  void allReduce() override {
    check(cclcAllReduce(Input.data(), Output.data(), Input.size(), cclcFloat32, cclcSum, Comm,
                        nullptr),
          "cclcAllReduce");
  }
  void barrier() override {
    float One = 1, Sum = 0;
    Log.pause(true);
    check(cclcAllReduce(&One, &Sum, 1, cclcFloat32, cclcSum, Comm, nullptr), "cclcAllReduce");
    Log.pause(false);
  }
  std::string algorithm() override { return Log.last(); }

private:
  void check(cclcResult_t Result, const std::string &What) {
    if (Result != cclcSuccess)
      throw std::runtime_error(What + " failed: " + cclcGetErrorString(Result) + ": " +
                               cclcGetLastError(Comm));
  }

  ChoiceLog Log;
  cclcComm_t Comm = nullptr;
};

/// Gloo's classic allreduce algorithms over its TCP transport on loopback,
/// connected through a file store: how Gloo runs ranks of one host without a
/// launcher. Gloo's algorithms reduce in place.
class GlooRunner : public AllReduceRunner {
public:
  GlooRunner(LibraryKind Kind, int Rank, int NRanks, const fs::path &StoreDir)
      : Kind(Kind), Context(std::make_shared<gloo::rendezvous::Context>(Rank, NRanks)) {
    gloo::transport::tcp::attr Loopback("127.0.0.1");
    std::shared_ptr<gloo::transport::Device> Device =
        gloo::transport::tcp::CreateDevice(Loopback);
    gloo::rendezvous::FileStore Store(StoreDir);
    Context->connectFullMesh(Store, Device);
  }

  void prepare(size_t Count) override {
    Algorithm.reset();
    Buffer.assign(Count, 0.0f);
    std::vector<float *> Pointers{Buffer.data()};
    int N = static_cast<int>(Count);
    if (Kind == LibraryKind::GlooRingChunked)
      Algorithm = std::make_unique<gloo::AllreduceRingChunked<float>>(Context, Pointers, N);
    else
      Algorithm = std::make_unique<gloo::AllreduceHalvingDoubling<float>>(Context, Pointers, N);
  }
  float *input() override { return Buffer.data(); }
  const float *output() override { return Buffer.data(); }
  void allReduce() override { Algorithm->run(); }
  void barrier() override {
    gloo::BarrierOptions Options(Context);
    gloo::barrier(Options);
  }
  std::string algorithm() override {
    return Kind == LibraryKind::GlooRingChunked ? "ring_chunked" : "halving_doubling";
  }

private:
  LibraryKind Kind;
  std::shared_ptr<gloo::rendezvous::Context> Context;
  std::vector<float> Buffer;
  std::unique_ptr<gloo::Algorithm> Algorithm;
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

/// Keeps the figure lines of rank 0's output; other lines (a launcher's
/// notices) go on to stderr.
std::function<void(const std::string &)> figureCollector(std::vector<Figure> &Figures) {
  return [&Figures](const std::string &Line) {
    if (std::optional<Figure> F = parseFigure(Line))
      Figures.push_back(*F);
    else
      std::fputs(Line.c_str(), stderr);
  };
}

bool succeeded(int Status) { return WIFEXITED(Status) && WEXITSTATUS(Status) == 0; }

/// True when every rank of Library's job exited with 0; says how the others
/// ended.
bool ranksSucceeded(const char *Library, const std::vector<int> &Status) {
  bool Ok = true;
  for (size_t Rank = 0; Rank < Status.size(); ++Rank)
    if (!succeeded(Status[Rank])) {
      std::fprintf(stderr, "error: %s rank %zu %s\n", Library, Rank,
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

/// One rank's part of a forked job: makes its runner and runs the sweep,
/// rank 0 writing the figures to Fd. Returns the rank's exit code, which is
/// not 0 when the rank got wrong results.
int sweepRank(int Rank, int NRanks, int Fd, const SweepOptions &Options,
              const std::function<std::unique_ptr<AllReduceRunner>()> &MakeRunner) {
  FILE *Out = fdopen(Fd, "w");
  int Code = 0;
  try {
    std::unique_ptr<AllReduceRunner> Runner = MakeRunner();
    Code = runSweep(*Runner, Rank, NRanks, Options, Out) ? 1 : 0;
  } catch (const std::exception &E) {
    std::fprintf(stderr, "rank %d: %s\n", Rank, E.what());
    Code = 1;
  }
  std::fclose(Out);
  return Code;
}

struct BenchConfig {
  int NRanks = 4;
  SweepOptions Sweep;
  std::vector<std::string> Plans;
  /// Where the Gloo store and the compiled plans live during the run.
  fs::path WorkDir;
};

std::optional<std::vector<Figure>> runCclc(const BenchConfig &Config) {
  int Pipe[2];
  if (pipe(Pipe) != 0)
    return std::nullopt;
  int NRanks = Config.NRanks;
  std::vector<int> Status =
      cclc::perf::runLocalRanks(NRanks, [&](int Rank, const cclcUniqueId &Id) {
        close(Pipe[0]);
        return sweepRank(Rank, NRanks, Pipe[1], Config.Sweep, [&] {
          return std::make_unique<CclcRunner>(Id, Rank, NRanks, Config.Plans);
        });
      });
  close(Pipe[1]);
  // The figures wait in the pipe: a sweep writes far less than it holds.
  std::vector<Figure> Figures;
  forEachLine(Pipe[0], figureCollector(Figures));
  return ranksSucceeded("cclc", Status) ? std::optional(Figures) : std::nullopt;
}

std::optional<std::vector<Figure>> runGloo(LibraryKind Kind, const BenchConfig &Config) {
  fs::path StoreDir = Config.WorkDir / "gloo-store";
  fs::remove_all(StoreDir);
  fs::create_directories(StoreDir);
  int Pipe[2];
  if (pipe(Pipe) != 0)
    return std::nullopt;
  std::fflush(nullptr);
  std::vector<pid_t> Children;
  for (int Rank = 0; Rank < Config.NRanks; ++Rank) {
    pid_t Child = fork();
    if (Child == 0) {
      close(Pipe[0]);
      _exit(sweepRank(Rank, Config.NRanks, Pipe[1], Config.Sweep, [&] {
        return std::make_unique<GlooRunner>(Kind, Rank, Config.NRanks, StoreDir);
      }));
    }
    if (Child > 0)
      Children.push_back(Child);
  }
  close(Pipe[1]);
  std::vector<Figure> Figures;
  forEachLine(Pipe[0], figureCollector(Figures));
  bool Ok = ranksSucceeded("Gloo", cclc::net::waitForChildren(Children, {}));
  if (Children.size() != size_t(Config.NRanks)) {
    std::fprintf(stderr, "error: could not fork %d Gloo ranks\n", Config.NRanks);
    Ok = false;
  }
  return Ok ? std::optional(Figures) : std::nullopt;
}

/// The MPI side runs under mpirun, unbound and allowed to oversubscribe the
/// cores like the forked ranks, its TCP traffic on loopback only.
std::optional<std::vector<Figure>> runOpenMpi(const BenchConfig &Config) {
  std::vector<std::string> Arguments = {CCLC_MPIEXEC, "-np", std::to_string(Config.NRanks),
                                        "--oversubscribe", "--bind-to", "none",
                                        "--mca", "oob_tcp_if_include", "lo",
                                        "--mca", "btl_tcp_if_include", "lo"};
  if (geteuid() == 0)
    Arguments.push_back("--allow-run-as-root");
  Arguments.push_back(CCLC_ALLREDUCE_BENCH_MPI);
  for (const std::string &A : Config.Sweep.arguments())
    Arguments.push_back(A);
  std::vector<Figure> Figures;
  if (!runCommand(Arguments, figureCollector(Figures)))
    return std::nullopt;
  return Figures;
}

std::optional<std::vector<Figure>> runLibrary(LibraryKind Kind, const BenchConfig &Config) {
  switch (Kind) {
  case LibraryKind::Cclc:
    return runCclc(Config);
  case LibraryKind::OpenMpi:
    return runOpenMpi(Config);
  case LibraryKind::GlooRingChunked:
  case LibraryKind::GlooHalvingDoubling:
    return runGloo(Kind, Config);
  }
  return std::nullopt;
}

/// Compiles the default algorithms for the configured rank count, leaving
/// out those that do not serve it (the power-of-two ones for 6 ranks); each
/// plan records the size window where the cost model predicts it fastest,
/// which `--explain` prints as a "window:" line.
void compileDefaultPlans(BenchConfig &Config) {
  for (const char *Algorithm : DefaultAlgorithms) {
    fs::path Plan = Config.WorkDir / (std::string(Algorithm) + ".json");
    bool Ok = runCommand({CCLC_COMPILER, "compile",
                          std::string(CCLC_ALGORITHMS_DIR) + "/" + Algorithm + ".ccl",
                          "--nranks", std::to_string(Config.NRanks), "--emit=json", "--explain",
                          "--algorithms", CCLC_ALGORITHMS_DIR, "-o", Plan.string()},
                         [](const std::string &Line) {
                           if (Line.rfind("window:", 0) == 0)
                             std::fprintf(stderr, "cclc plan %s", Line.c_str());
                         });
    if (Ok)
      Config.Plans.push_back(Plan.string());
    else
      std::fprintf(stderr, "cclc plan %s left out: it does not compile for %d ranks\n",
                   Algorithm, Config.NRanks);
  }
}

struct Result {
  const Library *Lib;
  std::vector<Figure> Figures;
};

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

/// The time of the fastest library Select accepts at size index I.
std::optional<double> bestTime(const std::vector<Result> &Results, size_t I,
                               const std::function<bool(LibraryKind)> &Select) {
  std::optional<double> Best;
  for (const Result &R : Results)
    if (Select(R.Lib->Kind) && I < R.Figures.size())
      Best = std::min(Best.value_or(R.Figures[I].TimeUs), R.Figures[I].TimeUs);
  return Best;
}

/// cclc's speedup over the libraries Select accepts: their best time over
/// cclc's, which is also cclc's bus bandwidth over theirs.
void printSpeedup(const std::vector<Result> &Results, size_t I,
                  const std::function<bool(LibraryKind)> &Select) {
  std::optional<double> Cclc =
      bestTime(Results, I, [](LibraryKind K) { return K == LibraryKind::Cclc; });
  std::optional<double> Other = bestTime(Results, I, Select);
  if (Cclc && Other)
    std::printf("  %9.2fx", *Other / *Cclc);
  else
    std::printf("  %10s", "-");
}

void printTable(const std::vector<Result> &Results, const SweepOptions &Options, int NRanks) {
  std::printf("%10s", "size");
  for (const Result &R : Results)
    std::printf("  %22s", R.Lib->Name);
  std::printf("  %10s  %10s  %s\n", "cclc/ompi", "cclc/gloo", "cclc algorithm");
  std::printf("%10s", "");
  for (size_t I = 0; I < Results.size(); ++I)
    std::printf("  %10s %11s", "time us", "busbw GB/s");
  std::printf("  %10s  %10s\n", "speedup", "speedup");
  std::vector<size_t> Sizes = Options.sizes();
  for (size_t I = 0; I < Sizes.size(); ++I) {
    std::printf("%10s", cclc::plan::formatBytes(Sizes[I]).c_str());
    std::string CclcAlgorithm = "-";
    for (const Result &R : Results) {
      if (I >= R.Figures.size()) {
        std::printf("  %10s %11s", "-", "-");
        continue;
      }
      const Figure &F = R.Figures[I];
      std::printf("  %10.1f %11.3f", F.TimeUs, F.busBandwidthGBs(NRanks));
      if (R.Lib->Kind == LibraryKind::Cclc)
        CclcAlgorithm = F.Algorithm;
    }
    printSpeedup(Results, I, [](LibraryKind K) { return K == LibraryKind::OpenMpi; });
    printSpeedup(Results, I, isGloo);
    std::printf("  %s\n", CclcAlgorithm.c_str());
  }
}

void writeCsv(const std::string &Path, const std::vector<Result> &Results, int NRanks,
              const std::string &Machine) {
  std::ofstream Out(Path);
  // The plot's title.
  Out << "# " << Machine << "\n";
  Out << "library,algorithm,bytes,count,time_us,algbw_gbs,busbw_gbs\n";
  for (const Result &R : Results)
    for (const Figure &F : R.Figures)
      Out << R.Lib->Name << ',' << F.Algorithm << ',' << F.Bytes << ','
          << F.Bytes / sizeof(float) << ',' << F.TimeUs << ','
          << static_cast<double>(F.Bytes) / (F.TimeUs * 1e3) << ','
          << F.busBandwidthGBs(NRanks) << '\n';
}

} // namespace

int main(int Argc, char **Argv) {
  CLI::App App("Measures the f32 sum allreduce of cclc, Open MPI and Gloo on this host, prints "
               "a comparison and writes a CSV");
  BenchConfig Config;
  addSweepOptions(App, Config.Sweep);
  App.add_option("-n,--nranks", Config.NRanks, "Ranks per library")
      ->capture_default_str()
      ->check(CLI::Range(2, 64));
  App.add_option("--plan", Config.Plans,
                 "A plan cclc loads (cclc compile --emit=json); default: the library's "
                 "butterfly, halving-doubling and ring allreduce with the cost model's windows")
      ->check(CLI::ExistingFile);
  std::string CsvPath = "allreduce-bench.csv";
  App.add_option("--csv", CsvPath, "Where to write every figure")->capture_default_str();
  std::vector<std::string> Selected;
  for (const Library &L : Libraries)
    Selected.push_back(L.Name);
  std::vector<std::string> Names = Selected;
  App.add_option("--libraries", Selected, "Libraries to measure")
      ->capture_default_str()
      ->check(CLI::IsMember(Names));
  int NRounds = 1;
  App.add_option("--rounds", NRounds,
                 "Sweeps per library, taking turns so that a change in the machine's load "
                 "falls on every library; each size reports the median round")
      ->capture_default_str()
      ->check(CLI::Range(1, 100));
  CLI11_PARSE(App, Argc, Argv);

  std::string Template = (fs::temp_directory_path() / "cclc-allreduce-bench-XXXXXX").string();
  if (!mkdtemp(Template.data())) {
    std::perror("mkdtemp");
    return 1;
  }
  Config.WorkDir = Template;
  if (Config.Plans.empty())
    compileDefaultPlans(Config);

  std::string LoadBefore = loadAverage();
  std::printf("# %d ranks on %u cores, load average %s\n", Config.NRanks,
              std::thread::hardware_concurrency(), LoadBefore.c_str());
  std::vector<const Library *> Measured;
  for (const Library &L : Libraries)
    if (std::find(Selected.begin(), Selected.end(), L.Name) != Selected.end())
      Measured.push_back(&L);
  std::vector<std::vector<std::vector<Figure>>> Rounds(Measured.size());
  std::vector<bool> Failed(Measured.size(), false);
  for (int Round = 1; Round <= NRounds; ++Round)
    for (size_t I = 0; I < Measured.size(); ++I) {
      if (Failed[I])
        continue;
      std::fprintf(stderr, "measuring %s, round %d of %d\n", Measured[I]->Name, Round, NRounds);
      std::optional<std::vector<Figure>> Figures = runLibrary(Measured[I]->Kind, Config);
      if (Figures)
        Rounds[I].push_back(std::move(*Figures));
      else
        Failed[I] = true;
    }
  std::vector<Result> Results;
  bool Ok = true;
  for (size_t I = 0; I < Measured.size(); ++I) {
    if (Failed[I]) {
      std::fprintf(stderr, "error: %s failed; its figures are left out\n", Measured[I]->Name);
      Ok = false;
      continue;
    }
    Results.push_back({Measured[I], combineRounds(Rounds[I])});
  }
  fs::remove_all(Config.WorkDir);
  printTable(Results, Config.Sweep, Config.NRanks);
  std::string LoadAfter = loadAverage();
  std::printf("# load average %s after the run\n", LoadAfter.c_str());
  writeCsv(CsvPath, Results, Config.NRanks,
           std::to_string(Config.NRanks) + " ranks on " +
               std::to_string(std::thread::hardware_concurrency()) + " cores, load average " +
               LoadBefore + " before and " + LoadAfter + " after the run");
  return Ok ? 0 : 1;
}
