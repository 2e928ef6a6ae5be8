//===- AllReduceSweep.cpp - One measurement protocol for every library ----===//
//
// The collectives' descriptions, sizes, checks, warmups, trials and the
// figure lines of the collective benchmark.
//
//===----------------------------------------------------------------------===//

#include "AllReduceSweep.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
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

namespace {

double wholeMessage(int) { return 1.0; }
double allReduceFactor(int NRanks) { return 2.0 * (NRanks - 1) / NRanks; }
double gatherFactor(int NRanks) { return static_cast<double>(NRanks - 1) / NRanks; }

float sumOver(int NRanks, size_t Index) {
  float Sum = 0;
  for (int R = 0; R < NRanks; ++R)
    Sum += checkValue(R, Index);
  return Sum;
}

} // namespace

const std::vector<Collective> Collectives = {
    {"allreduce", Layout::Whole, false,
     [](int, int NRanks, size_t, size_t I) { return sumOver(NRanks, I); }, allReduceFactor},
    {"allgather", Layout::Gather, false,
     [](int, int, size_t Block, size_t I) { return checkValue(int(I / Block), I % Block); },
     gatherFactor},
    {"reduce-scatter", Layout::Scatter, false,
     [](int Rank, int NRanks, size_t Block, size_t I) { return sumOver(NRanks, Rank * Block + I); },
     gatherFactor},
    {"broadcast", Layout::Whole, false,
     [](int, int, size_t, size_t I) { return checkValue(Root, I); }, wholeMessage},
    {"reduce", Layout::Whole, true,
     [](int, int NRanks, size_t, size_t I) { return sumOver(NRanks, I); }, wholeMessage},
};

const Collective MemoryCopy = {"copy", Layout::Whole, false,
                               [](int Rank, int, size_t, size_t I) { return checkValue(Rank, I); },
                               wholeMessage};

const Collective *findCollective(const std::string &Name) {
  for (const Collective &C : Collectives)
    if (Name == C.Name)
      return &C;
  return nullptr;
}

std::optional<Message> Collective::message(size_t Bytes, int NRanks) const {
  size_t Count = Bytes / sizeof(float);
  size_t Block = Shape == Layout::Whole ? Count : Count / NRanks;
  if (Block == 0)
    return std::nullopt;
  size_t All = Shape == Layout::Whole ? Count : Block * NRanks;
  Message M;
  M.SendCount = Shape == Layout::Gather ? Block : All;
  M.RecvCount = Shape == Layout::Scatter ? Block : All;
  M.Block = Block;
  M.Bytes = All * sizeof(float);
  return M;
}

float checkValue(int Rank, size_t Index) {
  return static_cast<float>((Rank + 1) * static_cast<int>(Index % 7 + 1));
}

const Floats::Source Floats::Heap = {
    [](size_t Count) {
      float *P = static_cast<float *>(std::calloc(std::max<size_t>(Count, 1), sizeof(float)));
      if (!P)
        throw std::runtime_error("out of memory for " + std::to_string(Count) + " floats");
      return P;
    },
    [](float *P) { std::free(P); }};

void Floats::assign(size_t Count) {
  clear();
  Data = From.Allocate(Count);
  std::memset(Data, 0, Count * sizeof(float));
}

void Floats::clear() {
  if (Data)
    From.Free(Data);
  Data = nullptr;
}

void CollectiveRunner::prepare(const Message &M) {
  Msg = M;
  if (InPlace) {
    Input.assign(std::max(M.SendCount, M.RecvCount));
    Output.clear();
  } else {
    Input.assign(M.SendCount);
    Output.assign(M.RecvCount);
  }
}

namespace {

/// Runs one checked call; returns how many elements are wrong. Only the
/// root's output is checked where only the root's is defined.
size_t checkOnce(CollectiveRunner &Runner, const Collective &C, const Message &M, int Rank,
                 int NRanks) {
  float *In = Runner.input();
  for (size_t I = 0; I < M.SendCount; ++I)
    In[I] = checkValue(Rank, I);
  Runner.run();
  if (C.OutputAtRootOnly && Rank != Root)
    return 0;
  const float *Out = Runner.output();
  size_t Wrong = 0;
  for (size_t I = 0; I < M.RecvCount; ++I)
    Wrong += Out[I] != C.Expected(Rank, NRanks, M.Block, I);
  return Wrong;
}

} // namespace

double median(std::vector<double> Values) {
  std::sort(Values.begin(), Values.end());
  size_t Mid = Values.size() / 2;
  return Values.size() % 2 ? Values[Mid] : (Values[Mid - 1] + Values[Mid]) / 2;
}

size_t runSweep(CollectiveRunner &Runner, const Collective &C, int Rank, int NRanks,
                const SweepOptions &Options, FILE *Out) {
  size_t Wrong = 0;
  for (size_t Bytes : Options.sizes()) {
    std::optional<Message> M = C.message(Bytes, NRanks);
    if (!M)
      continue;
    Runner.prepare(*M);
    size_t WrongHere = checkOnce(Runner, C, *M, Rank, NRanks);
    if (WrongHere)
      std::fprintf(stderr, "rank %d: %s: %zu wrong elements at %zu bytes\n", Rank, C.Name,
                   WrongHere, M->Bytes);
    Wrong += WrongHere;
    std::fill_n(Runner.input(), M->SendCount, 0.0f);
    for (size_t I = 0, E = Options.warmups(Bytes); I < E; ++I)
      Runner.run();
    size_t Iterations = Options.iterations(Bytes);
    std::vector<double> TrialUs;
    for (size_t T = 0; T < Options.Trials; ++T) {
      Runner.barrier();
      auto Start = std::chrono::steady_clock::now();
      for (size_t I = 0; I < Iterations; ++I)
        Runner.run();
      std::chrono::duration<double, std::micro> Elapsed = std::chrono::steady_clock::now() - Start;
      TrialUs.push_back(Elapsed.count() / static_cast<double>(Iterations));
    }
    // One write per line: the ranks of a forked job share the pipe. A name
    // the library did not say is a dash, so that the line still reads.
    std::string Algorithm = Runner.algorithm();
    std::string Line = "trials " + std::to_string(Bytes) + " " +
                       (Algorithm.empty() ? "-" : Algorithm) + " " + std::to_string(Rank);
    for (double Us : TrialUs) {
      char Figure[32];
      std::snprintf(Figure, sizeof Figure, " %.6g", Us);
      Line += Figure;
    }
    Line += "\n";
    std::fputs(Line.c_str(), Out);
    std::fflush(Out);
  }
  // Gloo sends in the background: a rank that tore its connections down
  // while a peer still waited for its last messages would cut them off.
  Runner.barrier();
  return Wrong;
}

bool FigureCollector::take(const std::string &Line) {
  std::istringstream In(Line);
  std::string Tag, Algorithm;
  size_t Bytes = 0;
  int Rank = 0;
  if (!(In >> Tag >> Bytes >> Algorithm >> Rank) || Tag != "trials")
    return false;
  std::vector<double> TrialUs;
  for (double Us; In >> Us;)
    TrialUs.push_back(Us);
  if (TrialUs.empty())
    return false;
  Size &S = Sizes[Bytes];
  if (Rank == 0)
    S.Algorithm = Algorithm;
  if (S.Ranks++ == 0)
    S.SlowestUs = TrialUs;
  S.SlowestUs.resize(std::min(S.SlowestUs.size(), TrialUs.size()));
  for (size_t T = 0; T < S.SlowestUs.size(); ++T)
    S.SlowestUs[T] = std::max(S.SlowestUs[T], TrialUs[T]);
  return true;
}

std::vector<Figure> FigureCollector::figures() const {
  std::vector<Figure> Figures;
  for (const auto &[Bytes, S] : Sizes)
    Figures.push_back({Bytes, S.Algorithm, median(S.SlowestUs)});
  return Figures;
}

} // namespace cclc::bench
