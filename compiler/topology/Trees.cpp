//===- Trees.cpp - NCCL's binary and double binary trees ------------------===//

#include "compiler/topology/Trees.h"
#include "plan/Assert.h"

namespace cclc::topo {

TreeLinks getBtree(int NRanks, int Rank) {
  CCLC_ASSERT(NRanks > 0 && Rank >= 0 && Rank < NRanks, "rank outside the tree");
  // The lowest set bit of Rank says its level: odd ranks are leaves, ranks
  // ending in 10 have children at +-1, ranks ending in 100 at +-2, ... The root
  // has no set bit; it stops at the first power of two not below NRanks.
  int Bit = 1;
  while (Bit < NRanks && (Bit & Rank) == 0)
    Bit <<= 1;

  TreeLinks Links;
  if (Rank == 0) {
    // The root's only child is the top of the complete tree, the highest
    // power of two below NRanks, and sits in the Down1 slot as NCCL has it.
    if (NRanks > 1)
      Links.Down1 = Bit >> 1;
    return Links;
  }

  // xx01[0] and xx11[0] hang under xx10[0]; when that is out of range (a
  // right edge cut short by NRanks), under xx00[0].
  int Up = (Rank ^ Bit) | (Bit << 1);
  if (Up >= NRanks)
    Up = Rank ^ Bit;
  Links.Up = Up;
  Links.ChildType = Rank < Up ? 0 : 1;

  int Half = Bit >> 1;
  if (Half == 0)
    return Links;
  // The left child is always in range; the right one moves down the left
  // spine of the right subtree until it is (12 -> 13 for 14 ranks).
  Links.Down0 = Rank - Half;
  while (Half != 0 && Rank + Half >= NRanks)
    Half >>= 1;
  Links.Down1 = Half == 0 ? -1 : Rank + Half;
  return Links;
}

namespace {

/// Renames every rank of Links through Map, keeping -1 as "none".
template <typename MapFn> TreeLinks renameRanks(TreeLinks Links, MapFn Map) {
  auto Rename = [&](int R) { return R == -1 ? -1 : Map(R); };
  Links.Up = Rename(Links.Up);
  Links.Down0 = Rename(Links.Down0);
  Links.Down1 = Rename(Links.Down1);
  return Links;
}

} // namespace

std::array<TreeLinks, 2> getDtree(int NRanks, int Rank) {
  TreeLinks First = getBtree(NRanks, Rank);
  if (NRanks % 2 == 1) {
    // Shift: rank r plays r-1 in the binary tree. Odd n keeps parities
    // apart this way, where the mirror would map n-1-r to the same parity.
    auto Shift = [NRanks](int R) { return (R + 1) % NRanks; };
    TreeLinks Second = getBtree(NRanks, (Rank - 1 + NRanks) % NRanks);
    return {First, renameRanks(Second, Shift)};
  }
  // Mirror: rank r plays n-1-r; n-1 is odd, so leaves and interior swap.
  auto Mirror = [NRanks](int R) { return NRanks - 1 - R; };
  return {First, renameRanks(getBtree(NRanks, NRanks - 1 - Rank), Mirror)};
}

} // namespace cclc::topo
