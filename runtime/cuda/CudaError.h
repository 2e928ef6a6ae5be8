//===- CudaError.h - CUDA errors and the GPU runtime's memory ---*- C++ -*-===//
//
// The GPU runtime reports a failing CUDA call as an exception naming what it
// was doing, like the rest of the runtime (net::NetError), so that the C API
// turns it into a status and a message in one place. The memory it makes
// for FIFOs and connection tables is owned by RAII buffers, so that a setup
// that fails halfway frees what it made.
//
// Setup work (zeroing, uploading) goes on streams of the runtime's own that
// do not synchronize with the legacy default stream: it neither waits for
// the application's kernels nor joins a capture in progress.
//
// The runtime may connect or free while the application captures a stream
// into a CUDA graph. Allocating, freeing and mapping memory are calls CUDA
// forbids during a capture unless the calling thread relaxes its capture
// mode; RelaxedCapture does that for a scope, and the buffers relax it when
// they free, so that a communicator may be destroyed at any time.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace cclc::gpu {

class CudaError : public std::runtime_error {
public:
  CudaError(cudaError_t Code, const std::string &What) : std::runtime_error(What), Code(Code) {}
  /// What CUDA returned, for a caller that maps it to a status.
  cudaError_t code() const { return Code; }

private:
  cudaError_t Code;
};

/// Throws CudaError "What: <CUDA's message>[; Remedy]" unless Err is
/// cudaSuccess. It clears CUDA's last-error state first, so that a caller
/// that handles the exception does not see the error again in a later
/// cudaGetLastError().
void check(cudaError_t Err, const std::string &What, const std::string &Remedy = {});

/// Lets the calling thread make setup calls while a stream is being
/// captured, for the scope of the object. It never throws, so that
/// destructors can use it: where the mode cannot be changed, the calls it
/// guards fail on their own and say so.
class RelaxedCapture {
public:
  RelaxedCapture() noexcept;
  ~RelaxedCapture();
  RelaxedCapture(const RelaxedCapture &) = delete;
  RelaxedCapture &operator=(const RelaxedCapture &) = delete;

private:
  cudaStreamCaptureMode Previous = cudaStreamCaptureModeRelaxed;
  bool Exchanged = false;
};

/// Device memory of the current device.
class DeviceBuffer {
public:
  DeviceBuffer() = default;
  /// Allocates Bytes (at least one); Purpose names the memory in the error.
  DeviceBuffer(size_t Bytes, const std::string &Purpose);

  void *get() const { return Ptr.get(); }
  size_t bytes() const { return Bytes; }

private:
  struct Free {
    void operator()(void *P) const noexcept;
  };
  std::unique_ptr<void, Free> Ptr;
  size_t Bytes = 0;
};

/// Pinned host memory mapped into the devices' address space, zeroed: where
/// host code and kernels share words (an abort flag, the FIFOs a proxy
/// thread carries over the network).
class MappedBuffer {
public:
  MappedBuffer() = default;
  /// Allocates Bytes (at least one); Purpose names the memory in the error.
  MappedBuffer(size_t Bytes, const std::string &Purpose);

  /// The address host code uses.
  void *host() const { return Host.get(); }
  /// The address kernels use.
  void *device() const { return Device; }
  size_t bytes() const { return Bytes; }

private:
  struct Free {
    void operator()(void *P) const noexcept;
  };
  std::unique_ptr<void, Free> Host;
  void *Device = nullptr;
  size_t Bytes = 0;
};

/// Host memory the application or the runtime allocated otherwise (a page
/// of POSIX shared memory), registered with CUDA and mapped into the
/// devices' address space while this lives.
class MappedPages {
public:
  MappedPages() = default;
  /// Registers Bytes at Host, page-aligned; Purpose names the memory in the
  /// error.
  MappedPages(void *Host, size_t Bytes, const std::string &Purpose);

  /// The address kernels use.
  void *device() const { return Device; }

private:
  struct Unregister {
    void operator()(void *P) const noexcept;
  };
  std::unique_ptr<void, Unregister> Host;
  void *Device = nullptr;
};

/// A stream of the runtime's own, non-blocking.
class OwnStream {
public:
  /// Purpose names the stream in the error.
  explicit OwnStream(const std::string &Purpose);
  ~OwnStream();
  OwnStream(const OwnStream &) = delete;
  OwnStream &operator=(const OwnStream &) = delete;

  cudaStream_t get() const { return S; }
  /// Waits until the work queued so far has completed; What says what
  /// failed otherwise.
  void finish(const std::string &What);

private:
  cudaStream_t S = nullptr;
};

/// Device memory holding a copy of Values, copied in Stream's order.
template <class T>
DeviceBuffer upload(const std::vector<T> &Values, cudaStream_t Stream, const std::string &Purpose) {
  DeviceBuffer Buffer(Values.size() * sizeof(T), Purpose);
  check(cudaMemcpyAsync(Buffer.get(), Values.data(), Values.size() * sizeof(T),
                        cudaMemcpyHostToDevice, Stream),
        "cannot copy " + Purpose + " to the device");
  return Buffer;
}

} // namespace cclc::gpu
