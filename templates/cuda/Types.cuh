//===- Types.cuh - Element types and reduction operators (CUDA) -*- CUDA -*-===//
//
// The element types and reduction operators generated CUDA kernels are
// instantiated with: float, double, __half, __nv_bfloat16 and the 8, 32 and
// 64-bit integers. The operators compute exactly what host/Types.h computes,
// so a GPU and a host executor that apply them in the same order agree bit
// for bit on every result that is not a NaN (whose payload the two kinds of
// hardware set differently): half types reduce through float and round to
// nearest even after every operation, integers wrap, and Max (Min) returns
// the first operand unless the second compares greater (smaller).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "cuda/Device.cuh"

#include <cstdint>
#include <type_traits>

namespace cclc::cuda {

template <class T> inline constexpr bool IsHalf = false;
template <> inline constexpr bool IsHalf<__half> = true;
template <> inline constexpr bool IsHalf<__nv_bfloat16> = true;

/// Half types widen to float exactly.
__device__ __forceinline__ float widen(__half X) { return __half2float(X); }
__device__ __forceinline__ float widen(__nv_bfloat16 X) { return __bfloat162float(X); }

/// Rounds a float to a half type, to nearest even.
template <class T> __device__ T narrow(float X);
template <> __device__ __forceinline__ __half narrow<__half>(float X) { return __float2half_rn(X); }
template <> __device__ __forceinline__ __nv_bfloat16 narrow<__nv_bfloat16>(float X) {
  return __float2bfloat16_rn(X);
}

/// The type integers compute in: unsigned, so sums and products wrap as
/// two's complement (what the host's T(A + B) gives) without signed overflow.
template <class T, bool = std::is_integral_v<T>> struct Wrapping { using Type = T; };
template <class T> struct Wrapping<T, true> { using Type = std::make_unsigned_t<T>; };

/// Fn(A, B) in the arithmetic of T.
template <class T, class F> __device__ __forceinline__ T arith(T A, T B, F Fn) {
  if constexpr (IsHalf<T>) {
    return narrow<T>(Fn(widen(A), widen(B)));
  } else {
    using W = typename Wrapping<T>::Type;
    return T(Fn(W(A), W(B)));
  }
}

/// A < B, comparing half types by value.
template <class T> __device__ __forceinline__ bool less(T A, T B) {
  if constexpr (IsHalf<T>)
    return widen(A) < widen(B);
  else
    return A < B;
}

struct Sum {
  template <class T> __device__ __forceinline__ T operator()(T A, T B) const {
    return arith(A, B, [](auto X, auto Y) { return X + Y; });
  }
};
struct Prod {
  template <class T> __device__ __forceinline__ T operator()(T A, T B) const {
    return arith(A, B, [](auto X, auto Y) { return X * Y; });
  }
};
struct Max {
  template <class T> __device__ __forceinline__ T operator()(T A, T B) const {
    return less(A, B) ? B : A;
  }
};
struct Min {
  template <class T> __device__ __forceinline__ T operator()(T A, T B) const {
    return less(B, A) ? B : A;
  }
};

} // namespace cclc::cuda
