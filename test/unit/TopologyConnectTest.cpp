//===- TopologyConnectTest.cpp - Rings and trees across nodes --------------===//

#include "compiler/topology/Connect.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <gtest/gtest.h>
#include <numeric>
#include <sstream>
#include <string>
#include <vector>

using namespace cclc::topo;

namespace {

TopoGraph makeGraph(Pattern Pat, std::vector<std::vector<int>> Orders) {
  TopoGraph G;
  G.Pat = Pat;
  G.NChannels = static_cast<int>(Orders.size());
  G.Intra = std::move(Orders);
  return G;
}

/// Orders for NChannels channels over L GPUs that differ from one another:
/// channel c starts at GPU c % L and alternates direction.
std::vector<std::vector<int>> rotatedOrders(int L, int NChannels) {
  std::vector<std::vector<int>> Orders;
  for (int C = 0; C < NChannels; ++C) {
    std::vector<int> Order;
    for (int I = 0; I < L; ++I)
      Order.push_back(((C % 2 ? -I : I) + C + L * L) % L);
    Orders.push_back(Order);
  }
  return Orders;
}

/// Every channel's ring is a permutation with matching prev/next, and its
/// tree is one acyclic tree over all ranks with matching up/down links.
void checkConsistent(const Connection &Conn) {
  ASSERT_EQ(static_cast<int>(Conn.PerRank.size()), Conn.NRanks);
  ASSERT_EQ(static_cast<int>(Conn.Rings.size()), Conn.NChannels);
  for (int C = 0; C < Conn.NChannels; ++C) {
    SCOPED_TRACE("channel " + std::to_string(C));
    std::vector<int> Sorted = Conn.Rings[C];
    std::sort(Sorted.begin(), Sorted.end());
    std::vector<int> All(Conn.NRanks);
    std::iota(All.begin(), All.end(), 0);
    EXPECT_EQ(Sorted, All);
    EXPECT_EQ(Conn.Rings[C][0], 0);
    int Roots = 0;
    for (int R = 0; R < Conn.NRanks; ++R) {
      const RankChannel &L = Conn.PerRank[R][C];
      EXPECT_EQ(Conn.PerRank[L.RingNext][C].RingPrev, R);
      EXPECT_EQ(Conn.PerRank[L.RingPrev][C].RingNext, R);
      EXPECT_EQ(Conn.Rings[C][L.RingIndex], R);
      EXPECT_EQ(Conn.Rings[C][(L.RingIndex + 1) % Conn.NRanks], L.RingNext);
      if (L.TreeUp == -1) {
        ++Roots;
      } else {
        const auto &Siblings = Conn.PerRank[L.TreeUp][C].TreeDown;
        EXPECT_EQ(std::count(Siblings.begin(), Siblings.end(), R), 1)
            << "rank " << R << " is not a child of " << L.TreeUp;
      }
      for (int D : L.TreeDown) {
        if (D != -1) {
          EXPECT_EQ(Conn.PerRank[D][C].TreeUp, R) << "child " << D << " of " << R;
        }
      }
      // Up links reach the root without a cycle.
      int Cur = R, Steps = 0;
      while (Conn.PerRank[Cur][C].TreeUp != -1 && Steps++ <= Conn.NRanks)
        Cur = Conn.PerRank[Cur][C].TreeUp;
      EXPECT_LE(Steps, Conn.NRanks) << "cycle above rank " << R;
    }
    EXPECT_EQ(Roots, 1);
  }
}

std::string printed(const Connection &Conn) {
  std::ostringstream OS;
  printConnection(Conn, OS);
  return OS.str();
}

} // namespace

TEST(TopologyConnect, SingleNodeReproducesNcclLog) {
  // The 4x A6000 of the recorded NCCL 2.23.4 log: one ring and one balanced
  // tree channel 0 1 2 3, doubled to two channels.
  TopoGraph Ring = makeGraph(Pattern::Ring, {{0, 1, 2, 3}});
  TopoGraph Tree = makeGraph(Pattern::BalancedTree, {{0, 1, 2, 3}});
  Connection Conn = connectNodes(Ring, Tree, ConnectOptions{});
  EXPECT_EQ(Conn.NChannels, 2);
  EXPECT_EQ(Conn.NRanks, 4);
  checkConsistent(Conn);
  std::string Out = printed(Conn);
  EXPECT_NE(Out.find("Channel 00/02 : 0 1 2 3\nChannel 01/02 : 0 1 2 3\n"), std::string::npos);
  EXPECT_NE(Out.find("Trees [0] 1/-1/-1->0->-1 [1] 1/-1/-1->0->-1\n"), std::string::npos);
  EXPECT_NE(Out.find("Trees [0] 2/-1/-1->1->0 [1] 2/-1/-1->1->0\n"), std::string::npos);
  EXPECT_NE(Out.find("Trees [0] 3/-1/-1->2->1 [1] 3/-1/-1->2->1\n"), std::string::npos);
  EXPECT_NE(Out.find("Trees [0] -1/-1/-1->3->2 [1] -1/-1/-1->3->2\n"), std::string::npos);
  EXPECT_NE(Out.find("Ring 00 : 3 -> 0 -> 1\nRing 01 : 3 -> 0 -> 1\n"), std::string::npos);
  EXPECT_NE(Out.find("Tree 0 : -1 -> 0 -> 1/-1/-1\nTree 1 : -1 -> 0 -> 1/-1/-1\n"),
            std::string::npos);
}

TEST(TopologyConnect, TwoNodesJoinRingsAndTrees) {
  std::vector<int> Order = {0, 1, 2, 3, 4, 5, 6, 7};
  TopoGraph Ring = makeGraph(Pattern::Ring, {Order});
  TopoGraph Tree = makeGraph(Pattern::Tree, {Order});
  Connection Conn = connectNodes(Ring, Tree, ConnectOptions{2, 80});
  checkConsistent(Conn);
  EXPECT_EQ(Conn.NRanks, 16);
  EXPECT_EQ(Conn.TreeDepth, 8);
  // The ring runs node 0 then node 1 and closes.
  std::vector<int> Expected(16);
  std::iota(Expected.begin(), Expected.end(), 0);
  EXPECT_EQ(Conn.Rings[0], Expected);
  EXPECT_EQ(Conn.PerRank[7][0].RingNext, 8);
  EXPECT_EQ(Conn.PerRank[0][0].RingPrev, 15);
  // First tree: node 0 is the root with node 1 as child; second: mirrored.
  std::string Out = printed(Conn);
  EXPECT_NE(Out.find("Tree 0 : -1 -> 0 -> 1/8/-1\nTree 1 : 8 -> 0 -> 1/-1/-1\n"),
            std::string::npos);
  EXPECT_NE(Out.find("Tree 0 : 0 -> 8 -> 9/-1/-1\nTree 1 : -1 -> 8 -> 9/0/-1\n"),
            std::string::npos);
  EXPECT_EQ(Conn.ChannelTree, (std::vector<int>{0, 1}));
}

TEST(TopologyConnect, BalancedAndSplitTreesPlaceChildren) {
  std::vector<int> Order = {0, 1, 2, 3};
  for (Pattern Pat : {Pattern::BalancedTree, Pattern::SplitTree}) {
    Connection Conn =
        connectNodes(makeGraph(Pattern::Ring, {Order}), makeGraph(Pat, {Order}), {3, 80});
    checkConsistent(Conn);
    // btree(3): node 0 -> node 2 -> node 1. Node 2 is node 0's Down1, whose
    // GPU is the first (balanced) or the second (split).
    EXPECT_EQ(Conn.PerRank[8][0].TreeUp, Pat == Pattern::SplitTree ? 1 : 0);
    // Child 0 of node 2 sits on its second GPU in both patterns.
    const RankChannel &Second2 = Conn.PerRank[9][0];
    EXPECT_EQ(Second2.TreeDown[1], 4);
    EXPECT_EQ(Conn.PerRank[4][0].TreeUp, 9);
  }
}

TEST(TopologyConnect, CrossNicAlternatesChannelPairsOnOddNodes) {
  TopoGraph Ring = makeGraph(Pattern::Ring, {{0, 1, 2, 3}, {3, 2, 1, 0}});
  Ring.CrossNic = true;
  TopoGraph Tree = makeGraph(Pattern::Tree, {{0, 1, 2, 3}, {0, 1, 2, 3}});
  Connection Conn = connectNodes(Ring, Tree, {2, 80});
  checkConsistent(Conn);
  EXPECT_EQ(Conn.Rings[0], (std::vector<int>{0, 1, 2, 3, 7, 6, 5, 4}));
  EXPECT_EQ(Conn.Rings[1], (std::vector<int>{0, 4, 5, 6, 7, 3, 2, 1}));
  // Without crossNic the nodes keep their own channel.
  Ring.CrossNic = false;
  EXPECT_EQ(connectNodes(Ring, Tree, {2, 80}).Rings[0], (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}));
}

TEST(TopologyConnect, ChannelsAreTheSmallerGraphDoubled) {
  TopoGraph Ring = makeGraph(Pattern::Ring, rotatedOrders(8, 4));
  TopoGraph Tree = makeGraph(Pattern::BalancedTree, rotatedOrders(8, 2));
  Connection Conn = connectNodes(Ring, Tree, {2, 80});
  EXPECT_EQ(Conn.NSearchChannels, 2);
  EXPECT_EQ(Conn.NChannels, 4);
  checkConsistent(Conn);
  EXPECT_EQ(Conn.Rings[2], Conn.Rings[0]);
  EXPECT_EQ(Conn.Rings[3], Conn.Rings[1]);
}

TEST(TopologyConnect, Sm90FastNvlinkDoublesAgainAcrossNodes) {
  TopoGraph Ring = makeGraph(Pattern::Ring, rotatedOrders(8, 2));
  Ring.BwIntra = 48;
  TopoGraph Tree = makeGraph(Pattern::BalancedTree, rotatedOrders(8, 2));
  Connection Multi = connectNodes(Ring, Tree, {2, 90});
  EXPECT_EQ(Multi.NChannels, 8);
  checkConsistent(Multi);
  EXPECT_EQ(Multi.ChannelTree, (std::vector<int>{0, 0, 1, 1, 0, 0, 1, 1}));
  for (int R = 0; R < Multi.NRanks; ++R)
    EXPECT_EQ(Multi.PerRank[R][5].TreeUp, Multi.PerRank[R][1].TreeUp);
  EXPECT_EQ(connectNodes(Ring, Tree, {1, 90}).NChannels, 4);
  EXPECT_EQ(connectNodes(Ring, Tree, {2, 80}).NChannels, 4);
}

TEST(TopologyConnect, ConsistentForOneTwoThreeAnd64Nodes) {
  for (int Nodes : {1, 2, 3, 64})
    for (int L : {1, 2, 4, 8})
      for (Pattern Pat : {Pattern::Tree, Pattern::SplitTree, Pattern::BalancedTree}) {
        SCOPED_TRACE(std::to_string(Nodes) + " nodes of " + std::to_string(L) + " GPUs, pattern " +
                     std::to_string(static_cast<int>(Pat)));
        TopoGraph Ring = makeGraph(Pattern::Ring, rotatedOrders(L, 4));
        Ring.CrossNic = Nodes % 2 == 0;
        TopoGraph Tree = makeGraph(Pat, rotatedOrders(L, 4));
        Connection Conn = connectNodes(Ring, Tree, {Nodes, 80});
        EXPECT_EQ(Conn.NRanks, Nodes * L);
        EXPECT_EQ(Conn.NChannels, 8);
        checkConsistent(Conn);
        for (int R = 0; R < Conn.NRanks; ++R) {
          EXPECT_EQ(Conn.nodeOf(R) * L + Conn.localRankOf(R), R);
        }
      }
}

TEST(TopologyConnect, LongRingsAreCutLikeNccl) {
  auto firstLine = [](int Nodes, int L) {
    std::vector<int> Order(L);
    std::iota(Order.begin(), Order.end(), 0);
    std::string Out = printed(connectNodes(makeGraph(Pattern::Ring, {Order}),
                                           makeGraph(Pattern::Tree, {Order}), {Nodes, 80}));
    return Out.substr(0, Out.find('\n'));
  };
  // 64 ranks print two digits each; the line overflows and ends in "...".
  std::string Short = firstLine(16, 4);
  EXPECT_EQ(Short.size(), 127u);
  EXPECT_EQ(Short.substr(0, 24), "Channel 00/02 :  0  1  2");
  EXPECT_EQ(Short.substr(118), "34 35 ...");
  // 512 ranks at three digits fill exactly 127 characters: NCCL stops there
  // without the dots.
  std::string Long = firstLine(64, 8);
  EXPECT_EQ(Long.size(), 127u);
  EXPECT_EQ(Long.substr(0, 32), "Channel 00/02 :   0   1   2   3 ");
  EXPECT_EQ(Long.substr(120), " 26  27");
}

TEST(TopologyConnect, JsonHasEveryRankAndChannel) {
  std::vector<int> Order = {0, 1};
  Connection Conn =
      connectNodes(makeGraph(Pattern::Ring, {Order}), makeGraph(Pattern::Tree, {Order}), {2, 80});
  nlohmann::json J = connectionToJson(Conn);
  EXPECT_EQ(J["nRanks"], 4);
  EXPECT_EQ(J["nChannels"], 2);
  EXPECT_EQ(J["channels"][1]["ring"], (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(J["channels"][1]["tree"], 1);
  EXPECT_EQ(J["ranks"][3]["node"], 1);
  EXPECT_EQ(J["ranks"][3]["localRank"], 1);
  EXPECT_EQ(J["ranks"][2]["channels"][0]["treeUp"], 0);
  EXPECT_EQ(J["ranks"][2]["channels"][0]["ringPrev"], 1);
}
