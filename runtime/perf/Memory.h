//===- Memory.h - Where a rank's buffers live and its calls run -*- C++ -*-===//
//
// cclc-perf measures the same calls on host buffers and, with --gpu, on
// device buffers enqueued on a CUDA stream. Everything else (the inputs
// every rank knows, the element-by-element check, the timing and the
// report) is the same, so the benchmark talks to its buffers only through
// this interface: inputs are written and outputs read through host memory,
// and waiting for the calls and batching the timed loop are the memory's.
// Host memory does all of it in place; device memory stages through the
// host, waits on its stream while it watches the communicator for failures
// of kernels that already returned, and can capture a loop in a CUDA graph.
//
// Device memory exists only in builds with CUDA. It is opened in the rank's
// own process, never before a fork: CUDA does not survive fork.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/api/cclc.h"

#include <cstddef>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>

namespace cclc::perf {

/// A timed loop ready to run.
struct Batch {
  std::function<void()> Run;
  /// The calls one Run makes, over which the time is averaged.
  int Calls = 0;
};

/// One rank's send and receive buffers, each as large as the largest size
/// measured, and where its calls run.
class Memory {
public:
  Memory() = default;
  Memory(const Memory &) = delete;
  Memory &operator=(const Memory &) = delete;
  virtual ~Memory() = default;

  void *send() const { return Send; }
  void *recv() const { return Recv; }

  /// The stream calls take: null for host buffers.
  virtual cclcStream_t stream() const = 0;
  /// What the header prints after "device": "host", or nccl-tests' index,
  /// PCI bus and name of the GPU.
  virtual std::string describe() const = 0;
  /// Makes the Bytes at Dst, within send() or recv(), what Fill writes into
  /// Bytes of host memory. Calls made later see them.
  virtual void write(void *Dst, size_t Bytes, const std::function<void(void *)> &Fill) = 0;
  /// Check's result for host memory holding the Bytes at Src, within send()
  /// or recv(), as the calls made so far left them.
  virtual size_t read(const void *Src, size_t Bytes,
                      const std::function<size_t(const void *)> &Check) = 0;
  /// Returns once every call made so far has finished; throws
  /// std::runtime_error naming What when one of them failed after it
  /// returned.
  virtual void wait(const std::string &What) = 0;
  /// Iters calls of Call as the timed loop: by default the calls themselves.
  virtual Batch batch(int Iters, const std::function<void()> &Call);

protected:
  void *Send = nullptr;
  void *Recv = nullptr;
};

/// Host memory of Bytes per buffer: from cclcMemAlloc where Registered.
std::unique_ptr<Memory> makeHostMemory(size_t Bytes, bool Registered);

/// Device memory of Bytes per buffer on GPU LocalRank modulo the number of
/// GPUs, made the calling thread's current device before Comm's first call
/// on a GPU, with a stream of its own. With GraphLaunches, batches are
/// captured in a CUDA graph launched that many times. Throws
/// std::runtime_error saying why when there is no such device, or when
/// cclc-perf was built without CUDA.
std::unique_ptr<Memory> makeDeviceMemory(size_t Bytes, int LocalRank, int GraphLaunches,
                                         cclcComm_t Comm);

/// --gpu-probe: prints the CUDA devices to Out and returns 0, or prints why
/// none can run a kernel and returns 1.
int probeDevices(std::FILE *Out);

} // namespace cclc::perf
