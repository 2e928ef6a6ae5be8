//===- Arith.cpp - Integer semantics of the .ccl language -----------------===//

#include "dsl/Arith.h"
#include "plan/Assert.h"

#include <algorithm>
#include <bit>

namespace cclc::dsl {

EvalResult evalUnary(UnaryOp Op, int64_t Operand) {
  switch (Op) {
  case UnaryOp::Neg:
    if (Operand == INT64_MIN)
      return EvalResult::fail("integer overflow in negation");
    return EvalResult::ok(-Operand);
  case UnaryOp::Not:
    return EvalResult::ok(!Operand);
  case UnaryOp::BitNot:
    return EvalResult::ok(~Operand);
  }
  CCLC_UNREACHABLE("unknown unary operator");
}

static EvalResult overflow(BinaryOp Op, int64_t Lhs, int64_t Rhs) {
  return EvalResult::fail("integer overflow in " + std::to_string(Lhs) + " " +
                          std::string(binaryOpSpelling(Op)) + " " + std::to_string(Rhs));
}

EvalResult evalBinary(BinaryOp Op, int64_t Lhs, int64_t Rhs) {
  int64_t Result = 0;
  switch (Op) {
  case BinaryOp::Add:
    if (__builtin_add_overflow(Lhs, Rhs, &Result))
      return overflow(Op, Lhs, Rhs);
    return EvalResult::ok(Result);
  case BinaryOp::Sub:
    if (__builtin_sub_overflow(Lhs, Rhs, &Result))
      return overflow(Op, Lhs, Rhs);
    return EvalResult::ok(Result);
  case BinaryOp::Pow: {
    if (Rhs < 0)
      return EvalResult::fail("negative exponent " + std::to_string(Rhs) +
                              " (integers have no fractions)");
    // Square-and-multiply; any overflow on the way is an overflow of the
    // result, since |Lhs| >= 2 only grows.
    int64_t Base = Lhs, Power = 1;
    for (int64_t E = Rhs; E > 0; E >>= 1) {
      if ((E & 1) && __builtin_mul_overflow(Power, Base, &Power))
        return overflow(Op, Lhs, Rhs);
      if (E > 1 && __builtin_mul_overflow(Base, Base, &Base))
        return overflow(Op, Lhs, Rhs);
    }
    return EvalResult::ok(Power);
  }
  case BinaryOp::Mul:
    if (__builtin_mul_overflow(Lhs, Rhs, &Result))
      return overflow(Op, Lhs, Rhs);
    return EvalResult::ok(Result);
  case BinaryOp::Div:
  case BinaryOp::Rem: {
    if (Rhs == 0)
      return EvalResult::fail(std::string(Op == BinaryOp::Div ? "division" : "remainder") +
                              " by zero");
    if (Lhs == INT64_MIN && Rhs == -1)
      return overflow(Op, Lhs, Rhs);
    int64_t Quot = Lhs / Rhs;
    int64_t Rem = Lhs % Rhs;
    // Round toward negative infinity, as Python does.
    if (Rem != 0 && ((Rem < 0) != (Rhs < 0))) {
      --Quot;
      Rem += Rhs;
    }
    return EvalResult::ok(Op == BinaryOp::Div ? Quot : Rem);
  }
  case BinaryOp::Shl:
  case BinaryOp::Shr:
    if (Rhs < 0 || Rhs > 62)
      return EvalResult::fail("shift amount " + std::to_string(Rhs) + " is outside 0..62");
    if (Op == BinaryOp::Shr)
      return EvalResult::ok(Lhs >> Rhs);
    if (Lhs != 0 && (Lhs > (INT64_MAX >> Rhs) || Lhs < (INT64_MIN >> Rhs)))
      return overflow(Op, Lhs, Rhs);
    return EvalResult::ok(static_cast<int64_t>(static_cast<uint64_t>(Lhs) << Rhs));
  case BinaryOp::BitAnd: return EvalResult::ok(Lhs & Rhs);
  case BinaryOp::BitXor: return EvalResult::ok(Lhs ^ Rhs);
  case BinaryOp::BitOr: return EvalResult::ok(Lhs | Rhs);
  case BinaryOp::Eq: return EvalResult::ok(Lhs == Rhs);
  case BinaryOp::Ne: return EvalResult::ok(Lhs != Rhs);
  case BinaryOp::Lt: return EvalResult::ok(Lhs < Rhs);
  case BinaryOp::Le: return EvalResult::ok(Lhs <= Rhs);
  case BinaryOp::Gt: return EvalResult::ok(Lhs > Rhs);
  case BinaryOp::Ge: return EvalResult::ok(Lhs >= Rhs);
  case BinaryOp::LogAnd: return EvalResult::ok(Lhs && Rhs);
  case BinaryOp::LogOr: return EvalResult::ok(Lhs || Rhs);
  }
  CCLC_UNREACHABLE("unknown binary operator");
}

EvalResult evalFunction(std::string_view Name, std::span<const int64_t> Args) {
  if (Name == "log2") {
    if (Args[0] <= 0)
      return EvalResult::fail("log2 of " + std::to_string(Args[0]) +
                              " is undefined (needs a positive argument)");
    return EvalResult::ok(63 - std::countl_zero(static_cast<uint64_t>(Args[0])));
  }
  if (Name == "pow2")
    return EvalResult::ok(Args[0] > 0 && std::has_single_bit(static_cast<uint64_t>(Args[0])));
  if (Name == "min")
    return EvalResult::ok(std::min(Args[0], Args[1]));
  if (Name == "max")
    return EvalResult::ok(std::max(Args[0], Args[1]));
  CCLC_UNREACHABLE("unknown builtin function");
}

} // namespace cclc::dsl
