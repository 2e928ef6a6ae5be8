//===- Gpu.h - What the runtime asks of the GPU -----------------*- C++ -*-===//
//
// The C API runs collectives on the GPU through this interface, so that the
// rest of the runtime compiles with the host compiler alone and builds
// without CUDA: runtime/cuda/GpuContext.cu implements it in builds with CUDA,
// NoGpu.cpp in builds without, where every GPU call is refused.
//
// Nothing here initialises CUDA unless the call needs the GPU. Programs fork
// their ranks, and CUDA does not survive a fork: a host call must leave a
// process free to fork.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/api/Algorithms.h"
#include "runtime/api/Status.h"
#include "runtime/api/Workspace.h"

#include "common/Fifo.h"
#include "common/KernelTypes.h"
#include "runtime/bootstrap/Bootstrap.h"

#include <cstddef>
#include <deque>
#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace cclc::runtime {

/// A communicator's GPU: its device, the connections and programs of the
/// algorithms that ran there, the device workspace, the abort word its
/// kernels watch and the status word they record failures in. Made at the
/// communicator's first GPU call; destroying it waits for its GPU work and
/// frees its memory.
class GpuContext {
public:
  virtual ~GpuContext() = default;

  /// Refuses, with ApiError(cclcInvalidArgument), a buffer the device cannot
  /// reach: host memory that is neither pinned nor managed, or another
  /// device's memory. Name names the buffer in the message.
  virtual void checkBuffer(const void *Buffer, const char *Name) = 0;
  /// Loads the generated CUDA kernels of Loaded onto the device. CUDA loads
  /// a kernel at its first launch, and loading may wait until every kernel
  /// of the process has ended: a rank whose peers are threads of the same
  /// process could then wait for kernels that wait for it. Called when the
  /// context is made, before any kernel of the communicator runs; kernels
  /// registered later load at their first launch. Throws
  /// ApiError(cclcSystemError) when CUDA fails.
  virtual void loadKernels(const std::deque<Algorithm> &Loaded) = 0;
  /// Device memory for what GPU calls need besides the caller's buffers.
  virtual Workspace &space() = 0;
  /// Enqueues a copy of Bytes from Src to Dst on Stream.
  virtual void copy(void *Dst, const void *Src, size_t Bytes, void *Stream) = 0;
  /// Enqueues R, run by A, on Stream (a cudaStream_t; null for the legacy
  /// default stream) with Args' buffers and count, and returns without
  /// waiting; the kernel stamps its messages with Stamp. A's first launch
  /// connects its transports and uploads its program, which is collective.
  /// Throws ApiError(cclcSystemError) when CUDA fails.
  virtual void launch(const Request &R, const Algorithm &A, const kern::CallArgs &Args,
                      const kern::CallStamp &Stamp, void *Stream) = 0;
  /// The first failure of the kernels or the GPU transports; none while all
  /// is well, which costs no CUDA call to learn.
  virtual std::optional<Classified> failure() = 0;
  /// Returns once every kernel this context enqueued so far has ended (not
  /// the device's other work). Throws ApiError(cclcSystemError) when CUDA
  /// reports an error.
  virtual void synchronize() = 0;
  /// Unmaps the memory of peers that this rank's kernels wrote, once they
  /// have ended (synchronize()); see leaveTogether().
  virtual void closePeerMemory() = 0;
  /// Stops the kernels and the GPU transports, here and at the peers,
  /// recording Cause. Safe from any thread.
  virtual void abort(const std::string &Cause) = 0;
};

/// The end of a regular destroy, in the order that keeps every rank's memory
/// valid while a peer still maps it: Gpu (when there is one, its kernels
/// ended) unmaps its peers' memory, then Barrier() waits until every rank
/// has done so; only then may the caller free this rank's own memory, by
/// destroying Gpu. Freeing before the barrier would let a rank free a block
/// that a peer still has open.
template <class B> void leaveTogether(GpuContext *Gpu, B &&Barrier) {
  if (Gpu)
    Gpu->closePeerMemory();
  Barrier();
}

/// Describes a kernel's message from Peer of the call Sent where the
/// kernel ran Expected, for the failure's message.
using MismatchWords = std::function<std::string(int Peer, const kern::CallStamp &Sent,
                                                const kern::CallStamp &Expected)>;

/// A GPU context for Boot's rank on the device current on the calling
/// thread, describing mismatched calls with Describe. Throws ApiError
/// saying why there is none and what to do: cclcSystemError when CUDA finds
/// no usable device or driver, cclcInvalidUsage in a build without CUDA.
/// Call ("allreduce") names what asked for the GPU.
std::unique_ptr<GpuContext> createGpuContext(net::Bootstrap &Boot, const std::string &Call,
                                             MismatchWords Describe);

/// The entries of Count cclc::cuda::KernelInfo at Infos, unchecked. Throws
/// ApiError(cclcInvalidUsage) in a build without CUDA.
std::vector<KernelEntry> cudaKernelEntries(const void *Infos, size_t Count);

/// True when the CUDA driver, if this process has loaded and initialised
/// it, says that one of Pointers (nulls aside) points into device memory.
/// Never loads or initialises CUDA: where the driver is not in use, no
/// memory is a device's. A call asks once for all its buffers, since asking
/// whether the driver is loaded takes the loader's lock.
bool anyDeviceMemory(std::initializer_list<const void *> Pointers);
inline bool isDeviceMemory(const void *P) { return anyDeviceMemory({P}); }

} // namespace cclc::runtime
