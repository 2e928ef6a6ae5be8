//===- PlacementTest.cpp - remap auto's permutation search ----------------===//

#include "compiler/instantiate/Placement.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <set>

using namespace cclc;
using namespace cclc::sched;
using namespace cclc::inst;

namespace {

/// The butterfly's pairs: l and l ^ (1 << s) for every round s.
std::vector<CommPair> butterflyPairs(int32_t N) {
  std::vector<CommPair> Pairs;
  for (int32_t L = 0; L < N; ++L)
    for (int32_t Bit = 1; Bit < N; Bit <<= 1)
      if (L < (L ^ Bit))
        Pairs.push_back({L, L ^ Bit, {}});
  return Pairs;
}

std::vector<CommPair> allPairs(int32_t N) {
  std::vector<CommPair> Pairs;
  for (int32_t A = 0; A < N; ++A)
    for (int32_t B = A + 1; B < N; ++B)
      Pairs.push_back({A, B, {}});
  return Pairs;
}

/// A full mesh with the link between physical ranks X and Y missing.
LinkPredicate meshWithout(int32_t X, int32_t Y) {
  return [=](int32_t P, int32_t Q) { return !((P == X && Q == Y) || (P == Y && Q == X)); };
}

void expectPermutation(const std::vector<int32_t> &Placement, int32_t N) {
  ASSERT_EQ(static_cast<int32_t>(Placement.size()), N);
  std::vector<int32_t> Sorted = Placement;
  std::sort(Sorted.begin(), Sorted.end());
  for (int32_t I = 0; I < N; ++I)
    EXPECT_EQ(Sorted[I], I);
}

int32_t badPairs(const std::vector<int32_t> &Placement, const std::vector<CommPair> &Pairs,
                 const LinkPredicate &Good) {
  int32_t Bad = 0;
  for (const CommPair &P : Pairs)
    Bad += !Good(Placement[P.A], Placement[P.B]);
  return Bad;
}

TEST(Placement, ButterflyAvoidsTheBrokenLink) {
  LinkPredicate Good = meshWithout(0, 1);
  std::vector<CommPair> Pairs = butterflyPairs(8);
  std::optional<std::vector<int32_t>> P = findPlacement(8, Pairs, Good);
  ASSERT_TRUE(P);
  expectPermutation(*P, 8);
  EXPECT_EQ(badPairs(*P, Pairs, Good), 0);
  // Deterministic: the same problem gives the same answer.
  EXPECT_EQ(findPlacement(8, Pairs, Good), P);
}

TEST(Placement, IntactMeshKeepsTheIdentity) {
  std::optional<std::vector<int32_t>> P =
      findPlacement(8, butterflyPairs(8), [](int32_t, int32_t) { return true; });
  ASSERT_TRUE(P);
  std::vector<int32_t> Identity(8);
  std::iota(Identity.begin(), Identity.end(), 0);
  EXPECT_EQ(*P, Identity);
}

TEST(Placement, AllPairsCannotAvoidAMissingLink) {
  LinkPredicate Good = meshWithout(2, 5);
  std::vector<CommPair> Pairs = allPairs(8);
  EXPECT_FALSE(findPlacement(8, Pairs, Good));
  // The closest placement leaves exactly the one unavoidable pair.
  std::vector<int32_t> Closest = improvePlacement(8, Pairs, Good);
  expectPermutation(Closest, 8);
  EXPECT_EQ(badPairs(Closest, Pairs, Good), 1);
}

TEST(Placement, RingFollowsAScrambledPhysicalRing) {
  // Only consecutive GPUs of the physical ring 0 5 10 3 8 1 6 11 4 9 2 7 are
  // joined; a logical ring must be laid along it.
  const int32_t N = 12;
  std::vector<int32_t> Physical(N);
  for (int32_t I = 0; I < N; ++I)
    Physical[I] = (I * 5) % N;
  std::set<std::pair<int32_t, int32_t>> Linked;
  for (int32_t I = 0; I < N; ++I) {
    int32_t A = Physical[I], B = Physical[(I + 1) % N];
    Linked.insert({std::min(A, B), std::max(A, B)});
  }
  LinkPredicate Good = [&](int32_t P, int32_t Q) {
    return Linked.count({std::min(P, Q), std::max(P, Q)}) != 0;
  };
  std::vector<CommPair> Ring;
  for (int32_t L = 0; L < N; ++L)
    Ring.push_back({std::min(L, (L + 1) % N), std::max(L, (L + 1) % N), {}});
  std::optional<std::vector<int32_t>> P = findPlacement(N, Ring, Good);
  ASSERT_TRUE(P);
  expectPermutation(*P, N);
  EXPECT_EQ(badPairs(*P, Ring, Good), 0);
  // A butterfly needs three partners per rank: impossible on a ring.
  EXPECT_FALSE(findPlacement(8, butterflyPairs(8), Good));
}

TEST(Placement, HeuristicAboveTheExhaustiveLimit) {
  const int32_t N = 32;
  ASSERT_GT(N, ExhaustiveLimit);
  // Two broken links; the butterfly still fits around them.
  LinkPredicate Good = [](int32_t P, int32_t Q) {
    auto Broken = [&](int32_t X, int32_t Y) { return (P == X && Q == Y) || (P == Y && Q == X); };
    return !Broken(0, 1) && !Broken(6, 7);
  };
  std::vector<CommPair> Pairs = butterflyPairs(N);
  std::optional<std::vector<int32_t>> P = findPlacement(N, Pairs, Good);
  ASSERT_TRUE(P);
  expectPermutation(*P, N);
  EXPECT_EQ(badPairs(*P, Pairs, Good), 0);
  EXPECT_EQ(findPlacement(N, Pairs, Good), P);
}

TEST(Placement, PairsOfAScheduleAreUnorderedAndUnique) {
  Schedule S;
  S.NRanks = 3;
  S.Ranks.resize(3);
  for (RankProgram &R : S.Ranks)
    R.Channels.resize(1);
  auto Add = [&](int32_t Rank, OpKind Op, int32_t Peer, int32_t SendPeer) {
    Step St;
    St.Op = Op;
    St.Peer = Peer;
    St.SendPeer = SendPeer;
    S.Ranks[Rank].Channels[0].Steps.push_back(St);
  };
  Add(0, OpKind::Send, 2, -1);
  Add(2, OpKind::RecvCopySend, 0, 1);
  Add(1, OpKind::Recv, 2, -1);
  Add(0, OpKind::Copy, -1, -1);
  std::vector<CommPair> Pairs = communicatingPairs(S);
  ASSERT_EQ(Pairs.size(), 2u);
  EXPECT_EQ(Pairs[0].A, 0);
  EXPECT_EQ(Pairs[0].B, 2);
  EXPECT_EQ(Pairs[1].A, 1);
  EXPECT_EQ(Pairs[1].B, 2);
}

} // namespace
