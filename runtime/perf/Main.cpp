//===- Main.cpp - cclc-perf: nccl-tests for the cclc runtime --------------===//
//
// Measures the runtime's collectives as nccl-tests measures NCCL's: with
// `-np N` it forks N ranks on this host; without, it is one rank of a job a
// launcher started (`mpirun -np 4 cclc-perf allreduce ...`).
//
//===----------------------------------------------------------------------===//

#include "runtime/perf/Bench.h"
#include "runtime/perf/LocalRanks.h"

#include <cstdio>
#include <stdexcept>
#include <sys/wait.h>

using namespace cclc::perf;

namespace {

/// Runs the benchmarks on a communicator that Init creates; the exit code.
template <class F> int runRank(const Options &Opts, F &&Init) {
  cclcComm_t Comm = nullptr;
  cclcResult_t Result = Init(&Comm);
  if (Result != cclcSuccess) {
    std::fprintf(stderr, "cclc-perf: creating the communicator failed: %s\n  %s\n",
                 cclcGetErrorString(Result), cclcGetLastError(nullptr));
    return 1;
  }
  int Rank = 0;
  cclcCommUserRank(Comm, &Rank);
  try {
    int Code = runBenchmarks(Opts, Comm);
    Result = cclcCommDestroy(Comm);
    if (Result != cclcSuccess)
      throw std::runtime_error(std::string("cclcCommDestroy failed: ") + cclcGetLastError(nullptr));
    return Code;
  } catch (const std::runtime_error &E) {
    std::fprintf(stderr, "cclc-perf: rank %d: %s\n", Rank, E.what());
    cclcCommAbort(Comm);
    return 1;
  }
}

} // namespace

int main(int Argc, char **Argv) {
  int Exit = 0;
  std::optional<Options> Opts = parseOptions(std::vector<std::string>(Argv + 1, Argv + Argc), Exit);
  if (!Opts)
    return Exit;
  if (Opts->NRanks == 0)
    return runRank(*Opts, [](cclcComm_t *Comm) { return cclcCommInitFromEnvironment(Comm); });

  int NRanks = Opts->NRanks;
  std::vector<int> Status = runLocalRanks(NRanks, [&](int Rank, const cclcUniqueId &Id) {
    return runRank(*Opts,
                   [&](cclcComm_t *Comm) { return cclcCommInitRank(Comm, NRanks, Id, Rank); });
  });
  int Failed = 0;
  for (int Rank = 0; Rank < NRanks; ++Rank) {
    int S = Status[size_t(Rank)];
    if (WIFEXITED(S) && WEXITSTATUS(S) == 0)
      continue;
    std::fprintf(stderr, "cclc-perf: rank %d %s\n", Rank, describeStatus(S).c_str());
    ++Failed;
  }
  return Failed ? 1 : 0;
}
