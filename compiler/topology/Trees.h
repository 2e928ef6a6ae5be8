//===- Trees.h - NCCL's binary and double binary trees ----------*- C++ -*-===//
//
// The trees connect uses to join nodes: NCCL's ncclGetBtree and ncclGetDtree,
// with exactly NCCL's numbering so that our trees match what NCCL builds for
// the same node count (logs, graph dumps and schedules compare one to one).
//
// The binary tree has root 0 with a single child; the other ranks form a
// balanced binary tree in which odd ranks are leaves, read off the binary
// representation of the rank (14 ranks):
//
//   0---------------8
//            ______/ \______
//           4               12
//         /   \            /  \___
//       2       6       10       13
//      / \     / \     /  \   (odd ranks are leaves)
//     1   3   5   7   9   11
//
// The double binary tree pairs it with a second tree in which the roles swap:
// the mirror image (rank r plays n-1-r) when n is even, the tree shifted by
// one rank (r plays r-1) when n is odd. Every rank that is interior in one
// tree is then a leaf in the other (except rank 0 for odd n), so reductions
// on the two trees use each link's two directions at once.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <array>

namespace cclc::topo {

/// One rank's links in a tree; -1 marks a missing parent or child.
struct TreeLinks {
  int Up = -1;
  int Down0 = -1;
  int Down1 = -1;
  /// 0 when this rank is its parent's Down0, 1 when it is Down1 (0 for the
  /// root). Connect uses it to pick which GPU of the parent node to link to.
  int ChildType = 0;
};

/// NCCL's ncclGetBtree: Rank's links in the binary tree over NRanks ranks.
TreeLinks getBtree(int NRanks, int Rank);

/// NCCL's ncclGetDtree: Rank's links in the first tree (the binary tree) and
/// in the second tree (mirrored for even NRanks, shifted for odd NRanks).
std::array<TreeLinks, 2> getDtree(int NRanks, int Rank);

} // namespace cclc::topo
