//===- TopologySearchTest.cpp - Channel search against NCCL's results -----===//

#include "TopologyTestUtil.h"
#include "compiler/topology/Search.h"
#include "compiler/topology/SystemPrint.h"

#include <gtest/gtest.h>

using namespace cclc;
using namespace cclc::topo;
using namespace cclc::topo::test;

namespace {

System loaded(const std::string &Name) {
  auto L = loadFile(projectTopology(Name));
  EXPECT_TRUE(L->Sys) << L->text();
  return *L->Sys;
}

std::string printed(const TopoGraph &G) {
  std::ostringstream OS;
  printGraph(G, OS);
  return OS.str();
}

/// Whether GPU ranks A and B are consecutive in a ring channel.
bool adjacent(const std::vector<int> &Ring, int A, int B) {
  for (size_t I = 0; I < Ring.size(); ++I) {
    int X = Ring[I], Y = Ring[(I + 1) % Ring.size()];
    if ((X == A && Y == B) || (X == B && Y == A))
      return true;
  }
  return false;
}

TEST(TopologySearch, Yccl4xA6000MatchesNcclGraphDump) {
  // expected/yccl-4xa6000-graph.xml (NCCL 2.23.4): ring and balanced tree,
  // 1 channel "0 1 2 3", speed 10/10, SYS/PIX, samechannels 1. The log's two
  // channels come from connect, which doubles the search's channels.
  std::vector<TopoGraph> Graphs = searchAll(loaded("yccl-4xa6000"), 1);
  ASSERT_EQ(Graphs.size(), 2u);
  EXPECT_EQ(printed(Graphs[0]), "Pattern 4, crossNic 0, nChannels 1, bw 10.000000/10.000000, "
                                "type SYS/PIX, sameChannels 1\n 0 : GPU/0 GPU/1 GPU/2 GPU/3\n");
  EXPECT_EQ(printed(Graphs[1]), "Pattern 1, crossNic 0, nChannels 1, bw 10.000000/10.000000, "
                                "type SYS/PIX, sameChannels 1\n 0 : GPU/0 GPU/1 GPU/2 GPU/3\n");
  EXPECT_EQ(Graphs[0].Id, 0);
  EXPECT_EQ(Graphs[1].Id, 1);
  EXPECT_TRUE(Graphs[0].Inter.empty());
}

TEST(TopologySearch, AzureNcv4RingSpeedAndTypeMatchVendorGraph) {
  // expected/azure-ncv4-graph.xml is forced by the vendor (2 channels); the
  // search agrees on its speed 12, SYS/PIX, and its first channel.
  TopoGraph Ring = searchAll(loaded("azure-ncv4"), 1)[0];
  EXPECT_FLOAT_EQ(Ring.BwIntra, 12.0f);
  EXPECT_EQ(Ring.TypeIntra, PathType::SYS);
  EXPECT_EQ(Ring.TypeInter, PathType::PIX);
  ASSERT_GE(Ring.NChannels, 1);
  EXPECT_EQ(Ring.Intra[0], (std::vector<int>{0, 1, 2, 3}));
}

TEST(TopologySearch, Mesh8FindsNvlinkRings) {
  TopoGraph Ring = searchAll(loaded("mesh8"), 1)[0];
  EXPECT_EQ(Ring.TypeIntra, PathType::NVL);
  EXPECT_GE(Ring.NChannels, 2);
  EXPECT_GE(Ring.BwIntra * Ring.NChannels, 200.0f);
  for (const std::vector<int> &C : Ring.Intra)
    EXPECT_EQ(C.size(), 8u);
}

TEST(TopologySearch, BrokenLinkIsNotARingHop) {
  // GPU0-GPU1 lost its NVLink: NVLink-speed rings must route around it.
  TopoGraph Ring = searchAll(loaded("mesh8-broken-0-1"), 1)[0];
  EXPECT_EQ(Ring.TypeIntra, PathType::NVL);
  EXPECT_GE(Ring.NChannels, 2);
  for (const std::vector<int> &C : Ring.Intra)
    EXPECT_FALSE(adjacent(C, 0, 1)) << printed(Ring);
}

TEST(TopologySearch, MultiNodeRingsEnterAndLeaveThroughNets) {
  for (const char *Name : {"mesh8", "simai-hgx-8xa100", "yccl-h800", "dgx1-v100"}) {
    std::vector<TopoGraph> Graphs = searchAll(loaded(Name), 2);
    const TopoGraph &Ring = Graphs[0];
    ASSERT_GT(Ring.NChannels, 0) << Name;
    ASSERT_EQ(Ring.Inter.size(), static_cast<size_t>(Ring.NChannels)) << Name;
    EXPECT_EQ(printed(Ring).find(" 0 : NET/0-"), printed(Ring).find('\n') + 1) << Name;
    EXPECT_EQ(Graphs[1].NChannels, Ring.NChannels) << Name; // Trees follow the ring count.
  }
}

TEST(TopologySearch, NvlsOnlyWithNvswitchAndSm90) {
  EXPECT_EQ(searchAll(loaded("simai-hgx-8xa100"), 1).size(), 2u); // sm80: no NVLS.
  std::vector<TopoGraph> H800 = searchAll(loaded("yccl-h800"), 1);
  ASSERT_EQ(H800.size(), 3u);
  EXPECT_EQ(H800[2].Id, 3);
  EXPECT_EQ(H800[2].Pat, Pattern::Nvls);
  EXPECT_EQ(H800[2].NChannels, 8); // One head per GPU within a node.
}

TEST(TopologySearch, DuplicatedChannelsHalveTheirBandwidth) {
  // simai (NVSwitch, 240 GB/s per GPU): 6 channels at 40 are duplicated to 12 at 20.
  TopoGraph Ring = searchAll(loaded("simai-hgx-8xa100"), 1)[0];
  EXPECT_EQ(graphSummary(Ring), "Pattern 4, crossNic 0, nChannels 12, bw 20.000000/20.000000, "
                                "type NVL/PIX, sameChannels 1");
  EXPECT_EQ(Ring.Intra[0], Ring.Intra[6]);
}

TEST(TopologySearch, IsDeterministic) {
  for (const std::string &Name : projectTopologies()) {
    auto L = loadFile(projectTopology(Name));
    if (!L->Sys)
      continue;
    for (int Nodes : {1, 64}) {
      std::string First, Second;
      for (const TopoGraph &G : searchAll(*L->Sys, Nodes))
        First += printed(G);
      for (const TopoGraph &G : searchAll(*L->Sys, Nodes))
        Second += printed(G);
      EXPECT_EQ(First, Second) << Name;
    }
  }
}

TEST(TopologySearch, SearchLeavesTheSystemUnchanged) {
  System Sys = loaded("dgx1-v100");
  prepareSystem(Sys, 2);
  std::string Before = systemToJson(Sys).dump();
  TopoGraph Ring;
  Ring.MaxChannels = 16;
  computeGraph(Sys, Ring);
  EXPECT_EQ(systemToJson(Sys).dump(), Before);
}

TEST(TopologySearch, PathTypeNamesRoundTrip) {
  for (int T = 0; T <= static_cast<int>(PathType::DIS); ++T) {
    PathType Back;
    ASSERT_TRUE(parsePathType(pathTypeName(static_cast<PathType>(T)), Back));
    EXPECT_EQ(static_cast<int>(Back), T);
  }
  PathType Unused;
  EXPECT_FALSE(parsePathType("XYZ", Unused));
}

} // namespace
