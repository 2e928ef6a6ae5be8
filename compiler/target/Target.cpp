//===- Target.cpp - What an algorithm is compiled for ---------------------===//

#include "compiler/target/Target.h"
#include "compiler/topology/Connect.h"
#include "compiler/topology/Trees.h"
#include "plan/Assert.h"

#include <numeric>

namespace cclc::target {

/// Collects the -1-terminated children of NCCL's tree links.
static std::vector<int32_t> children(std::initializer_list<int> Down) {
  std::vector<int32_t> Result;
  for (int D : Down)
    if (D >= 0)
      Result.push_back(D);
  return Result;
}

Target flatTarget(int32_t NRanks, int32_t NNodes) {
  CCLC_ASSERT(NRanks > 0 && NNodes > 0 && NRanks % NNodes == 0,
              "a target needs ranks, spread evenly over its nodes");
  Target T;
  T.NRanks = NRanks;
  T.NNodes = NNodes;
  T.LocalRanks = NRanks / NNodes;
  T.Description = std::to_string(NRanks) + " ranks";
  if (NNodes > 1)
    T.Description += " on " + std::to_string(NNodes) + " nodes of " +
                     std::to_string(T.LocalRanks);
  std::vector<int32_t> Ring(NRanks);
  std::iota(Ring.begin(), Ring.end(), 0);
  T.Rings.push_back(std::move(Ring));
  for (int TreeIndex = 0; TreeIndex < 2; ++TreeIndex) {
    TreeChannel Tree;
    for (int32_t R = 0; R < NRanks; ++R) {
      topo::TreeLinks L = topo::getDtree(NRanks, R)[TreeIndex];
      Tree.Up.push_back(L.Up);
      Tree.Down.push_back(children({L.Down0, L.Down1}));
    }
    T.Trees.push_back(std::move(Tree));
  }
  return T;
}

Target cpuTarget(int32_t NRanks) {
  Target T = flatTarget(NRanks);
  T.Cpu = CpuCosts{};
  T.Description += " on CPUs";
  return T;
}

Target topologyTarget(const topo::System &Machine, const topo::Connection &Conn,
                      float RingBwGBs, std::string Description) {
  Target T;
  T.ChannelBwGBs = RingBwGBs;
  T.NRanks = Conn.NRanks;
  T.NNodes = Conn.NNodes;
  T.LocalRanks = Conn.NLocalRanks;
  T.Machine = &Machine;
  T.Description = std::move(Description);
  T.Rings = std::vector<std::vector<int32_t>>(Conn.Rings.begin(), Conn.Rings.end());
  for (int C = 0; C < Conn.NChannels; ++C) {
    TreeChannel Tree;
    for (int32_t R = 0; R < Conn.NRanks; ++R) {
      const topo::RankChannel &RC = Conn.PerRank[R][C];
      Tree.Up.push_back(RC.TreeUp);
      Tree.Down.push_back(children({RC.TreeDown[0], RC.TreeDown[1], RC.TreeDown[2]}));
    }
    T.Trees.push_back(std::move(Tree));
  }
  return T;
}

} // namespace cclc::target
