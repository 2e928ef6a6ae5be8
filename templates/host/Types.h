//===- Types.h - Element types and reduction operators (host) ----*- C++ -*-===//
//
// The element types and reduction operators generated host kernels are
// instantiated with. The operators are common/Operators.h's, so every
// executor and every test reference, on the host or on a GPU, that applies
// the same operators in the same order gets the same bits.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "common/Operators.h"

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

template <class T> inline constexpr bool IsHalf = false;
template <> inline constexpr bool IsHalf<bf16> = true;
template <> inline constexpr bool IsHalf<f16> = true;

/// The host's half types, as the operators see them (common/Operators.h).
struct Halves {
  template <class T> static constexpr bool Is = IsHalf<T>;
  template <class T> static float widen(T X) { return X.toFloat(); }
  template <class T> static T narrow(float X) { return T::fromFloat(X); }
};

using Sum = kern::Sum<Halves>;
using Prod = kern::Prod<Halves>;
using Max = kern::Max<Halves>;
using Min = kern::Min<Halves>;

/// The host's types for run-time dispatch (common/Dispatch.h).
struct TypeSet {
  using F16 = f16;
  using BF16 = bf16;
  using Sum = host::Sum;
  using Prod = host::Prod;
  using Min = host::Min;
  using Max = host::Max;
};

} // namespace cclc::host
