//===- Kernel.cuh - The skeleton of a CUDA kernel ---------------*- CUDA -*-===//
//
// What a generated CUDA kernel receives from the runtime, the round loop it
// runs, and how the runtime launches it. A kernel is one __global__ function
// per (algorithm, dtype, op) that runs the schedule for any rank, one thread
// block per channel (block b runs channel b). KernelInfo describes the
// kernel so the runtime can size buffers, choose it by name and launch it.
//
// The blocks of a kernel wait on the blocks of its peers' kernels, which
// wait on theirs: every block must be resident at once, or a block that
// waits can keep the one it waits for from ever being scheduled. launch()
// checks that before launching, from device figures it asks CUDA once per
// kernel, device and block size, so that a launch costs no query and no
// string unless it fails.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "common/KernelTypes.h"
#include "common/Layout.h"
#include "cuda/Primitives.cuh"

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <tuple>

namespace cclc::cuda {

/// The connections a rank's kernel uses, by peer and channel, in device
/// memory: entry Channel * NPeers + Peer of each table. The runtime connects
/// them before the kernel runs; a rank's own entries are unused.
struct Links {
  Outbox *Outs = nullptr;
  Inbox *Ins = nullptr;
  int32_t NPeers = 0;

  __device__ Outbox &out(int Peer, int Channel) const {
    return Outs[size_t(Channel) * NPeers + Peer];
  }
  __device__ Inbox &in(int Peer, int Channel) const { return Ins[size_t(Channel) * NPeers + Peer]; }
};

/// One rank's launch of a kernel. Pointers are device addresses.
struct KernelArgs : kern::CallArgs {
  Links Net;
  /// Raised (nonzero) by the runtime or a failing rank to stop the kernel;
  /// mapped memory, may be null.
  uint32_t *Abort = nullptr;
  /// Device memory zeroed before the first launch that uses it; holds the
  /// first failure of any launch since (see describe()), so the runtime can
  /// keep one per communicator and read it whenever it likes. May be null.
  KernelStatus *Status = nullptr;
  /// How long one wait may last; 0 (the default) waits until the abort flag
  /// is raised.
  uint64_t TimeoutNs = 0;
  /// Mapped memory where each block of a running kernel counts itself, so
  /// that a host proxy keeps polling while it is nonzero; may be null.
  uint32_t *InFlight = nullptr;
  /// The call this launch runs, whose first message on each FIFO carries it
  /// (cuda/Connection.cuh); a zero Seq stamps and checks nothing.
  kern::CallStamp Call{};
};

/// Element types and operators a kernel can be instantiated for; host
/// kernels use the same, so the runtime names both kinds of kernel alike.
using kern::DType;
using kern::RedOp;

using KernelFn = void (*)(KernelArgs Args);

/// A generated kernel, as the runtime registers it.
struct KernelInfo {
  const char *Algorithm;  ///< The algorithm's name in its .ccl file.
  const char *Collective; ///< allreduce, allgather, ...
  int NRanks;
  int Root;
  kern::GridShape Shape;
  int InputUnits, OutputUnits, ScratchUnits;
  DType Type;
  RedOp Op;
  /// The message-size window (bytes of the per-rank count) the compiler chose
  /// it for; MaxBytes 0 means no upper bound.
  size_t MinBytes, MaxBytes;
  /// Threads of each block; the primitives stripe data over them.
  int BlockThreads;
  KernelFn Run;
};

/// Runs Body(Layout) once per round of Args.Count elements of T, for the
/// calling block's channel, counted in Args.InFlight meanwhile. Every thread
/// of the block calls it; after a failed wait the remaining rounds are
/// skipped.
template <class T, class F>
__device__ void forEachRound(const KernelArgs &Args, kern::GridShape Shape, F &&Body) {
  enterChannel(Waiter{Args.Abort, Args.Status, Args.TimeoutNs, Args.Call}, int32_t(blockIdx.x));
  if (threadIdx.x == 0 && Args.InFlight)
    atomicAdd(Args.InFlight, 1u);
  kern::RoundPlan Plan = kern::RoundPlan::make(Shape, Args.Count, sizeof(T), Args.SlotBytes);
  for (size_t R = 0; R < Plan.Rounds; ++R) {
    Body(Plan.round(R, sizeof(T)));
    if (blockFailed())
      break;
  }
  if (threadIdx.x == 0 && Args.InFlight) {
    // The block's last writes to the FIFOs go before the proxy may sleep.
    __threadfence_system();
    atomicSub(Args.InFlight, 1u);
  }
}

/// How many blocks of Threads threads of kernel Fn device Device holds at
/// once, asked of CUDA at the first launch of each (Fn, Device, Threads) and
/// kept: the answer never changes while the process runs.
inline cudaError_t residentBlocks(const void *Fn, int Device, int Threads, int64_t &Blocks) {
  using Key = std::tuple<const void *, int, int>;
  static std::mutex Lock;
  static std::map<Key, int64_t> Known;
  Key K{Fn, Device, Threads};
  {
    std::lock_guard<std::mutex> Guard(Lock);
    if (auto It = Known.find(K); It != Known.end()) {
      Blocks = It->second;
      return cudaSuccess;
    }
  }
  int Sms = 0, PerSm = 0;
  cudaError_t Err = cudaDeviceGetAttribute(&Sms, cudaDevAttrMultiProcessorCount, Device);
  if (Err == cudaSuccess)
    Err = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&PerSm, Fn, Threads, 0);
  if (Err != cudaSuccess)
    return Err;
  Blocks = int64_t(PerSm) * Sms;
  std::lock_guard<std::mutex> Guard(Lock);
  Known.emplace(K, Blocks);
  return cudaSuccess;
}

/// Launches Fn with Params on Stream, Blocks blocks of Threads threads,
/// once every block is known to fit on the current device at the same time.
/// Name() names the kernel in messages; it runs only when the launch fails.
/// Returns the CUDA error, with Why saying what went wrong and what to do; a
/// CUDA call's error is consumed, so that the application's next
/// cudaGetLastError() does not report it again.
template <class N>
cudaError_t launchBlocks(const void *Fn, int Blocks, int Threads, void **Params,
                         cudaStream_t Stream, N &&Name, std::string &Why) {
  int Device = 0;
  int64_t Fit = 0;
  cudaError_t Err = cudaGetDevice(&Device);
  if (Err == cudaSuccess)
    Err = residentBlocks(Fn, Device, Threads, Fit);
  if (Err != cudaSuccess) {
    cudaGetLastError();
    Why = "cannot query the device for kernel " + std::string(Name()) + ": " +
          cudaGetErrorString(Err);
    return Err;
  }
  if (Fit < Blocks) {
    Why = "kernel " + std::string(Name()) + " runs " + std::to_string(Blocks) + " blocks of " +
          std::to_string(Threads) + " threads that wait on each other, but device " +
          std::to_string(Device) + " holds only " + std::to_string(Fit) +
          " at once; compile it for fewer channels or fewer threads per block";
    return cudaErrorCooperativeLaunchTooLarge;
  }
  Err = cudaLaunchKernel(Fn, dim3(Blocks), dim3(Threads), Params, 0, Stream);
  if (Err != cudaSuccess) {
    cudaGetLastError();
    Why = "cannot launch kernel " + std::string(Name()) + ": " + cudaGetErrorString(Err);
  }
  return Err;
}

/// Launches Info's kernel on Stream, one block per channel, as launchBlocks
/// does.
inline cudaError_t launch(const KernelInfo &Info, const KernelArgs &Args, cudaStream_t Stream,
                          std::string &Why) {
  void *Params[] = {const_cast<KernelArgs *>(&Args)};
  return launchBlocks(
      reinterpret_cast<const void *>(Info.Run), Info.Shape.NChannels, Info.BlockThreads, Params,
      Stream, [&] { return std::string(Info.Algorithm) + " (" + Info.Collective + ")"; }, Why);
}

/// Empties a FIFO whose memory the device addresses (device memory, or
/// mapped host memory), in Stream's order: its counters, and its slots,
/// where lines of an LL message that an earlier FIFO in the same memory
/// left would pass for this one's.
inline cudaError_t clearFifo(const Fifo &Q, cudaStream_t Stream) {
  return cudaMemsetAsync(Q.Header, 0, Fifo::bytesFor(Q.NumSlots, Q.SlotBytes), Stream);
}

/// How an error message names a wait.
inline const char *waitWords(WaitKind What) {
  switch (What) {
  case WaitKind::Send:
    return "send to";
  case WaitKind::Receive:
    return "receive from";
  case WaitKind::Exchange:
    return "exchange with";
  }
  return "wait for";
}

/// What a kernel's status word says, for an error message.
inline std::string describe(const KernelStatus &S) {
  std::string Where = std::string(waitWords(WaitKind(S.Wait))) + " rank " + std::to_string(S.Peer) +
                      " on channel " + std::to_string(S.Channel);
  switch (CommStatus(S.Code)) {
  case CommStatus::Ok:
    return "completed";
  case CommStatus::Timeout:
    return "timed out waiting to " + Where + "; the peer may have died or stalled";
  case CommStatus::Aborted:
    return "aborted while waiting to " + Where;
  case CommStatus::Mismatch:
    if (S.Sent.Seq)
      return "rank " + std::to_string(S.Peer) + " sent a message of another call on channel " +
             std::to_string(S.Channel) + " (its call " + std::to_string(S.Sent.Seq) +
             ", this rank's call " + std::to_string(S.Called.Seq) +
             "); every rank must make the same calls";
    return "received " + std::to_string(S.Got) + " bytes from rank " + std::to_string(S.Peer) +
           " on channel " + std::to_string(S.Channel) + " where the schedule expects " +
           std::to_string(S.Expected) + "; the ranks run different plans or kernels";
  }
  return "unknown status " + std::to_string(S.Code);
}

} // namespace cclc::cuda
