//===- IndexFit.h - Closed forms for the integers of a schedule -*- C++ -*-===//
//
// One generated kernel serves every rank, so the peers and chunk indices of a
// step are written as expressions of the rank (and, inside a loop, of the
// step counter) instead of per-rank constants. The schedule IR holds only the
// values; fitIndex recovers an expression that reproduces them on the points
// where they are known (the ranks of one rank class times the steps of one
// run of calls):
//
//   constant    c
//   affine      (a*x + b*s + c) % m          (m: the rank or chunk count)
//   bits        (x & mask) ^ (d << s)        (also d >> s, or d)
//   scaled bits k * ((x & mask) ^ d) + b*s + c
//
// where x is the rank in one of several numberings: the physical rank, the
// algorithm's logical rank when it remaps ranks, a ring's position when the
// ranks pass data around a ring in another order. A value may also be found
// as Back[f(x)], the physical rank (or rank-indexed chunk) whose number is
// f(x): a remapped butterfly's peer is Remap[L ^ (1 << s)]. Scaled bits are
// the chunk indices of power-of-two algorithms whose chunks the chunking
// pass split: a sub-chunk of chunk (x & mask) ^ d.
//
// Every candidate that fits is checked on every point, and the one whose
// text has the fewest operators wins. Fields with no closed form become
// tables; that is the emitter's business.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace cclc::codegen {

/// The variable expressions use for the step of a run.
inline constexpr const char *StepVariable = "S";

/// A way of numbering the ranks. Numbering 0 is the physical rank itself;
/// the others are permutations of it.
struct Numbering {
  std::string Var;           ///< Holds the calling rank's number: "Rank", "L", "Pos".
  std::string OfTable;       ///< The table Of is printed as; empty for numbering 0.
  std::string BackTable;     ///< The table Back is printed as; empty for numbering 0.
  std::vector<int32_t> Of;   ///< Of[physical rank] = its number.
  std::vector<int32_t> Back; ///< Back[number] = the physical rank; empty for numbering 0.
  /// What a rank's number is, for the tables' comments.
  std::string Meaning;
};

/// The points a field is known at: the ranks of one class times Steps
/// consecutive steps. A field's values are laid out rank-major:
/// Values[RankIndex * Steps + Step].
struct FitDomain {
  std::vector<int32_t> Ranks; ///< Physical.
  int32_t Steps = 1;
};

struct IndexExpr {
  enum class Form : uint8_t { Constant, Affine, Bits };
  Form Kind = Form::Constant;
  /// The numbering x is taken in.
  uint8_t Var = 0;
  /// The value is Back[the form's value] of numbering Var.
  bool MapBack = false;
  /// Affine: (A*x + B*s + C) % M. Constant: C.
  int64_t A = 0, B = 0, C = 0, M = 0;
  /// Bits: Scale * ((x & Mask) ^ (Xor << s)) + B*s + C for Shift 1, with
  /// Xor >> s for -1 and Xor for 0.
  uint32_t Mask = 0, Xor = 0;
  int8_t Shift = 0;
  int64_t Scale = 1;
};

/// The simplest closed form of Values over D in any of the numberings, with
/// affine forms wrapping at one of Moduli; nullopt when none fits.
std::optional<IndexExpr> fitIndex(const FitDomain &D, const std::vector<int32_t> &Values,
                                  const std::vector<Numbering> &Nums,
                                  const std::vector<int32_t> &Moduli);

/// E's value at rank index R and step S of its domain.
int64_t evaluateIndex(const IndexExpr &E, const FitDomain &D, size_t R, int32_t S,
                      const std::vector<Numbering> &Nums);

/// E's value when it is the same on every point of D (at Step, when set).
std::optional<int64_t> constantIndex(const IndexExpr &E, const FitDomain &D,
                                     std::optional<int32_t> Step,
                                     const std::vector<Numbering> &Nums);

/// E as a C++ expression over the domain D: with Step set, for that step of
/// the run (an unrolled call, the step folded in); without, for any step,
/// reading StepVariable. Parts that are constant over D are folded and a
/// modulo that never wraps on D is left out. With Operand, the text may be
/// an operand of + as it stands (parenthesized where it needs to be).
std::string printIndex(const IndexExpr &E, const FitDomain &D, std::optional<int32_t> Step,
                       const std::vector<Numbering> &Nums, bool Operand);

} // namespace cclc::codegen
