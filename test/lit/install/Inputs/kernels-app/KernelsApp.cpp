// Runs the generated ring and butterfly allreduce kernels on four forked
// ranks through the C API and checks every element of the result.
#include "butterfly-allreduce.h"
#include "ring-allreduce.h"

#include <cclc.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <vector>

namespace {

constexpr int NRanks = 4;

/// One rank: registers one algorithm's kernels, runs an f32 sum allreduce
/// and returns the number of wrong elements (or -1 on an error).
int runRank(const cclcUniqueId &Id, int Rank, const cclc::host::KernelInfo *Kernels,
            size_t NKernels, size_t Count) {
  cclcComm_t Comm;
  if (cclcCommInitRank(&Comm, NRanks, Id, Rank) != cclcSuccess)
    return -1;
  if (cclcCommRegisterKernels(Comm, Kernels, NKernels) != cclcSuccess) {
    std::fprintf(stderr, "rank %d: %s\n", Rank, cclcGetLastError(Comm));
    return -1;
  }
  std::vector<float> In(Count), Out(Count);
  for (size_t I = 0; I < Count; ++I)
    In[I] = float(Rank * 8 + I % 16);
  if (cclcAllReduce(In.data(), Out.data(), Count, cclcFloat32, cclcSum, Comm, nullptr) !=
      cclcSuccess) {
    std::fprintf(stderr, "rank %d: %s\n", Rank, cclcGetLastError(Comm));
    return -1;
  }
  int Wrong = 0;
  for (size_t I = 0; I < Count; ++I)
    Wrong += Out[I] != float(8 * (0 + 1 + 2 + 3) + NRanks * (I % 16));
  cclcCommDestroy(Comm);
  return Wrong;
}

/// Forks the ranks, then starts the job's root and hands each rank the id
/// through a pipe (forking before the root's thread exists keeps the
/// children free of its locks), and reports whether all ranks got the right
/// result.
bool runAlgorithm(const char *Name, const cclc::host::KernelInfo *Kernels, size_t NKernels,
                  size_t Count) {
  std::fflush(stdout);
  std::vector<pid_t> Children;
  std::vector<int> Pipes;
  for (int Rank = 0; Rank < NRanks; ++Rank) {
    int Fds[2];
    if (pipe(Fds) != 0)
      return false;
    pid_t Pid = fork();
    if (Pid == 0) {
      close(Fds[1]);
      cclcUniqueId Id;
      bool Got = read(Fds[0], &Id, sizeof Id) == ssize_t(sizeof Id);
      _exit(Got && runRank(Id, Rank, Kernels, NKernels, Count) == 0 ? 0 : 1);
    }
    close(Fds[0]);
    Children.push_back(Pid);
    Pipes.push_back(Fds[1]);
  }
  cclcUniqueId Id;
  bool Ok = cclcGetUniqueId(&Id) == cclcSuccess;
  for (int Fd : Pipes) {
    if (Ok)
      Ok = write(Fd, &Id, sizeof Id) == ssize_t(sizeof Id);
    close(Fd);
  }
  for (pid_t Pid : Children) {
    int Status = 0;
    waitpid(Pid, &Status, 0);
    Ok &= WIFEXITED(Status) && WEXITSTATUS(Status) == 0;
  }
  std::printf("%s: allreduce of %zu floats on %d ranks %s\n", Name, Count, NRanks,
              Ok ? "correct" : "WRONG");
  return Ok;
}

} // namespace

int main() {
  bool Ok = runAlgorithm("ring_allreduce", cclc::gen::ring_allreduce_kernels,
                         std::size(cclc::gen::ring_allreduce_kernels), 100003);
  Ok &= runAlgorithm("butterfly_allreduce", cclc::gen::butterfly_allreduce_kernels,
                     std::size(cclc::gen::butterfly_allreduce_kernels), 4099);
  return Ok ? 0 : 1;
}
