//===- CompileBench.cpp - Compile and verify time and memory per case -----===//
//
// Prints, for the library's ring, double binary tree and butterfly allreduce
// at 8 to 1024 ranks (--nranks), the time of each phase of `cclc compile`
// (instantiate, verify, the pass pipeline, verifying the result) and the peak
// resident memory. Every case runs in a forked child so that its peak is its
// own. The goal is a 1024-rank ring allreduce in under 1 s and 1 GiB.
//
// Then the time of `cclc compile --explain` for each allreduce of the library
// at 64 ranks (8 nodes of an 8-GPU machine), the whole command as a user runs
// it: topology search and connect, the library's algorithms and every
// variant predicted, the plan written. The goal is under 1 s.
//
//===----------------------------------------------------------------------===//

#include "compiler/passes/Pipeline.h"
#include "compiler/instantiate/Instantiate.h"
#include "plan/Verifier.h"
#include "dsl/Frontend.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

using namespace cclc;

namespace {

struct Case {
  const char *Algorithm;
  int32_t NRanks;
  int32_t ChunksFactor;
};

/// What a child reports back through its pipe.
struct Figures {
  bool Ok = false;
  size_t Steps = 0;
  double InstantiateMs = 0, VerifyMs = 0, PassesMs = 0, FinalVerifyMs = 0;
};

double msSince(std::chrono::steady_clock::time_point Start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - Start)
      .count();
}

/// Compiles one case the way `cclc compile --nranks` does, without emitting.
Figures compileCase(const Case &C) {
  Figures F;
  SourceManager SM;
  std::ostringstream Errors;
  DiagnosticEngine Diags(SM, Errors);
  std::string Error;
  std::optional<uint32_t> Id = SM.loadFile(
      std::string(CCLC_SOURCE_DIR) + "/algorithms/" + C.Algorithm + ".ccl", Error);
  dsl::OperationCatalog Ops;
  std::unique_ptr<dsl::Algorithm> Algo = Id ? dsl::parseAndCheck(*Id, Ops, Diags) : nullptr;
  if (!Algo)
    return F;
  auto Start = std::chrono::steady_clock::now();
  target::Target Target = target::flatTarget(C.NRanks);
  std::optional<sched::Schedule> S =
      inst::instantiate(*Algo, Target, inst::InstantiateOptions{}, Diags);
  F.InstantiateMs = msSince(Start);
  if (!S)
    return F;
  Start = std::chrono::steady_clock::now();
  bool Verified = verify::verifySchedule(*S, Diags);
  F.VerifyMs = msSince(Start);
  passes::PipelineOptions Options;
  Options.Channels = static_cast<int32_t>(Target.Rings.size());
  Options.ChunksFactor = C.ChunksFactor;
  Start = std::chrono::steady_clock::now();
  bool Optimized = passes::runPipeline(*S, Options, std::cerr, Diags);
  F.PassesMs = msSince(Start);
  Start = std::chrono::steady_clock::now();
  F.Ok = Verified && Optimized && verify::verifySchedule(*S, Diags);
  F.FinalVerifyMs = msSince(Start);
  F.Steps = S->stepCount();
  if (!F.Ok)
    std::cerr << Errors.str();
  return F;
}

/// Runs C in a child; returns its figures and peak resident memory in KiB.
std::pair<Figures, long> measure(const Case &C) {
  int Pipe[2];
  if (pipe(Pipe) != 0)
    return {Figures{}, 0};
  pid_t Child = fork();
  if (Child == 0) {
    close(Pipe[0]);
    Figures F = compileCase(C);
    ssize_t Written = write(Pipe[1], &F, sizeof F);
    _exit(Written == static_cast<ssize_t>(sizeof F) ? 0 : 1);
  }
  close(Pipe[1]);
  Figures F;
  if (read(Pipe[0], &F, sizeof F) != static_cast<ssize_t>(sizeof F))
    F.Ok = false;
  close(Pipe[0]);
  int Status = 0;
  struct rusage Usage {};
  wait4(Child, &Status, 0, &Usage);
  return {F, Usage.ru_maxrss};
}

/// Runs `cclc compile --explain` for Algorithm on Nodes nodes of Topology,
/// its output discarded; the milliseconds it took, or nullopt when it failed.
std::optional<double> explainMs(const char *Algorithm, const char *Topology, int Nodes) {
  std::string Source = std::string(CCLC_SOURCE_DIR) + "/algorithms/" + Algorithm + ".ccl";
  std::string Topo = std::string(CCLC_SOURCE_DIR) + "/test/topologies/" + Topology + ".xml";
  std::string Library = std::string(CCLC_SOURCE_DIR) + "/algorithms";
  std::string NodeCount = std::to_string(Nodes);
  auto Start = std::chrono::steady_clock::now();
  pid_t Child = fork();
  if (Child == 0) {
    int Null = open("/dev/null", O_WRONLY);
    dup2(Null, STDOUT_FILENO);
    dup2(Null, STDERR_FILENO);
    execl(CCLC_COMPILER, CCLC_COMPILER, "compile", Source.c_str(), "--topo", Topo.c_str(),
          "--nodes", NodeCount.c_str(), "--explain", "--algorithms", Library.c_str(), "-o",
          "/dev/null", static_cast<char *>(nullptr));
    _exit(127);
  }
  int Status = 0;
  if (Child < 0 || waitpid(Child, &Status, 0) != Child || !WIFEXITED(Status) ||
      WEXITSTATUS(Status) != 0)
    return std::nullopt;
  return msSince(Start);
}

} // namespace

int main() {
  std::vector<Case> Cases;
  for (const char *Algorithm : {"ring-allreduce", "tree-allreduce", "butterfly-allreduce"})
    for (int32_t NRanks : {8, 64, 512, 1024})
      Cases.push_back({Algorithm, NRanks, 1});
  for (const char *Algorithm : {"ring-allreduce", "tree-allreduce"})
    Cases.push_back({Algorithm, 1024, 4});
  std::printf("%-20s %6s %6s %10s %9s %9s %9s %9s %9s %8s %3s\n", "algorithm", "nranks",
              "factor", "steps", "inst ms", "verify ms", "passes ms", "final ms", "total ms",
              "peak MiB", "ok");
  for (const Case &C : Cases) {
    auto [F, PeakKiB] = measure(C);
    double Total = F.InstantiateMs + F.VerifyMs + F.PassesMs + F.FinalVerifyMs;
    std::printf("%-20s %6d %6d %10zu %9.1f %9.1f %9.1f %9.1f %9.1f %8.1f %3s\n", C.Algorithm,
                C.NRanks, C.ChunksFactor, F.Steps, F.InstantiateMs, F.VerifyMs, F.PassesMs,
                F.FinalVerifyMs, Total, PeakKiB / 1024.0, F.Ok ? "yes" : "NO");
  }

  // --explain, best and median of a few runs: the machine may be shared.
  constexpr int ExplainRuns = 5;
  const char *Topology = "simai-hgx-8xa100";
  const int Nodes = 8;
  std::printf("\n--explain on %s x %d nodes (64 ranks), %d runs\n", Topology, Nodes,
              ExplainRuns);
  std::printf("%-28s %9s %9s %3s\n", "algorithm", "best ms", "median ms", "ok");
  for (const char *Algorithm : {"ring-allreduce", "tree-allreduce", "butterfly-allreduce",
                                "halving-doubling-allreduce"}) {
    std::vector<double> Times;
    bool Ok = true;
    for (int Run = 0; Run < ExplainRuns && Ok; ++Run) {
      std::optional<double> Ms = explainMs(Algorithm, Topology, Nodes);
      Ok = Ms.has_value();
      Times.push_back(Ms.value_or(0));
    }
    std::sort(Times.begin(), Times.end());
    std::printf("%-28s %9.1f %9.1f %3s\n", Algorithm, Times.front(), Times[Times.size() / 2],
                Ok ? "yes" : "NO");
  }
  return 0;
}
