//===- IndexFit.cpp - Closed forms for the integers of a schedule ---------===//

#include "compiler/codegen/IndexFit.h"
#include "plan/Assert.h"

#include <algorithm>
#include <numeric>
#include <tuple>

namespace cclc::codegen {

namespace {

int64_t floorMod(int64_t V, int64_t M) { return (V % M + M) % M; }

/// The inverse of A modulo M (A and M coprime, M > 1).
int64_t inverseMod(int64_t A, int64_t M) {
  int64_t R0 = M, R1 = A, T0 = 0, T1 = 1;
  while (R1) {
    int64_t Q = R0 / R1;
    std::tie(R0, R1) = std::pair(R1, R0 - Q * R1);
    std::tie(T0, T1) = std::pair(T1, T0 - Q * T1);
  }
  return floorMod(T0, M);
}

/// The numbers the class's ranks have in numbering Var.
std::vector<int32_t> rankValues(const FitDomain &D, const std::vector<Numbering> &Nums,
                                uint8_t Var) {
  std::vector<int32_t> X;
  for (int32_t R : D.Ranks)
    X.push_back(Nums[Var].Of[R]);
  return X;
}

/// Whether E gives Values on every point; E does not map back, so the
/// numberings' tables are not needed.
bool fitsEverywhere(const IndexExpr &E, const FitDomain &D, const std::vector<int32_t> &Values,
                    const std::vector<Numbering> &Nums) {
  for (size_t R = 0; R < D.Ranks.size(); ++R)
    for (int32_t S = 0; S < D.Steps; ++S)
      if (evaluateIndex(E, D, R, S, Nums) != Values[R * D.Steps + S])
        return false;
  return true;
}

/// (A*x + B*s + C) % M through the points. A follows from two ranks with
/// different x by solving a linear congruence (several solutions when the x
/// difference shares factors with M), B from two consecutive steps, C from
/// the first point; each candidate is then checked everywhere.
std::optional<IndexExpr> fitAffine(const FitDomain &D, const std::vector<Numbering> &Nums,
                                   uint8_t Var, const std::vector<int32_t> &Values, int64_t M) {
  if (M <= 0 ||
      std::any_of(Values.begin(), Values.end(), [M](int32_t V) { return V < 0 || V >= M; }))
    return std::nullopt;
  std::vector<int32_t> X = rankValues(D, Nums, Var);
  auto Value = [&](size_t R, int32_t S) { return int64_t(Values[R * D.Steps + S]); };
  std::vector<int64_t> As = {0};
  auto Other = std::find_if(X.begin(), X.end(), [&](int32_t V) { return V != X[0]; });
  if (Other != X.end()) {
    size_t R1 = Other - X.begin();
    int64_t Dx = floorMod(X[R1] - X[0], M), Dv = floorMod(Value(R1, 0) - Value(0, 0), M);
    int64_t G = std::gcd(Dx, M);
    if (Dv % G)
      return std::nullopt;
    int64_t Period = M / G;
    int64_t A0 = Period == 1 ? 0 : Dv / G * inverseMod(Dx / G % Period, Period) % Period;
    As.clear();
    for (int64_t K = 0; K < G; ++K)
      As.push_back(A0 + K * Period);
  }
  IndexExpr E;
  E.Kind = IndexExpr::Form::Affine;
  E.Var = Var;
  E.M = M;
  E.B = D.Steps > 1 ? floorMod(Value(0, 1) - Value(0, 0), M) : 0;
  for (int64_t A : As) {
    E.A = A;
    E.C = floorMod(Value(0, 0) - A * X[0], M);
    if (fitsEverywhere(E, D, Values, Nums))
      return E;
  }
  return std::nullopt;
}

/// (x & Mask) ^ d(s) through the points: the bits that differ between ranks
/// at one step must follow x's bits, and d(s) must be a constant shifted by s.
std::optional<IndexExpr> fitPlainBits(const FitDomain &D, const std::vector<Numbering> &Nums,
                                      uint8_t Var, const std::vector<int32_t> &Values) {
  if (std::any_of(Values.begin(), Values.end(), [](int32_t V) { return V < 0; }))
    return std::nullopt;
  std::vector<int32_t> X = rankValues(D, Nums, Var);
  auto Value = [&](size_t R, int32_t S) { return uint32_t(Values[R * D.Steps + S]); };
  IndexExpr E;
  E.Kind = IndexExpr::Form::Bits;
  E.Var = Var;
  for (size_t R = 0; R < X.size(); ++R)
    for (int32_t S = 0; S < D.Steps; ++S)
      E.Mask |= Value(R, S) ^ Value(0, S);
  auto Offset = [&](int32_t S) { return Value(0, S) ^ (uint32_t(X[0]) & E.Mask); };
  E.Xor = Offset(0);
  bool Constant = true, Left = true, Right = true;
  for (int32_t S = 1; S < D.Steps; ++S) {
    Constant &= Offset(S) == E.Xor;
    Left &= S < 32 && Offset(S) == E.Xor << S;
    Right &= S < 32 && Offset(S) == E.Xor >> S;
  }
  if (!Constant && !Left && !Right)
    return std::nullopt;
  E.Shift = Constant ? 0 : Left ? 1 : -1;
  if (!fitsEverywhere(E, D, Values, Nums))
    return std::nullopt;
  return E;
}

/// Plain bits, or else scaled ones: v(x, s) = w(x) + B*s with w(x) =
/// Scale * ((x & Mask) ^ Xor) + C. Scale divides every difference of w; the
/// sub-chunks of a split chunk are a power of two apart, so the candidates
/// are that gcd halved until the bits line up with x's.
std::optional<IndexExpr> fitBits(const FitDomain &D, const std::vector<Numbering> &Nums,
                                 uint8_t Var, const std::vector<int32_t> &Values) {
  if (std::optional<IndexExpr> E = fitPlainBits(D, Nums, Var, Values))
    return E;
  auto Value = [&](size_t R, int32_t S) { return int64_t(Values[R * D.Steps + S]); };
  int64_t B = D.Steps > 1 ? Value(0, 1) - Value(0, 0) : 0;
  std::vector<int64_t> W;
  int64_t G = 0;
  for (size_t R = 0; R < D.Ranks.size(); ++R) {
    W.push_back(Value(R, 0));
    G = std::gcd(G, W.back() - W[0]);
    for (int32_t S = 0; S < D.Steps; ++S)
      if (Value(R, S) != W.back() + B * S)
        return std::nullopt;
  }
  if (G == 0 || std::any_of(W.begin(), W.end(), [](int64_t V) { return V < 0; }))
    return std::nullopt;
  FitDomain Ranks{D.Ranks, 1};
  for (int64_t Scale = G;; Scale /= 2) {
    int64_t C = W[0] % Scale;
    std::vector<int32_t> Units;
    for (int64_t V : W)
      Units.push_back(int32_t((V - C) / Scale));
    if (std::optional<IndexExpr> E = fitPlainBits(Ranks, Nums, Var, Units)) {
      E->Scale = Scale;
      E->B = B;
      E->C = C;
      return E;
    }
    if (Scale % 2)
      return std::nullopt;
  }
}

/// Operators in E's text: what "simplest" means when several forms fit.
size_t complexity(const IndexExpr &E, const FitDomain &D, const std::vector<Numbering> &Nums) {
  std::string Text = printIndex(E, D, std::nullopt, Nums, false);
  return std::count_if(Text.begin(), Text.end(), [](char C) {
    return std::string_view("+-*%^&<>[").find(C) != std::string_view::npos;
  });
}

/// The steps an expression is printed for: one, or all of the run.
std::pair<int32_t, int32_t> stepRange(const FitDomain &D, std::optional<int32_t> Step) {
  return Step ? std::pair(*Step, *Step + 1) : std::pair(0, D.Steps);
}

/// Terms added up; negative ones are subtracted.
std::string join(const std::vector<std::string> &Terms) {
  std::string Sum = Terms[0];
  for (size_t I = 1; I < Terms.size(); ++I)
    Sum += Terms[I][0] == '-' ? " - " + Terms[I].substr(1) : " + " + Terms[I];
  return Sum;
}

/// C*Name, written the short way.
std::string term(int64_t Coef, const std::string &Name) {
  return Coef == 1 ? Name : Coef == -1 ? "-" + Name : std::to_string(Coef) + " * " + Name;
}

std::string printAffine(const IndexExpr &E, const FitDomain &D, std::optional<int32_t> Step,
                        const std::vector<Numbering> &Nums) {
  int64_t B = Step ? 0 : E.B;
  int64_t C = Step ? E.B * *Step + E.C : E.C;
  if (E.M && Step)
    C %= E.M;
  int32_t End = stepRange(D, Step).second;
  int64_t Largest = 0;
  for (int32_t X : rankValues(D, Nums, E.Var))
    Largest = std::max(Largest, E.A * X + B * (End - 1) + C);
  std::vector<std::string> Terms;
  if (E.A)
    Terms.push_back(term(E.A, Nums[E.Var].Var));
  if (B)
    Terms.push_back(term(B, StepVariable));
  if (C || Terms.empty())
    Terms.push_back(std::to_string(C));
  std::string Sum = join(Terms);
  if (!E.M || Largest < E.M)
    return Sum;
  return (Terms.size() > 1 ? "(" + Sum + ")" : Sum) + " % " + std::to_string(E.M);
}

std::string printBits(const IndexExpr &E, const FitDomain &D, std::optional<int32_t> Step,
                      const std::vector<Numbering> &Nums) {
  std::vector<int32_t> X = rankValues(D, Nums, E.Var);
  const std::string &Name = Nums[E.Var].Var;
  uint32_t Xor = E.Xor;
  int8_t Shift = E.Shift;
  int64_t B = E.B, C = E.C;
  if (Step) {
    Xor = Shift > 0 ? Xor << *Step : Shift < 0 ? Xor >> *Step : Xor;
    Shift = 0;
    C += B * *Step;
    B = 0;
  }
  std::string XorPart;
  if (Xor)
    XorPart = Shift == 0
                  ? std::to_string(Xor)
                  : "(" + std::to_string(Xor) + (Shift > 0 ? " << " : " >> ") + StepVariable + ")";
  bool WholeRank = std::all_of(X.begin(), X.end(),
                               [&](int32_t V) { return (uint32_t(V) & E.Mask) == uint32_t(V); });
  std::string RankPart;
  if (WholeRank)
    RankPart = Name;
  else if (E.Mask)
    RankPart = Name + " & " + std::to_string(E.Mask);
  std::string Core;
  if (RankPart.empty())
    Core = XorPart.empty() ? "0" : XorPart;
  else if (XorPart.empty())
    Core = RankPart;
  else
    Core = (WholeRank ? RankPart : "(" + RankPart + ")") + " ^ " + XorPart;
  if (E.Scale == 1 && !B && !C)
    return Core;
  // ^ and & bind more loosely than * and +.
  if (Core.find_first_of("^&") != std::string::npos)
    Core = "(" + Core + ")";
  std::vector<std::string> Terms = {E.Scale == 1 ? Core : std::to_string(E.Scale) + " * " + Core};
  if (B)
    Terms.push_back(term(B, StepVariable));
  if (C)
    Terms.push_back(std::to_string(C));
  return join(Terms);
}

} // namespace

int64_t evaluateIndex(const IndexExpr &E, const FitDomain &D, size_t R, int32_t S,
                      const std::vector<Numbering> &Nums) {
  int64_t X = Nums[E.Var].Of[D.Ranks[R]];
  int64_t V = 0;
  switch (E.Kind) {
  case IndexExpr::Form::Constant: V = E.C; break;
  case IndexExpr::Form::Affine:
    V = E.A * X + E.B * S + E.C;
    if (E.M)
      V %= E.M;
    break;
  case IndexExpr::Form::Bits: {
    uint32_t Offset = E.Shift > 0 ? E.Xor << S : E.Shift < 0 ? E.Xor >> S : E.Xor;
    V = E.Scale * int64_t((uint32_t(X) & E.Mask) ^ Offset) + E.B * S + E.C;
    break;
  }
  }
  if (E.MapBack) {
    const std::vector<int32_t> &Back = Nums[E.Var].Back;
    CCLC_ASSERT(V >= 0 && V < int64_t(Back.size()), "a number maps back to no rank");
    V = Back[V];
  }
  return V;
}

std::optional<IndexExpr> fitIndex(const FitDomain &D, const std::vector<int32_t> &Values,
                                  const std::vector<Numbering> &Nums,
                                  const std::vector<int32_t> &Moduli) {
  CCLC_ASSERT(Values.size() == D.Ranks.size() * size_t(D.Steps) && !Values.empty(),
              "values do not cover the domain");
  if (std::all_of(Values.begin(), Values.end(), [&](int32_t V) { return V == Values[0]; })) {
    IndexExpr E;
    E.C = Values[0];
    return E;
  }
  std::vector<IndexExpr> Fits;
  // Candidates are fit to the values before mapping back, a bijection, so
  // they fit the values themselves too.
  auto TryForms = [&](uint8_t Var, bool MapBack, const std::vector<int32_t> &Vals) {
    std::vector<std::optional<IndexExpr>> Found;
    for (int32_t M : Moduli)
      Found.push_back(fitAffine(D, Nums, Var, Vals, M));
    Found.push_back(fitBits(D, Nums, Var, Vals));
    for (std::optional<IndexExpr> &E : Found)
      if (E) {
        E->MapBack = MapBack;
        Fits.push_back(*E);
      }
  };
  for (size_t Var = 0; Var < Nums.size(); ++Var) {
    TryForms(uint8_t(Var), false, Values);
    const std::vector<int32_t> &Of = Nums[Var].Of;
    if (Nums[Var].Back.empty() || std::any_of(Values.begin(), Values.end(), [&](int32_t V) {
          return V < 0 || V >= int32_t(Of.size());
        }))
      continue;
    std::vector<int32_t> Numbers;
    for (int32_t V : Values)
      Numbers.push_back(Of[V]);
    TryForms(uint8_t(Var), true, Numbers);
  }
  if (Fits.empty())
    return std::nullopt;
  return *std::min_element(Fits.begin(), Fits.end(), [&](const IndexExpr &A, const IndexExpr &B) {
    return complexity(A, D, Nums) < complexity(B, D, Nums);
  });
}

std::optional<int64_t> constantIndex(const IndexExpr &E, const FitDomain &D,
                                     std::optional<int32_t> Step,
                                     const std::vector<Numbering> &Nums) {
  auto [First, End] = stepRange(D, Step);
  int64_t Value = evaluateIndex(E, D, 0, First, Nums);
  for (size_t R = 0; R < D.Ranks.size(); ++R)
    for (int32_t S = First; S < End; ++S)
      if (evaluateIndex(E, D, R, S, Nums) != Value)
        return std::nullopt;
  return Value;
}

std::string printIndex(const IndexExpr &E, const FitDomain &D, std::optional<int32_t> Step,
                       const std::vector<Numbering> &Nums, bool Operand) {
  if (std::optional<int64_t> Value = constantIndex(E, D, Step, Nums))
    return std::to_string(*Value);
  bool Affine = E.Kind == IndexExpr::Form::Affine;
  std::string Text = Affine ? printAffine(E, D, Step, Nums) : printBits(E, D, Step, Nums);
  if (E.MapBack)
    return Nums[E.Var].BackTable + "[" + Text + "]";
  // ^ and & bind more loosely than +; affine text is a sum or a remainder.
  bool NeedsParens = !Affine && Text.find_first_of("^&") != std::string::npos;
  return Operand && NeedsParens ? "(" + Text + ")" : Text;
}

} // namespace cclc::codegen
