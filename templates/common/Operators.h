//===- Operators.h - The reduction operators of every target -----*- C++ -*-===//
//
// Sum, Prod, Max and Min, for host and CUDA kernels alike, so that a GPU and
// a host executor applying them in the same order agree bit for bit on every
// result that is not a NaN (whose payload the two kinds of hardware set
// differently): half types reduce through float and round to nearest even
// after every operation, integers wrap, and Max (Min) returns the first
// operand unless the second compares greater (smaller), matching a ? : on
// vectors element by element.
//
// A target instantiates the operators with a class Halves that describes its
// half types: Halves::Is<T> says whether T is one, Halves::widen(X) converts
// one to float exactly, and Halves::narrow<T>(F) rounds a float to T, to
// nearest even.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "common/HostDevice.h"

#include <concepts>
#include <type_traits>

namespace cclc::kern {

/// The type arithmetic on T runs in. Integers compute unsigned and at least
/// as wide as unsigned int, so sums and products wrap as two's complement
/// where signed types (and unsigned ones narrower than int, which promote to
/// int) would overflow.
template <class T> struct Wrapping { using Type = T; };
template <std::integral T> struct Wrapping<T> {
  using Type = std::common_type_t<std::make_unsigned_t<T>, unsigned>;
};

/// Fn(A, B) in the arithmetic of T.
CCLC_HD_UNCHECKED
template <class Halves, class T, class F> CCLC_HD T arith(T A, T B, F Fn) {
  if constexpr (Halves::template Is<T>) {
    return Halves::template narrow<T>(Fn(Halves::widen(A), Halves::widen(B)));
  } else {
    using W = typename Wrapping<T>::Type;
    return T(Fn(W(A), W(B)));
  }
}

/// A < B, comparing half types by value.
CCLC_HD_UNCHECKED
template <class Halves, class T> CCLC_HD bool less(T A, T B) {
  if constexpr (Halves::template Is<T>)
    return Halves::widen(A) < Halves::widen(B);
  else
    return A < B;
}

template <class Halves> struct Sum {
  template <class T> CCLC_HD T operator()(T A, T B) const {
    return arith<Halves>(A, B, [](auto X, auto Y) { return X + Y; });
  }
};
template <class Halves> struct Prod {
  template <class T> CCLC_HD T operator()(T A, T B) const {
    return arith<Halves>(A, B, [](auto X, auto Y) { return X * Y; });
  }
};
template <class Halves> struct Max {
  template <class T> CCLC_HD T operator()(T A, T B) const { return less<Halves>(A, B) ? B : A; }
};
template <class Halves> struct Min {
  template <class T> CCLC_HD T operator()(T A, T B) const { return less<Halves>(B, A) ? B : A; }
};

} // namespace cclc::kern
