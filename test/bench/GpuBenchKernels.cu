//===- GpuBenchKernels.cu - What cclc-gpu-bench runs on the device --------===//

#include "GpuBenchKernels.h"

#include "butterfly-allreduce.cuh"
#include "ring-allreduce.cuh"

#include "cuda/Interpreter.cuh"

namespace cclc::bench {
namespace {

constexpr int Threads = 256;
/// Enough blocks of Threads to cover the GPU, striding over the rest.
constexpr unsigned Blocks = 1024;

__global__ void fillKernel(float *Data, size_t N, float Value) {
  for (size_t I = size_t(blockIdx.x) * blockDim.x + threadIdx.x; I < N;
       I += size_t(gridDim.x) * blockDim.x)
    Data[I] = Value;
}

__global__ void __launch_bounds__(cuda::InterpreterThreads)
    copyPrimitiveKernel(const float *Src, float *Dst, size_t N) {
  size_t Part = (N + gridDim.x - 1) / gridDim.x;
  size_t Begin = Part * blockIdx.x < N ? Part * blockIdx.x : N;
  size_t End = N - Begin < Part ? N : Begin + Part;
  kern::Layout L;
  L.Count = L.RoundElems = L.PieceElems = End - Begin;
  cuda::copy<float, cuda::Sum>(cuda::Slice<const float>{Src + Begin, &L, 1, 0, 1},
                               cuda::Slice<float>{Dst + Begin, &L, 1, 0, 1});
}

__global__ void countDifferentKernel(const float *Data, size_t N, float Value,
                                     unsigned long long *Wrong) {
  unsigned long long Mine = 0;
  for (size_t I = size_t(blockIdx.x) * blockDim.x + threadIdx.x; I < N;
       I += size_t(gridDim.x) * blockDim.x)
    Mine += Data[I] != Value;
  if (Mine)
    atomicAdd(Wrong, Mine);
}

} // namespace

std::span<const gputest::KernelTable> allReduceKernels() {
  static const gputest::KernelTable Tables[] = {
      gputest::kernelTable("ring-allreduce", gen::ring_allreduce_kernels),
      gputest::kernelTable("butterfly-allreduce", gen::butterfly_allreduce_kernels),
  };
  return Tables;
}

cudaError_t fillFloats(float *Data, size_t N, float Value, cudaStream_t Stream) {
  fillKernel<<<Blocks, Threads, 0, Stream>>>(Data, N, Value);
  return cudaGetLastError();
}

cudaError_t copyPrimitive(const float *Src, float *Dst, size_t N, int Channels,
                          cudaStream_t Stream) {
  copyPrimitiveKernel<<<Channels, cuda::InterpreterThreads, 0, Stream>>>(Src, Dst, N);
  return cudaGetLastError();
}

cudaError_t countDifferent(const float *Data, size_t N, float Value, unsigned long long *Wrong,
                           cudaStream_t Stream) {
  countDifferentKernel<<<Blocks, Threads, 0, Stream>>>(Data, N, Value, Wrong);
  return cudaGetLastError();
}

} // namespace cclc::bench
