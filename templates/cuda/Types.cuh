//===- Types.cuh - Element types and reduction operators (CUDA) -*- CUDA -*-===//
//
// The element types and reduction operators generated CUDA kernels are
// instantiated with: float, double, __half, __nv_bfloat16 and the 8, 32 and
// 64-bit integers. The operators are common/Operators.h's, the ones host
// kernels use, so that GPU and host executors agree bit for bit.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "common/Operators.h"
#include "cuda/Device.cuh"

#include <type_traits>

namespace cclc::cuda {

template <class T> inline constexpr bool IsHalf = false;
template <> inline constexpr bool IsHalf<__half> = true;
template <> inline constexpr bool IsHalf<__nv_bfloat16> = true;

/// The device's half types, as the operators see them (common/Operators.h).
struct Halves {
  template <class T> static constexpr bool Is = IsHalf<T>;
  __device__ __forceinline__ static float widen(__half X) { return __half2float(X); }
  __device__ __forceinline__ static float widen(__nv_bfloat16 X) { return __bfloat162float(X); }
  template <class T> __device__ __forceinline__ static T narrow(float X) {
    if constexpr (std::is_same_v<T, __half>)
      return __float2half_rn(X);
    else
      return __float2bfloat16_rn(X);
  }
};

using Sum = kern::Sum<Halves>;
using Prod = kern::Prod<Halves>;
using Max = kern::Max<Halves>;
using Min = kern::Min<Halves>;

/// The device's types for run-time dispatch (common/Dispatch.h).
struct TypeSet {
  using F16 = __half;
  using BF16 = __nv_bfloat16;
  using Sum = cuda::Sum;
  using Prod = cuda::Prod;
  using Min = cuda::Min;
  using Max = cuda::Max;
};

} // namespace cclc::cuda
