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

bool tryBinary(BinaryOp Op, int64_t Lhs, int64_t Rhs, int64_t &Result) {
  switch (Op) {
  case BinaryOp::Add:
    return !__builtin_add_overflow(Lhs, Rhs, &Result);
  case BinaryOp::Sub:
    return !__builtin_sub_overflow(Lhs, Rhs, &Result);
  case BinaryOp::Pow: {
    if (Rhs < 0)
      return false;
    // Square-and-multiply; any overflow on the way is an overflow of the
    // result, since |Lhs| >= 2 only grows.
    int64_t Base = Lhs, Power = 1;
    for (int64_t E = Rhs; E > 0; E >>= 1) {
      if ((E & 1) && __builtin_mul_overflow(Power, Base, &Power))
        return false;
      if (E > 1 && __builtin_mul_overflow(Base, Base, &Base))
        return false;
    }
    Result = Power;
    return true;
  }
  case BinaryOp::Mul:
    return !__builtin_mul_overflow(Lhs, Rhs, &Result);
  case BinaryOp::Div:
  case BinaryOp::Rem: {
    if (Rhs == 0 || (Lhs == INT64_MIN && Rhs == -1))
      return false;
    int64_t Quot = Lhs / Rhs;
    int64_t Rem = Lhs % Rhs;
    // Round toward negative infinity, as Python does.
    if (Rem != 0 && ((Rem < 0) != (Rhs < 0))) {
      --Quot;
      Rem += Rhs;
    }
    Result = Op == BinaryOp::Div ? Quot : Rem;
    return true;
  }
  case BinaryOp::Shl:
  case BinaryOp::Shr:
    if (Rhs < 0 || Rhs > 62)
      return false;
    if (Op == BinaryOp::Shr) {
      Result = Lhs >> Rhs;
      return true;
    }
    if (Lhs != 0 && (Lhs > (INT64_MAX >> Rhs) || Lhs < (INT64_MIN >> Rhs)))
      return false;
    Result = static_cast<int64_t>(static_cast<uint64_t>(Lhs) << Rhs);
    return true;
  case BinaryOp::BitAnd: Result = Lhs & Rhs; return true;
  case BinaryOp::BitXor: Result = Lhs ^ Rhs; return true;
  case BinaryOp::BitOr: Result = Lhs | Rhs; return true;
  case BinaryOp::Eq: Result = Lhs == Rhs; return true;
  case BinaryOp::Ne: Result = Lhs != Rhs; return true;
  case BinaryOp::Lt: Result = Lhs < Rhs; return true;
  case BinaryOp::Le: Result = Lhs <= Rhs; return true;
  case BinaryOp::Gt: Result = Lhs > Rhs; return true;
  case BinaryOp::Ge: Result = Lhs >= Rhs; return true;
  case BinaryOp::LogAnd: Result = Lhs && Rhs; return true;
  case BinaryOp::LogOr: Result = Lhs || Rhs; return true;
  }
  CCLC_UNREACHABLE("unknown binary operator");
}

EvalResult evalBinary(BinaryOp Op, int64_t Lhs, int64_t Rhs) {
  if (int64_t Result = 0; tryBinary(Op, Lhs, Rhs, Result))
    return EvalResult::ok(Result);
  // Say which of tryBinary's refusals this is: an operand outside the
  // operator's domain, or else a result that does not fit.
  if ((Op == BinaryOp::Div || Op == BinaryOp::Rem) && Rhs == 0)
    return EvalResult::fail(std::string(Op == BinaryOp::Div ? "division" : "remainder") +
                            " by zero");
  if (Op == BinaryOp::Pow && Rhs < 0)
    return EvalResult::fail("negative exponent " + std::to_string(Rhs) +
                            " (integers have no fractions)");
  if ((Op == BinaryOp::Shl || Op == BinaryOp::Shr) && (Rhs < 0 || Rhs > 62))
    return EvalResult::fail("shift amount " + std::to_string(Rhs) + " is outside 0..62");
  return EvalResult::fail("integer overflow in " + std::to_string(Lhs) + " " +
                          std::string(binaryOpSpelling(Op)) + " " + std::to_string(Rhs));
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
