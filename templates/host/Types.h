//===- Types.h - Element types and reduction operators (host) ----*- C++ -*-===//
//
// The element types and reduction operators generated host kernels are
// instantiated with. Half-precision types reduce through float and round to
// nearest even after every operation, so every executor and every test
// reference that applies the same operators in the same order gets the same
// bits.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>

namespace cclc::host {

/// bfloat16: the upper half of an IEEE float.
struct bf16 {
  uint16_t Bits = 0;
  static bf16 fromFloat(float F) {
    uint32_t U = std::bit_cast<uint32_t>(F);
    bf16 R;
    if ((U & 0x7fffffffu) > 0x7f800000u) { // NaN stays a quiet NaN
      R.Bits = uint16_t((U >> 16) | 0x40);
      return R;
    }
    U += 0x7fffu + ((U >> 16) & 1u);
    R.Bits = uint16_t(U >> 16);
    return R;
  }
  float toFloat() const { return std::bit_cast<float>(uint32_t(Bits) << 16); }
};

/// IEEE binary16.
struct f16 {
  uint16_t Bits = 0;
  static f16 fromFloat(float F) {
    f16 R;
    R.Bits = std::bit_cast<uint16_t>(static_cast<_Float16>(F));
    return R;
  }
  float toFloat() const { return static_cast<float>(std::bit_cast<_Float16>(Bits)); }
};

/// Applies a float operator to a type stored as bits.
template <class T, class F> inline T throughFloat(T A, T B, F Fn) {
  return T::fromFloat(Fn(A.toFloat(), B.toFloat()));
}

template <class T> inline constexpr bool IsHalf = false;
template <> inline constexpr bool IsHalf<bf16> = true;
template <> inline constexpr bool IsHalf<f16> = true;

// The operators. Max and Min return the first operand unless the second
// compares greater (smaller), matching a ? : on vectors element by element.
struct Sum {
  template <class T> T operator()(T A, T B) const {
    if constexpr (IsHalf<T>)
      return throughFloat(A, B, [](float X, float Y) { return X + Y; });
    else
      return T(A + B);
  }
};
struct Prod {
  template <class T> T operator()(T A, T B) const {
    if constexpr (IsHalf<T>)
      return throughFloat(A, B, [](float X, float Y) { return X * Y; });
    else
      return T(A * B);
  }
};
struct Max {
  template <class T> T operator()(T A, T B) const {
    if constexpr (IsHalf<T>)
      return A.toFloat() < B.toFloat() ? B : A;
    else
      return A < B ? B : A;
  }
};
struct Min {
  template <class T> T operator()(T A, T B) const {
    if constexpr (IsHalf<T>)
      return B.toFloat() < A.toFloat() ? B : A;
    else
      return B < A ? B : A;
  }
};

} // namespace cclc::host
