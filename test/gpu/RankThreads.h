//===- RankThreads.h - The ranks of a job as threads on one GPU -*- C++ -*-===//
//
// The GPU tests and the GPU benchmark run every rank of a job in this
// process, each on a thread with a communicator and a CUDA stream of its
// own, all on device 0: one GPU then runs any rank count, and the ranks'
// kernels wait on each other as they would on GPUs of their own.
//
// Ranks that share a GPU must never wait for the whole device. A rank
// blocked in cudaFree, or in a copy on the legacy default stream, waits for
// its peers' kernels, which wait for the kernel it has not launched yet: the
// job stalls until the runtime's timeout. So the streams here do not
// synchronize with the legacy stream, memory is allocated before a job's
// first collective and freed after its last, and data moves by copies
// ordered on the rank's own stream.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "GpuTest.h"

#include "runtime/api/cclc.h"
#include "runtime/perf/Calls.h"

#include <cuda_runtime.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace cclc::gputest {

/// Why collectives cannot run on device 0 here; empty where they can.
inline std::string noDeviceReason() {
  int Devices = 0;
  cudaError_t Err = cudaGetDeviceCount(&Devices);
  if (Err != cudaSuccess)
    return std::string("no CUDA device (") + cudaGetErrorString(Err) + ")";
  return Devices ? std::string() : "no CUDA device (none found)";
}

/// The unique ids of a job's communicators, in the order the ranks make
/// them. Rank 0 makes each id when it first asks for it, which starts that
/// communicator's root just before it is used; the other ranks wait for it.
class IdExchange {
public:
  explicit IdExchange(std::chrono::seconds Limit) : Limit(Limit) {}

  cclcUniqueId get(int Rank, size_t Index) {
    std::unique_lock<std::mutex> Guard(Lock);
    if (Rank == 0 && Ids.size() == Index) {
      cclcUniqueId Id;
      perf::check(cclcGetUniqueId(&Id), "cclcGetUniqueId");
      Ids.push_back(Id);
      Made.notify_all();
    }
    if (!Made.wait_for(Guard, Limit, [&] { return Ids.size() > Index; }))
      throw std::runtime_error("rank 0 made no id for communicator " + std::to_string(Index) +
                               " within " + std::to_string(Limit.count()) + " s");
    return Ids[Index];
  }

private:
  std::chrono::seconds Limit;
  std::mutex Lock;
  std::condition_variable Made;
  std::vector<cclcUniqueId> Ids;
};

/// A CUDA stream that does not synchronize with the legacy default stream.
class Stream {
public:
  Stream() { CCLC_CUDA(cudaStreamCreateWithFlags(&S, cudaStreamNonBlocking)); }
  Stream(const Stream &) = delete;
  Stream &operator=(const Stream &) = delete;
  ~Stream() { cudaStreamDestroy(S); }

  cudaStream_t get() const { return S; }

private:
  cudaStream_t S = nullptr;
};

/// A communicator that is aborted when it goes out of scope without being
/// destroyed (when an exception leaves the rank's work): its peers then stop
/// at once instead of waiting for it until they time out. A rank makes its
/// device memory before its communicators, so that on the way out the
/// aborts come first, and freeing the memory does not wait for peers'
/// kernels that wait for this rank.
class ScopedComm {
public:
  ScopedComm(int NRanks, const cclcUniqueId &Id, int Rank) {
    perf::check(cclcCommInitRank(&Comm, NRanks, Id, Rank), "cclcCommInitRank");
  }
  ScopedComm(ScopedComm &&Other) noexcept : Comm(std::exchange(Other.Comm, nullptr)) {}
  ScopedComm &operator=(ScopedComm &&) = delete;
  ~ScopedComm() {
    if (Comm)
      cclcCommAbort(Comm);
  }

  cclcComm_t get() const { return Comm; }
  /// Destroys it once every peer has reached its destroy; throws when that
  /// fails.
  void destroy() { perf::check(cclcCommDestroy(std::exchange(Comm, nullptr)), "cclcCommDestroy"); }
  /// Aborts it, here and at its peers.
  void abort() { perf::check(cclcCommAbort(std::exchange(Comm, nullptr)), "cclcCommAbort"); }

private:
  cclcComm_t Comm = nullptr;
};

/// One rank of a job whose ranks are threads of this process on device 0.
class RankThread {
public:
  RankThread(int Rank, int NRanks, IdExchange &Ids) : Rank(Rank), NRanks(NRanks), Ids(Ids) {}

  int rank() const { return Rank; }
  int nranks() const { return NRanks; }
  cudaStream_t stream() const { return S.get(); }
  /// The job's next communicator. Every rank makes its communicators in the
  /// same order, as with NCCL.
  ScopedComm newComm() { return ScopedComm(NRanks, Ids.get(Rank, Made++), Rank); }

private:
  int Rank;
  int NRanks;
  IdExchange &Ids;
  size_t Made = 0;
  Stream S;
};

/// Waits for Stream, then throws when a collective of Comm failed after it
/// returned.
inline void finish(cclcComm_t Comm, cudaStream_t Stream, const std::string &What) {
  CCLC_CUDA(cudaStreamSynchronize(Stream));
  cclcResult_t Async = cclcSuccess;
  perf::check(cclcCommGetAsyncError(Comm, &Async), "cclcCommGetAsyncError after " + What);
  perf::check(Async, What + " on the GPU");
}

/// What a rank of a job does.
using RankBody = std::function<void(RankThread &)>;

/// Runs Body on every rank of an NRanks job, each on a thread of its own
/// with device 0 current, and returns what each rank threw ("" for a rank
/// that succeeded). A job still running after Limit ends the program with a
/// message on stdout and stderr: a test must fail, never hang.
inline std::vector<std::string> runRanks(int NRanks, const RankBody &Body,
                                         std::chrono::seconds Limit) {
  // Every rank runs in this process, so the job needs no interface but
  // loopback, unless the caller chose one (set before any thread reads it).
  ::setenv("CCLC_SOCKET_IFNAME", "=lo", /*overwrite=*/0);
  IdExchange Ids(Limit);
  std::vector<std::string> Failures(static_cast<size_t>(NRanks));
  std::mutex Lock;
  std::condition_variable Ended;
  int Running = NRanks;
  std::vector<std::thread> Threads;
  for (int Rank = 0; Rank < NRanks; ++Rank)
    Threads.emplace_back([&, Rank] {
      try {
        CCLC_CUDA(cudaSetDevice(0));
        RankThread Self(Rank, NRanks, Ids);
        Body(Self);
      } catch (const std::exception &E) {
        Failures[size_t(Rank)] = E.what();
      }
      std::lock_guard<std::mutex> Guard(Lock);
      --Running;
      Ended.notify_all();
    });
  std::unique_lock<std::mutex> Guard(Lock);
  if (!Ended.wait_for(Guard, Limit, [&] { return Running == 0; })) {
    for (std::FILE *Out : {stdout, stderr}) {
      std::fprintf(Out, "error: %d of %d ranks still running after %lld s: a collective hangs\n",
                   Running, NRanks, static_cast<long long>(Limit.count()));
      std::fflush(Out);
    }
    std::_Exit(1);
  }
  Guard.unlock();
  for (std::thread &T : Threads)
    T.join();
  return Failures;
}

} // namespace cclc::gputest
