//===- CudaError.cu - CUDA errors and the GPU runtime memory ---*- CUDA -*-===//
//
// Host code only; nvcc compiles it with the rest of the GPU runtime so that
// the library has one toolchain. Freeing never throws: a destructor cannot
// report an error, and memory CUDA fails to free is lost either way.
//
//===----------------------------------------------------------------------===//

#include "runtime/cuda/CudaError.h"

#include <cstring>

namespace cclc::gpu {

void check(cudaError_t Err, const std::string &What, const std::string &Remedy) {
  if (Err == cudaSuccess)
    return;
  cudaGetLastError();
  throw CudaError(Err,
                  What + ": " + cudaGetErrorString(Err) + (Remedy.empty() ? "" : "; " + Remedy));
}

RelaxedCapture::RelaxedCapture() noexcept {
  Exchanged = cudaThreadExchangeStreamCaptureMode(&Previous) == cudaSuccess;
  if (!Exchanged)
    cudaGetLastError();
}

RelaxedCapture::~RelaxedCapture() {
  if (Exchanged)
    cudaThreadExchangeStreamCaptureMode(&Previous);
}

DeviceBuffer::DeviceBuffer(size_t Bytes, const std::string &Purpose) : Bytes(Bytes) {
  RelaxedCapture Relaxed;
  void *P = nullptr;
  check(cudaMalloc(&P, Bytes ? Bytes : 1),
        "cannot allocate " + std::to_string(Bytes) + " bytes of device memory for " + Purpose,
        "free device memory or use fewer channels or smaller slots");
  Ptr.reset(P);
}

void DeviceBuffer::Free::operator()(void *P) const noexcept {
  RelaxedCapture Relaxed;
  cudaFree(P);
}

MappedBuffer::MappedBuffer(size_t Bytes, const std::string &Purpose) : Bytes(Bytes) {
  RelaxedCapture Relaxed;
  void *P = nullptr;
  check(cudaHostAlloc(&P, Bytes ? Bytes : 1, cudaHostAllocMapped | cudaHostAllocPortable),
        "cannot allocate " + std::to_string(Bytes) + " bytes of pinned host memory for " + Purpose,
        "raise the locked-memory limit (ulimit -l) or use fewer channels or smaller slots");
  Host.reset(P);
  std::memset(P, 0, Bytes ? Bytes : 1);
  check(cudaHostGetDevicePointer(&Device, P, 0),
        "cannot map pinned host memory for " + Purpose + " into the device",
        "use a device that supports mapped host memory");
}

void MappedBuffer::Free::operator()(void *P) const noexcept {
  RelaxedCapture Relaxed;
  cudaFreeHost(P);
}

MappedPages::MappedPages(void *Pages, size_t Bytes, const std::string &Purpose) {
  RelaxedCapture Relaxed;
  check(cudaHostRegister(Pages, Bytes, cudaHostRegisterMapped | cudaHostRegisterPortable),
        "cannot register " + Purpose + " with CUDA",
        "raise the locked-memory limit (ulimit -l)");
  Host.reset(Pages);
  check(cudaHostGetDevicePointer(&Device, Pages, 0),
        "cannot map " + Purpose + " into the device",
        "use a device that supports mapped host memory");
}

void MappedPages::Unregister::operator()(void *P) const noexcept {
  RelaxedCapture Relaxed;
  cudaHostUnregister(P);
}

OwnStream::OwnStream(const std::string &Purpose) {
  check(cudaStreamCreateWithFlags(&S, cudaStreamNonBlocking),
        "cannot create a stream for " + Purpose);
}

OwnStream::~OwnStream() {
  if (S)
    cudaStreamDestroy(S);
}

void OwnStream::finish(const std::string &What) { check(cudaStreamSynchronize(S), What); }

} // namespace cclc::gpu
