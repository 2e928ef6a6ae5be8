//===- GpuBenchKernels.h - cclc-gpu-bench's device work ---------*- C++ -*-===//
//
// The CUDA side of cclc-gpu-bench, for its plain C++: the generated
// allreduce kernels it links, and the filling and checking of its buffers on
// the device itself, since a gigabyte per rank would take seconds through
// host memory.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "KernelTable.h"

#include <cuda_runtime.h>

#include <cstddef>
#include <span>

namespace cclc::bench {

/// The rank count the linked kernels are generated for.
inline constexpr int KernelRanks = 8;

/// The linked ring and butterfly allreduce kernels (f32, sum).
std::span<const gputest::KernelTable> allReduceKernels();

/// Enqueues setting the N floats at Data to Value.
cudaError_t fillFloats(float *Data, size_t N, float Value, cudaStream_t Stream);

/// Enqueues the copy primitive (cuda::copy, as generated kernels and the
/// interpreter call it) on Channels blocks of the interpreter's threads,
/// block c copying the c-th of Channels equal parts of the N floats at Src
/// to Dst, as Channels channels would.
cudaError_t copyPrimitive(const float *Src, float *Dst, size_t N, int Channels,
                          cudaStream_t Stream);

/// Enqueues adding to *Wrong, a device counter, how many of the N floats at
/// Data differ from Value.
cudaError_t countDifferent(const float *Data, size_t N, float Value, unsigned long long *Wrong,
                           cudaStream_t Stream);

} // namespace cclc::bench
