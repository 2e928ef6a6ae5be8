//===- CompileBench.cpp - Compile and verify time and memory per case -----===//
//
// Prints, for the library's ring, double binary tree, butterfly and
// halving-doubling allreduce at 8 to 8192 ranks (--nranks), the time of each
// phase of `cclc compile` (instantiate, verify, the pass pipeline, verifying
// the result, writing the plan), the plan's size and the peak resident
// memory. Every case runs in a forked child so that its peak is its own. The
// goals: a 1024-rank ring in under 1 s and a plan under 10 MB; 8192 ranks in
// under 10 s and 2 GiB. A ring's ranks run 2 n^2 steps in all (134 million
// at 8192 ranks); as `cclc compile --emit=json` does, the ring instantiates
// rank 0 alone and its plan is rank 0's program and the rotation that gives
// the others' ("inst" says rank0).
// Then a seeded wrong halving-doubling allreduce
// (Inputs/wrong-halving-doubling.ccl) must be rejected at 8192 ranks.
//
// Then the time of `cclc compile --explain` for each allreduce of the library
// at 64 ranks (8 nodes of an 8-GPU machine), the whole command as a user runs
// it: topology search and connect, the library's algorithms and every
// variant predicted, the plan written. The goal is under 1 s.
//
//===----------------------------------------------------------------------===//

#include "compiler/passes/Pipeline.h"
#include "compiler/instantiate/Instantiate.h"
#include "plan/PlanJson.h"
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
  std::string Source; ///< The .ccl file.
  int32_t NRanks;
  int32_t ChunksFactor;
};

/// What a child reports back through its pipe.
struct Figures {
  bool Ok = false;
  size_t Steps = 0; ///< Of every rank, rotated ones included.
  bool RankZero = false; ///< Instantiated at rank 0 alone.
  size_t PlanBytes = 0;
  double InstantiateMs = 0, VerifyMs = 0, PassesMs = 0, FinalVerifyMs = 0, WriteMs = 0;
  /// How each of the two proofs went: rank by rank or under a symmetry.
  verify::ProofKind Proof = verify::ProofKind::Exhaustive,
                    FinalProof = verify::ProofKind::Exhaustive;
  /// The first line of the diagnostics of a failed case.
  char FirstError[400] = {};
};

std::string libraryFile(const char *Algorithm) {
  return std::string(CCLC_SOURCE_DIR) + "/algorithms/" + Algorithm + ".ccl";
}

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
  std::optional<uint32_t> Id = SM.loadFile(C.Source, Error);
  dsl::OperationCatalog Ops;
  std::unique_ptr<dsl::Algorithm> Algo = Id ? dsl::parseAndCheck(*Id, Ops, Diags) : nullptr;
  if (!Algo)
    return F;
  auto Start = std::chrono::steady_clock::now();
  target::Target Target = target::flatTarget(C.NRanks);
  inst::InstantiateOptions InstOpts;
  InstOpts.RankZeroOnly = true;
  std::optional<sched::Schedule> S = inst::instantiate(*Algo, Target, InstOpts, Diags);
  F.InstantiateMs = msSince(Start);
  if (!S)
    return F;
  Start = std::chrono::steady_clock::now();
  bool Verified = verify::verifySchedule(*S, Diags, {}, &F.Proof);
  F.VerifyMs = msSince(Start);
  passes::PipelineOptions Options;
  Options.Channels = static_cast<int32_t>(Target.Rings.size());
  Options.ChunksFactor = C.ChunksFactor;
  Start = std::chrono::steady_clock::now();
  bool Optimized = passes::runPipeline(*S, Options, std::cerr, Diags);
  F.PassesMs = msSince(Start);
  Start = std::chrono::steady_clock::now();
  F.Ok = Verified && Optimized && verify::verifySchedule(*S, Diags, {}, &F.FinalProof);
  F.FinalVerifyMs = msSince(Start);
  F.RankZero = S->Rotated.has_value();
  F.Steps = S->stepCount() * (F.RankZero ? size_t(S->NRanks) : 1);
  if (!F.Ok) {
    std::string First = Errors.str().substr(0, Errors.str().find('\n'));
    First.copy(F.FirstError, sizeof F.FirstError - 1);
    return F;
  }
  // As cclc compile --emit=json writes it.
  Start = std::chrono::steady_clock::now();
  F.PlanBytes = plan::scheduleToPlan(*S, plan::PlanInfo{}).dump(2).size() + 1;
  F.WriteMs = msSince(Start);
  return F;
}

/// The short name of a proof, for the table.
const char *proofCode(verify::ProofKind Proof) {
  switch (Proof) {
  case verify::ProofKind::Exhaustive: return "all";
  case verify::ProofKind::Rotation: return "rot";
  case verify::ProofKind::Xor: return "xor";
  }
  return "?";
}

/// Runs C in a child; returns its figures and peak resident memory in KiB.
/// Its Ok is false when a phase failed, with the first error in FirstError.
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
  for (const char *Algorithm : {"ring-allreduce", "tree-allreduce", "butterfly-allreduce",
                                "halving-doubling-allreduce"})
    for (int32_t NRanks : {8, 64, 512, 1024, 2048, 4096, 8192})
      Cases.push_back({libraryFile(Algorithm), NRanks, 1});
  for (const char *Algorithm : {"ring-allreduce", "tree-allreduce"})
    Cases.push_back({libraryFile(Algorithm), 1024, 4});
  std::printf("%-28s %6s %6s %11s %5s %8s %9s %9s %8s %8s %9s %8s %8s %7s %3s\n", "algorithm",
              "nranks", "factor", "steps", "inst", "inst ms", "verify ms", "passes ms",
              "final ms", "write ms", "total ms", "plan MB", "peak MiB", "proofs", "ok");
  auto Name = [](const Case &C) {
    std::string File = C.Source.substr(C.Source.rfind('/') + 1);
    return File.substr(0, File.size() - 4);
  };
  for (const Case &C : Cases) {
    auto [F, PeakKiB] = measure(C);
    double Total = F.InstantiateMs + F.VerifyMs + F.PassesMs + F.FinalVerifyMs + F.WriteMs;
    const std::string Proofs = std::string(proofCode(F.Proof)) + "/" + proofCode(F.FinalProof);
    std::printf(
        "%-28s %6d %6d %11zu %5s %8.1f %9.1f %9.1f %8.1f %8.1f %9.1f %8.2f %8.1f %7s %3s\n",
        Name(C).c_str(), C.NRanks, C.ChunksFactor, F.Steps, F.RankZero ? "rank0" : "all",
        F.InstantiateMs, F.VerifyMs, F.PassesMs, F.FinalVerifyMs, F.WriteMs, Total,
        F.PlanBytes / 1e6, PeakKiB / 1024.0, Proofs.c_str(), F.Ok ? "yes" : "NO");
    if (!F.Ok)
      std::printf("  %s\n", F.FirstError);
  }

  // The verifier stays exact at scale: a wrong algorithm is rejected at
  // 8192 ranks with the message it gets at 8.
  std::printf("\nseeded wrong algorithm (test/bench/Inputs/wrong-halving-doubling.ccl)\n");
  for (int32_t NRanks : {8, 8192}) {
    Case Wrong{std::string(CCLC_SOURCE_DIR) + "/test/bench/Inputs/wrong-halving-doubling.ccl",
               NRanks, 1};
    auto Start = std::chrono::steady_clock::now();
    auto [F, PeakKiB] = measure(Wrong);
    std::printf("%6d ranks: %s in %.1f ms, peak %.1f MiB\n  %s\n", NRanks,
                F.Ok ? "ACCEPTED (wrong)" : "rejected", msSince(Start), PeakKiB / 1024.0,
                F.FirstError);
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
