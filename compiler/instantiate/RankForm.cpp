//===- RankForm.cpp - How a value depends on the rank ---------------------===//

#include "compiler/instantiate/RankForm.h"

#include <cstdlib>
#include <numeric>

namespace cclc::inst {

namespace {

/// Steps and moduli stay far below this; past it a form gives up rather
/// than overflow.
constexpr int64_t Limit = int64_t(1) << 31;

int64_t floorMod(int64_t X, int64_t M) {
  const int64_t R = X % M;
  return R < 0 ? R + M : R;
}

bool inRange(int64_t X) { return X > -Limit && X < Limit; }

/// The modulus of F's congruence: 0 for exact forms, which hold modulo
/// nothing.
int64_t modulusOf(const RankForm &F) {
  return F.K == RankForm::Kind::Congruent || F.K == RankForm::Kind::Reduced ? F.Modulus : 0;
}

} // namespace

RankForm RankForm::exact(int64_t Step) {
  if (!inRange(Step))
    return unknown();
  return Step == 0 ? fixed() : RankForm{Kind::Exact, Step, 0};
}

RankForm RankForm::congruent(int64_t Step, int64_t Modulus) {
  if (Modulus <= 1 || !inRange(Modulus))
    return unknown();
  return {Kind::Congruent, floorMod(Step, Modulus), Modulus};
}

RankForm RankForm::reduced(int64_t Step, int64_t Modulus) {
  if (Modulus < 1 || !inRange(Modulus))
    return unknown();
  // (v(0) + 0 r) mod M is v(0) at every rank.
  const int64_t S = floorMod(Step, Modulus);
  return S == 0 ? fixed() : RankForm{Kind::Reduced, S, Modulus};
}

RankForm addForms(const RankForm &L, const RankForm &R, int64_t Sign) {
  if (L.isUnknown() || R.isUnknown())
    return RankForm::unknown();
  if (R.isFixed())
    return L.K == RankForm::Kind::Reduced ? RankForm::congruent(L.Step, L.Modulus) : L;
  const int64_t Step = L.Step + Sign * R.Step;
  // Congruences modulo M and M' both hold modulo gcd(M, M'); gcd(M, 0) = M.
  const int64_t Modulus = std::gcd(modulusOf(L), modulusOf(R));
  return Modulus == 0 ? RankForm::exact(Step) : RankForm::congruent(Step, Modulus);
}

RankForm scaleForm(const RankForm &F, int64_t Factor) {
  if (F.isUnknown() || F.isFixed() || Factor == 0)
    return F.isUnknown() ? F : RankForm::fixed();
  if (!inRange(Factor))
    return RankForm::unknown();
  if (F.K == RankForm::Kind::Exact)
    return RankForm::exact(F.Step * Factor);
  return RankForm::congruent(F.Step * Factor, F.Modulus * std::llabs(Factor));
}

RankForm remainderForm(const RankForm &F, int64_t Divisor) {
  if (F.isUnknown() || Divisor <= 0)
    return RankForm::unknown();
  if (F.isFixed())
    return F;
  // v(r) = v(0) + a r + k M, and Divisor divides M: the remainder is fixed
  // by v(0) + a r alone.
  if (F.K != RankForm::Kind::Exact && F.Modulus % Divisor != 0)
    return RankForm::unknown();
  return RankForm::reduced(F.Step, Divisor);
}

RankForm negateForm(const RankForm &F) {
  switch (F.K) {
  case RankForm::Kind::Fixed:
  case RankForm::Kind::Unknown: return F;
  case RankForm::Kind::Exact: return RankForm::exact(-F.Step);
  case RankForm::Kind::Congruent:
  case RankForm::Kind::Reduced: return RankForm::congruent(-F.Step, F.Modulus);
  }
  return RankForm::unknown();
}

} // namespace cclc::inst
