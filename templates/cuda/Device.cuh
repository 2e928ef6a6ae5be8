//===- Device.cuh - The CUDA names the device templates use -----*- CUDA -*-===//
//
// nvcc compiles the device templates against the CUDA toolkit's headers.
// cclc reads the same templates with clang in CUDA mode without the toolkit
// (-nocudainc, see cuda/Primitives.cuh), to learn the primitives' signatures;
// for that parse this header declares the few CUDA names the templates use,
// with their toolkit signatures. No code is generated from them.
//
//===----------------------------------------------------------------------===//
#pragma once

#if defined(CCLC_CATALOG)

#ifndef __host__
#define __host__ __attribute__((host))
#endif
#ifndef __device__
#define __device__ __attribute__((device))
#endif
#ifndef __global__
#define __global__ __attribute__((global))
#endif
#ifndef __shared__
#define __shared__ __attribute__((shared))
#endif
#ifndef __forceinline__
#define __forceinline__ __inline__ __attribute__((always_inline))
#endif
#ifndef __noinline__
#define __noinline__ __attribute__((noinline))
#endif

struct uint3 {
  unsigned x, y, z;
};
struct alignas(16) uint4 {
  unsigned x, y, z, w;
};
extern const __device__ uint3 threadIdx;
extern const __device__ uint3 blockIdx;
extern const __device__ uint3 blockDim;

struct __half {
  unsigned short __x;
};
struct __nv_bfloat16 {
  unsigned short __x;
};
__host__ __device__ float __half2float(__half);
__host__ __device__ __half __float2half_rn(float);
__host__ __device__ float __bfloat162float(__nv_bfloat16);
__host__ __device__ __nv_bfloat16 __float2bfloat16_rn(float);

__device__ int __syncthreads_or(int);
__device__ int __any_sync(unsigned, int);
__device__ unsigned __shfl_sync(unsigned, unsigned, int);
__device__ unsigned atomicCAS(unsigned *, unsigned, unsigned);
__device__ unsigned atomicExch(unsigned *, unsigned);
__device__ void __threadfence_system();

#else

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#endif
