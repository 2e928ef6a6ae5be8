//===- Placement.cpp - Logical ranks onto physical ranks ------------------===//

#include "compiler/instantiate/Placement.h"
#include "plan/Assert.h"

#include <algorithm>
#include <bit>
#include <map>
#include <numeric>
#include <string>
#include <utility>

namespace cclc::inst {

using namespace sched;

using cost::LinkTable;
using cost::RankLink;

std::vector<CommPair> communicatingPairs(const Schedule &S) {
  std::map<std::pair<int32_t, int32_t>, SourceLoc> Seen;
  auto Add = [&](int32_t P, int32_t Q, SourceLoc Loc) {
    if (P != Q)
      Seen.try_emplace({std::min(P, Q), std::max(P, Q)}, Loc);
  };
  for (size_t R = 0; R < S.Ranks.size(); ++R)
    for (const ChannelProgram &C : S.Ranks[R].Channels)
      for (const Step &St : C.Steps) {
        int32_t Self = static_cast<int32_t>(R);
        if (opSends(St.Op))
          Add(Self, St.sendTarget(), St.Loc);
        if (opReceives(St.Op))
          Add(St.Peer, Self, St.Loc);
      }
  std::vector<CommPair> Pairs;
  for (const auto &[Key, Loc] : Seen)
    Pairs.push_back({Key.first, Key.second, Loc});
  return Pairs;
}

namespace {

/// The search's view of a problem: who talks to whom, which physical pairs
/// are good (both directions), and the order logical ranks are placed in.
class PlacementSearch {
public:
  PlacementSearch(int32_t NRanks, const std::vector<CommPair> &Pairs, const LinkPredicate &Good)
      : N(NRanks), Adj(NRanks), GoodPair(static_cast<size_t>(NRanks) * NRanks) {
    for (const CommPair &P : Pairs) {
      CCLC_ASSERT(P.A >= 0 && P.B < N && P.A < P.B, "communicating pair out of range");
      Adj[P.A].push_back(P.B);
      Adj[P.B].push_back(P.A);
    }
    for (int32_t P = 0; P < N; ++P)
      for (int32_t Q = 0; Q < N; ++Q)
        GoodPair[P * N + Q] = P == Q || (Good(P, Q) && Good(Q, P));
    computeOrder();
  }

  std::optional<std::vector<int32_t>> exhaustive();
  std::vector<int32_t> greedyWithSwaps() const;
  int32_t badPairs(const std::vector<int32_t> &Place) const;

private:
  bool good(int32_t P, int32_t Q) const { return GoodPair[P * N + Q]; }
  void computeOrder();
  /// Free physical ranks that are good for every placed neighbour of L.
  uint32_t domain(int32_t L, uint32_t Free) const;
  bool search(int32_t Depth, uint32_t Free);
  /// Neighbours of L (other than Skip) on bad links if L sat on P.
  int32_t badAround(const std::vector<int32_t> &Place, int32_t L, int32_t P, int32_t Skip) const;

  int32_t N;
  std::vector<std::vector<int32_t>> Adj;
  std::vector<bool> GoodPair;
  /// Logical ranks in placement order: the most connected first, then always
  /// the rank with the most neighbours already placed.
  std::vector<int32_t> Order;
  // Exhaustive search state.
  std::vector<int32_t> Place;
  std::vector<uint32_t> GoodMask;
  uint64_t Nodes = 0;
  bool OutOfBudget = false;
};

/// Search nodes the exhaustive search may visit before it gives up and lets
/// the heuristic answer: a count, not a clock, so results are reproducible.
constexpr uint64_t NodeBudget = 2'000'000;

void PlacementSearch::computeOrder() {
  std::vector<int32_t> PlacedNeighbours(N, 0);
  std::vector<bool> Ordered(N, false);
  for (int32_t I = 0; I < N; ++I) {
    int32_t Next = -1;
    for (int32_t L = 0; L < N; ++L) {
      if (Ordered[L])
        continue;
      auto Key = [&](int32_t X) { return std::pair(PlacedNeighbours[X], Adj[X].size()); };
      if (Next < 0 || Key(L) > Key(Next))
        Next = L;
    }
    Ordered[Next] = true;
    Order.push_back(Next);
    for (int32_t M : Adj[Next])
      ++PlacedNeighbours[M];
  }
}

uint32_t PlacementSearch::domain(int32_t L, uint32_t Free) const {
  uint32_t Dom = Free;
  for (int32_t M : Adj[L])
    if (Place[M] >= 0)
      Dom &= GoodMask[Place[M]];
  return Dom;
}

bool PlacementSearch::search(int32_t Depth, uint32_t Free) {
  if (Depth == N)
    return true;
  if (++Nodes > NodeBudget) {
    OutOfBudget = true;
    return false;
  }
  int32_t L = Order[Depth];
  for (uint32_t Dom = domain(L, Free); Dom && !OutOfBudget; Dom &= Dom - 1) {
    int32_t P = std::countr_zero(Dom);
    Place[L] = P;
    uint32_t Rest = Free & ~(1u << P);
    // Forward check: every rank still to place keeps a candidate, and
    // together they have enough candidates.
    bool Viable = true;
    uint32_t Union = 0;
    for (int32_t D = Depth + 1; D < N && Viable; ++D) {
      uint32_t Other = domain(Order[D], Rest);
      Viable = Other != 0;
      Union |= Other;
    }
    if (Viable && std::popcount(Union) >= N - Depth - 1 && search(Depth + 1, Rest))
      return true;
    Place[L] = -1;
  }
  return false;
}

std::optional<std::vector<int32_t>> PlacementSearch::exhaustive() {
  CCLC_ASSERT(N <= 32, "exhaustive placement works on 32-bit masks");
  GoodMask.assign(N, 0);
  for (int32_t P = 0; P < N; ++P)
    for (int32_t Q = 0; Q < N; ++Q)
      if (P != Q && good(P, Q))
        GoodMask[P] |= 1u << Q;
  Place.assign(N, -1);
  uint32_t All = N == 32 ? ~0u : (1u << N) - 1;
  if (search(0, All))
    return Place;
  if (OutOfBudget) {
    std::vector<int32_t> Guess = greedyWithSwaps();
    if (badPairs(Guess) == 0)
      return Guess;
  }
  return std::nullopt;
}

int32_t PlacementSearch::badAround(const std::vector<int32_t> &Where, int32_t L, int32_t P,
                                   int32_t Skip) const {
  int32_t Bad = 0;
  for (int32_t M : Adj[L])
    if (M != Skip && Where[M] >= 0 && !good(P, Where[M]))
      ++Bad;
  return Bad;
}

int32_t PlacementSearch::badPairs(const std::vector<int32_t> &Where) const {
  int32_t Bad = 0;
  for (int32_t L = 0; L < N; ++L)
    Bad += badAround(Where, L, Where[L], -1);
  return Bad / 2;
}

std::vector<int32_t> PlacementSearch::greedyWithSwaps() const {
  std::vector<int32_t> Where(N, -1);
  std::vector<bool> Used(N, false);
  for (int32_t L : Order) {
    int32_t BestP = -1, BestBad = 0;
    for (int32_t P = 0; P < N; ++P) {
      if (Used[P])
        continue;
      int32_t Bad = badAround(Where, L, P, -1);
      if (BestP < 0 || Bad < BestBad) {
        BestP = P;
        BestBad = Bad;
      }
    }
    Where[L] = BestP;
    Used[BestP] = true;
  }
  // Every accepted swap removes at least one bad pair, so this ends.
  for (bool Improved = true; Improved;) {
    Improved = false;
    for (int32_t I = 0; I < N; ++I)
      for (int32_t J = I + 1; J < N; ++J) {
        int32_t Before = badAround(Where, I, Where[I], J) + badAround(Where, J, Where[J], I);
        int32_t After = badAround(Where, I, Where[J], J) + badAround(Where, J, Where[I], I);
        if (After < Before) {
          std::swap(Where[I], Where[J]);
          Improved = true;
        }
      }
  }
  return Where;
}

} // namespace

std::optional<std::vector<int32_t>> findPlacement(int32_t NRanks, const std::vector<CommPair> &Pairs,
                                                  const LinkPredicate &Good) {
  PlacementSearch Search(NRanks, Pairs, Good);
  if (NRanks <= ExhaustiveLimit)
    return Search.exhaustive();
  std::vector<int32_t> Guess = Search.greedyWithSwaps();
  if (Search.badPairs(Guess) == 0)
    return Guess;
  return std::nullopt;
}

std::vector<int32_t> improvePlacement(int32_t NRanks, const std::vector<CommPair> &Pairs,
                                      const LinkPredicate &Good) {
  return PlacementSearch(NRanks, Pairs, Good).greedyWithSwaps();
}

/// Diagnostics list at most this many pairs of each kind.
constexpr size_t MaxListed = 8;

/// "GPU0-GPU1".
static std::string pairName(const LinkTable &Links, int32_t P, int32_t Q) {
  return Links.rankName(P) + "-" + Links.rankName(Q);
}

/// "has no NVLink (path NVB)": what a pair of physical ranks lacks.
static std::string lacking(const LinkTable &Links, int32_t P, int32_t Q) {
  return "has no " + cost::linkClassName(Links.best().Type) + " (path " +
         std::string(topo::pathTypeName(Links.link(P, Q).Type)) + ")";
}

/// The error for `remap auto` when no placement exists: the logical pairs
/// the closest placement leaves on slower links, and the physical pairs that
/// lack a best-class link.
static void diagnoseNoPlacement(const dsl::RemapStmt &Remap, const Target &T,
                                const LinkTable &Links, const std::vector<CommPair> &Pairs,
                                const LinkPredicate &Good, DiagnosticEngine &Diags) {
  std::string Class = cost::linkClassName(Links.best().Type);
  Diags.error(Remap.Range, "remap auto found no placement of " + std::to_string(T.NRanks) +
                               " ranks that puts every communicating pair on an " + Class);
  std::vector<int32_t> Closest = improvePlacement(T.NRanks, Pairs, Good);
  size_t Listed = 0;
  for (const CommPair &P : Pairs) {
    int32_t PA = Closest[P.A], PB = Closest[P.B];
    if (Good(PA, PB) && Good(PB, PA))
      continue;
    if (Listed++ == MaxListed)
      break;
    Diags.note(P.Loc, "logical ranks " + std::to_string(P.A) + " and " + std::to_string(P.B) +
                          " communicate here; the closest placement puts them on " +
                          pairName(Links, PA, PB) + ", which " + lacking(Links, PA, PB));
  }
  std::vector<std::pair<int32_t, int32_t>> Missing;
  for (int32_t P = 0; P < T.LocalRanks; ++P)
    for (int32_t Q = P + 1; Q < T.LocalRanks; ++Q)
      if (!Good(P, Q) || !Good(Q, P))
        Missing.emplace_back(P, Q);
  for (size_t I = 0; I < Missing.size() && I < MaxListed; ++I)
    Diags.note(Remap.Range, pairName(Links, Missing[I].first, Missing[I].second) + " " +
                                lacking(Links, Missing[I].first, Missing[I].second));
  if (Missing.size() > MaxListed)
    Diags.note(Remap.Range, "and " + std::to_string(Missing.size() - MaxListed) +
                                " more pairs of GPUs without an " + Class);
}

std::optional<std::vector<int32_t>> placeAuto(const dsl::Algorithm &Algo, const Target &T,
                                              const InstantiateOptions &Options,
                                              DiagnosticEngine &Diags) {
  CCLC_ASSERT(Algo.Remap && Algo.Remap->TheForm == dsl::RemapStmt::Form::Auto,
              "placeAuto needs a remap auto statement");
  std::vector<int32_t> Identity(T.NRanks);
  std::iota(Identity.begin(), Identity.end(), 0);
  if (!T.Machine) {
    Diags.note(Algo.Remap->Range,
               "remap auto without a topology keeps logical rank l on physical rank l");
    return Identity;
  }
  InstantiateOptions Probe = Options;
  Probe.Placement = Identity;
  std::optional<Schedule> S = instantiate(Algo, T, Probe, Diags);
  if (!S)
    return std::nullopt;
  std::vector<CommPair> Pairs = communicatingPairs(*S);
  LinkTable Links(T);
  const RankLink &Best = Links.best();
  // First the best links exactly; then any link of the best path type (a
  // mesh with some doubled NVLinks still places on single ones).
  LinkPredicate Fastest = [&](int32_t P, int32_t Q) {
    const RankLink &L = Links.link(P, Q);
    return L.CrossNode || (L.Type == Best.Type && L.BwGBs >= Best.BwGBs);
  };
  LinkPredicate SameClass = [&](int32_t P, int32_t Q) {
    const RankLink &L = Links.link(P, Q);
    return L.CrossNode || L.Type == Best.Type;
  };
  for (const LinkPredicate *Good : {&Fastest, &SameClass})
    if (std::optional<std::vector<int32_t>> Placement = findPlacement(T.NRanks, Pairs, *Good))
      return Placement;
  diagnoseNoPlacement(*Algo.Remap, T, Links, Pairs, SameClass, Diags);
  return std::nullopt;
}

void checkRemapLinks(const Schedule &S, const Target &T, const dsl::RemapStmt &Remap,
                     DiagnosticEngine &Diags) {
  if (!T.Machine)
    return;
  LinkTable Links(T);
  std::vector<int32_t> LogicalOf(S.NRanks);
  for (int32_t L = 0; L < S.NRanks; ++L)
    LogicalOf[S.Remap[L]] = L;
  for (const CommPair &P : communicatingPairs(S)) {
    const RankLink &L = Links.link(P.A, P.B);
    if (L.CrossNode || L.Type <= Links.best().Type)
      continue;
    Diags.warning(Remap.Range, "remap puts communicating logical ranks " +
                                   std::to_string(LogicalOf[P.A]) + " and " +
                                   std::to_string(LogicalOf[P.B]) + " on " +
                                   pairName(Links, P.A, P.B) + ", which " +
                                   lacking(Links, P.A, P.B));
    Diags.note(P.Loc, "they communicate here");
  }
}

} // namespace cclc::inst
