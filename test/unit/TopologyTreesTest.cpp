//===- TopologyTreesTest.cpp - NCCL's binary and double binary trees -------===//

#include "compiler/topology/Trees.h"

#include <algorithm>
#include <gtest/gtest.h>
#include <string>
#include <vector>

using namespace cclc::topo;

namespace {

/// The parent of every rank in one tree over NRanks ranks, and each rank's
/// children, as read back from the per-rank links.
struct WholeTree {
  std::vector<int> Up;
  std::vector<std::vector<int>> Down;
};

WholeTree buildTree(int NRanks, int Which) {
  WholeTree T{std::vector<int>(NRanks), std::vector<std::vector<int>>(NRanks)};
  for (int R = 0; R < NRanks; ++R) {
    TreeLinks L = getDtree(NRanks, R)[Which];
    T.Up[R] = L.Up;
    for (int D : {L.Down0, L.Down1})
      if (D != -1)
        T.Down[R].push_back(D);
  }
  return T;
}

/// Checks that T is one tree spanning all ranks whose parent and child links
/// agree, and returns its root.
int checkTree(const WholeTree &T, int NRanks) {
  int Root = -1;
  for (int R = 0; R < NRanks; ++R) {
    if (T.Up[R] == -1) {
      EXPECT_EQ(Root, -1) << "two roots: " << Root << " and " << R;
      Root = R;
      continue;
    }
    EXPECT_GE(T.Up[R], 0);
    EXPECT_LT(T.Up[R], NRanks);
    const std::vector<int> &Siblings = T.Down[T.Up[R]];
    EXPECT_EQ(std::count(Siblings.begin(), Siblings.end(), R), 1)
        << "rank " << R << " is not a child of its parent " << T.Up[R];
  }
  for (int R = 0; R < NRanks; ++R)
    for (int D : T.Down[R]) {
      EXPECT_GE(D, 0);
      EXPECT_LT(D, NRanks);
      EXPECT_EQ(T.Up[D], R) << "child " << D << " of " << R << " has another parent";
    }
  // Acyclic and spanning: every rank reaches the root within NRanks steps.
  for (int R = 0; R < NRanks; ++R) {
    int Cur = R, Steps = 0;
    while (T.Up[Cur] != -1 && Steps <= NRanks) {
      Cur = T.Up[Cur];
      ++Steps;
    }
    EXPECT_EQ(Cur, Root) << "rank " << R << " does not reach the root";
  }
  return Root;
}

} // namespace

TEST(TopologyTrees, BtreeFourteenRanksMatchesNcclPicture) {
  // 0 -> 8; 8 -> 4, 12; 4 -> 2, 6; 12 -> 10, 13; 2 -> 1, 3; ...
  struct Expected {
    int Rank, Up, Down0, Down1;
  };
  const Expected Table[] = {{0, -1, -1, 8},  {1, 2, -1, -1},  {2, 4, 1, 3},    {3, 2, -1, -1},
                            {4, 8, 2, 6},    {5, 6, -1, -1},  {6, 4, 5, 7},    {7, 6, -1, -1},
                            {8, 0, 4, 12},   {9, 10, -1, -1}, {10, 12, 9, 11}, {11, 10, -1, -1},
                            {12, 8, 10, 13}, {13, 12, -1, -1}};
  for (const Expected &E : Table) {
    TreeLinks L = getBtree(14, E.Rank);
    EXPECT_EQ(L.Up, E.Up) << "rank " << E.Rank;
    EXPECT_EQ(L.Down0, E.Down0) << "rank " << E.Rank;
    EXPECT_EQ(L.Down1, E.Down1) << "rank " << E.Rank;
  }
  EXPECT_EQ(getBtree(14, 13).ChildType, 1);
  EXPECT_EQ(getBtree(14, 10).ChildType, 0);
  EXPECT_EQ(getBtree(14, 8).ChildType, 1);
}

TEST(TopologyTrees, DtreeTwelveRanksIsTheMirror) {
  // The seed's picture: the second tree is rooted at 11 (0 mirrored), whose
  // only child is 3; 3 -> 7, 1; 7 -> 9, 5; 5 -> 6, 4.
  EXPECT_EQ(getDtree(12, 11)[1].Up, -1);
  EXPECT_EQ(getDtree(12, 11)[1].Down1, 3);
  std::array<TreeLinks, 2> R3 = getDtree(12, 3);
  EXPECT_EQ(R3[1].Up, 11);
  EXPECT_EQ(R3[1].Down0, 7);
  EXPECT_EQ(R3[1].Down1, 1);
  std::array<TreeLinks, 2> R7 = getDtree(12, 7);
  EXPECT_EQ(R7[1].Up, 3);
  EXPECT_EQ(R7[1].Down0, 9);
  EXPECT_EQ(R7[1].Down1, 5);
  std::array<TreeLinks, 2> R5 = getDtree(12, 5);
  EXPECT_EQ(R5[1].Up, 7);
  EXPECT_EQ(R5[1].Down0, 6);
  EXPECT_EQ(R5[1].Down1, 4);
  // First tree: 0 -> 8 -> 4, 10 for 12 ranks (10 is the cut right edge).
  EXPECT_EQ(getDtree(12, 8)[0].Down1, 10);
  EXPECT_EQ(getDtree(12, 10)[0].Up, 8);
}

TEST(TopologyTrees, DtreeThirteenRanksIsTheShift) {
  // The seed's picture: the second tree is 1 -> 9; 9 -> 5, 0; 0 -> 11.
  EXPECT_EQ(getDtree(13, 1)[1].Up, -1);
  EXPECT_EQ(getDtree(13, 1)[1].Down1, 9);
  std::array<TreeLinks, 2> R9 = getDtree(13, 9);
  EXPECT_EQ(R9[1].Up, 1);
  EXPECT_EQ(R9[1].Down0, 5);
  EXPECT_EQ(R9[1].Down1, 0);
  std::array<TreeLinks, 2> R0 = getDtree(13, 0);
  EXPECT_EQ(R0[1].Up, 9);
  EXPECT_EQ(R0[1].Down0, 11);
  EXPECT_EQ(R0[1].Down1, -1);
  std::array<TreeLinks, 2> R11 = getDtree(13, 11);
  EXPECT_EQ(R11[1].Down0, 10);
  EXPECT_EQ(R11[1].Down1, 12);
}

TEST(TopologyTrees, SingleRankIsAlone) {
  for (const TreeLinks &L : getDtree(1, 0)) {
    EXPECT_EQ(L.Up, -1);
    EXPECT_EQ(L.Down0, -1);
    EXPECT_EQ(L.Down1, -1);
  }
}

TEST(TopologyTrees, BothTreesAreConsistentUpTo256Ranks) {
  for (int N = 1; N <= 256; ++N) {
    SCOPED_TRACE("nranks " + std::to_string(N));
    WholeTree First = buildTree(N, 0);
    WholeTree Second = buildTree(N, 1);
    EXPECT_EQ(checkTree(First, N), 0);
    // The mirror's root is n-1 mirrored from 0; the shift's is 1.
    EXPECT_EQ(checkTree(Second, N), N == 1 ? 0 : (N % 2 == 0 ? N - 1 : 1));
    for (int R = 0; R < N; ++R) {
      // ChildType says which of the parent's slots holds the rank.
      for (int Which = 0; Which < 2; ++Which) {
        TreeLinks L = getDtree(N, R)[Which];
        if (L.Up == -1)
          continue;
        TreeLinks P = getDtree(N, L.Up)[Which];
        EXPECT_EQ(L.ChildType == 0 ? P.Down0 : P.Down1, R) << "rank " << R << " tree " << Which;
      }
      // Each rank is a leaf in at least one tree, except rank 0 for odd
      // counts: it is the first tree's root and shifts onto an inner node.
      if (N > 1 && !(N % 2 == 1 && R == 0)) {
        EXPECT_TRUE(First.Down[R].empty() || Second.Down[R].empty()) << "rank " << R;
      }
    }
  }
}
