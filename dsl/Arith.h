//===- Arith.h - Integer semantics of the .ccl language ---------*- C++ -*-===//
//
// One definition of every operator and builtin function, shared by constant
// folding in sema and by instantiation in the compiler, so that both agree to
// the bit. Integers are 64-bit; '/' and '%' round toward negative infinity
// (so `(rank - 1) % nranks` is nranks-1 at rank 0); overflow, division by
// zero and out-of-range shifts are errors, never wrapped.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "dsl/AST.h"

#include <cstdint>
#include <optional>
#include <span>
#include <string>

namespace cclc::dsl {

/// Result of an evaluation: a value, or a message saying why there is none.
struct EvalResult {
  std::optional<int64_t> Value;
  std::string Error;
  static EvalResult ok(int64_t V) { return {V, {}}; }
  static EvalResult fail(std::string Msg) { return {std::nullopt, std::move(Msg)}; }
};

/// Booleans are carried as 0 and 1.
EvalResult evalUnary(UnaryOp Op, int64_t Operand);
EvalResult evalBinary(BinaryOp Op, int64_t Lhs, int64_t Rhs);
/// evalBinary without its message: false (and Result unspecified) where
/// evalBinary fails. For callers that evaluate the same expression many times
/// over and need the message only when it fails.
bool tryBinary(BinaryOp Op, int64_t Lhs, int64_t Rhs, int64_t &Result);
/// Evaluates log2, pow2, min or max; the arity was checked by sema.
EvalResult evalFunction(std::string_view Name, std::span<const int64_t> Args);

} // namespace cclc::dsl
