//===- GpuTest.h - Buffers and checks for the GPU tests ----------*- C++ -*-===//
//
// The GPU tests own their memory through these buffers, and turn every
// failing CUDA call into an exception that GoogleTest reports with the call
// and CUDA's message.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace cclc::gputest {

/// Throws when Err is not cudaSuccess.
inline void check(cudaError_t Err, const char *What) {
  if (Err != cudaSuccess)
    throw std::runtime_error(std::string(What) + ": " + cudaGetErrorString(Err));
}
#define CCLC_CUDA(Expr) ::cclc::gputest::check((Expr), #Expr)

/// Device memory for N elements of T.
template <class T> class DeviceBuffer {
public:
  explicit DeviceBuffer(size_t N) : N(N) { CCLC_CUDA(cudaMalloc(&Ptr, bytes() ? bytes() : 1)); }
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer &operator=(const DeviceBuffer &) = delete;
  ~DeviceBuffer() { cudaFree(Ptr); }

  T *get() const { return Ptr; }
  size_t bytes() const { return N * sizeof(T); }
  void upload(const std::vector<T> &From) {
    CCLC_CUDA(cudaMemcpy(Ptr, From.data(), bytes(), cudaMemcpyHostToDevice));
  }
  std::vector<T> download() const {
    std::vector<T> To(N);
    CCLC_CUDA(cudaMemcpy(To.data(), Ptr, bytes(), cudaMemcpyDeviceToHost));
    return To;
  }

private:
  T *Ptr = nullptr;
  size_t N;
};

/// Pinned host memory for N elements of T, mapped into the device's address
/// space and zeroed: where a proxy's FIFOs, abort flags and status words live.
template <class T> class MappedBuffer {
public:
  explicit MappedBuffer(size_t N = 1) {
    CCLC_CUDA(cudaHostAlloc(reinterpret_cast<void **>(&Host), N * sizeof(T), cudaHostAllocMapped));
    std::memset(static_cast<void *>(Host), 0, N * sizeof(T));
    CCLC_CUDA(cudaHostGetDevicePointer(reinterpret_cast<void **>(&Device), Host, 0));
  }
  MappedBuffer(const MappedBuffer &) = delete;
  MappedBuffer &operator=(const MappedBuffer &) = delete;
  ~MappedBuffer() { cudaFreeHost(Host); }

  T *host() const { return Host; }
  T *device() const { return Device; }

private:
  T *Host = nullptr;
  T *Device = nullptr;
};

/// Copies From to device memory at Dst.
template <class T> void toDevice(T *Dst, const std::vector<T> &From) {
  if (!From.empty())
    CCLC_CUDA(cudaMemcpy(Dst, From.data(), From.size() * sizeof(T), cudaMemcpyHostToDevice));
}

/// Whether the N elements at A and at B have the same bits.
template <class T> bool sameBits(const T *A, const T *B, size_t N) {
  return N == 0 || std::memcmp(static_cast<const void *>(A), static_cast<const void *>(B),
                               N * sizeof(T)) == 0;
}

/// N elements of T with random bits: every value of the type, NaNs,
/// infinities and subnormals included.
template <class T> std::vector<T> randomBits(size_t N, uint64_t Seed) {
  std::mt19937_64 Gen(Seed);
  std::vector<uint8_t> Bytes(N * sizeof(T));
  for (uint8_t &B : Bytes)
    B = uint8_t(Gen());
  std::vector<T> Values(N);
  std::memcpy(static_cast<void *>(Values.data()), Bytes.data(), Bytes.size());
  return Values;
}

} // namespace cclc::gputest
