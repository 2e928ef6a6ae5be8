//===- Main.cpp - cclc-perf: nccl-tests for the cclc runtime --------------===//
//
// Measures the runtime's collectives as nccl-tests measures NCCL's: with
// `-np N` it forks N ranks on this host; without, it is one rank of a job a
// launcher started (`mpirun -np 4 cclc-perf allreduce ...`). The parent of
// forked ranks never touches CUDA, which does not survive fork: only the
// ranks open their GPUs.
//
//===----------------------------------------------------------------------===//

#include "runtime/perf/Bench.h"
#include "runtime/perf/LocalRanks.h"
#include "runtime/perf/Memory.h"

#include <cstdio>
#include <exception>
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
  return runBenchmarks(Opts, Comm);
}

} // namespace

int main(int Argc, char **Argv) {
  int Exit = 0;
  std::optional<Options> Opts = parseOptions(std::vector<std::string>(Argv + 1, Argv + Argc), Exit);
  if (!Opts)
    return Exit;
  if (Opts->GpuProbe)
    return probeDevices(stdout);
  if (Opts->NRanks == 0)
    return runRank(*Opts, [](cclcComm_t *Comm) { return cclcCommInitFromEnvironment(Comm); });

  int NRanks = Opts->NRanks;
  std::vector<int> Status;
  try {
    Status = runLocalRanks(NRanks, [&](int Rank, const cclcUniqueId &Id) {
      return runRank(*Opts,
                     [&](cclcComm_t *Comm) { return cclcCommInitRank(Comm, NRanks, Id, Rank); });
    });
  } catch (const std::exception &E) {
    std::fprintf(stderr, "cclc-perf: cannot start the ranks: %s\n", E.what());
    return 1;
  }
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
