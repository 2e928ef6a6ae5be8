//===- RankForm.h - How a value depends on the rank -------------*- C++ -*-===//
//
// Instantiation can run rank 0 alone and stand every other rank's program in
// as rank 0's rotated (sched::Rotation), but only when it knows that every
// rank r would compute what rank 0 computes moved r places on. A RankForm
// says how one value of rank 0's run varies with r, exactly:
//
//   fixed        the same at every rank
//   exact a      v(r) = v(0) + a r
//   congruent a M  v(r) = v(0) + a r  (mod M): known only up to multiples of M
//   reduced a M  v(r) = (v(0) + a r) mod M, in 0..M-1
//
// `rank` and `ring.pos` are exact 1 on a flat target, `ring.next` and
// `ring.prev` reduced 1 nranks, and the arithmetic below carries forms
// through + - * and %, so that `(ring.pos - s) % n` is reduced 1 n. Whatever
// else depends on the rank (a comparison, a division, a bit operation) is
// unknown, and instantiation then runs every rank as written.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>

namespace cclc::inst {

struct RankForm {
  enum class Kind : uint8_t { Fixed, Exact, Congruent, Reduced, Unknown };
  Kind K = Kind::Fixed;
  int64_t Step = 0;    ///< a: what one rank further on adds.
  int64_t Modulus = 0; ///< M, for congruent and reduced forms.

  static RankForm fixed() { return {}; }
  static RankForm unknown() { return {Kind::Unknown, 0, 0}; }
  static RankForm exact(int64_t Step);
  static RankForm congruent(int64_t Step, int64_t Modulus);
  static RankForm reduced(int64_t Step, int64_t Modulus);

  bool isFixed() const { return K == Kind::Fixed; }
  bool isUnknown() const { return K == Kind::Unknown; }
  bool operator==(const RankForm &) const = default;
};

/// L + Sign * R, Sign being 1 or -1.
RankForm addForms(const RankForm &L, const RankForm &R, int64_t Sign);
/// F times the rank-independent Factor.
RankForm scaleForm(const RankForm &F, int64_t Factor);
/// F % Divisor, Divisor rank-independent (the language's % rounds toward
/// negative infinity, so the result lies in 0..Divisor-1).
RankForm remainderForm(const RankForm &F, int64_t Divisor);
/// -F.
RankForm negateForm(const RankForm &F);

} // namespace cclc::inst
