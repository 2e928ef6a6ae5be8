//===- LinkTable.h - The link between every pair of ranks -------*- C++ -*-===//
//
// Placement and the cost model both ask one question of the machine: what
// joins physical rank P to physical rank Q? Inside a node the answer is the
// GPU-to-GPU path the topology computed (its type and bottleneck bandwidth);
// between nodes it is the network, at the slower of the two GPUs' paths to
// their NICs. Without a machine (--nranks) every pair gets one documented
// default link, or, for ranks on CPUs (--cpu), shared memory at the CPU's
// copy rate.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "compiler/target/Target.h"
#include "compiler/topology/TopoGraph.h"

#include <cstdint>
#include <string>
#include <vector>

namespace cclc::cost {

struct RankLink {
  topo::PathType Type = topo::PathType::LOC;
  float BwGBs = 0; ///< GB/s (10^9 bytes per second), as NCCL counts.
  bool CrossNode = false;
};

/// What --nranks targets assume between any two ranks: a PCIe Gen4 x16 path
/// (NCCL rates it 24 GB/s) through a switch.
constexpr RankLink DefaultLink = {topo::PathType::PIX, 24.0f, false};
/// The network between nodes when a GPU has no NIC to measure: 100 Gb/s.
constexpr float DefaultNetBwGBs = 12.5f;

class LinkTable {
public:
  /// Every pair of T's ranks: from T.Machine when there is one, T.Cpu's
  /// shared memory for ranks on CPUs, DefaultLink otherwise.
  explicit LinkTable(const target::Target &T);

  int32_t nranks() const { return NRanks; }
  const RankLink &link(int32_t P, int32_t Q) const { return Links[P * NRanks + Q]; }
  /// The best link inside a node: the closest path type, then the highest
  /// bandwidth among the pairs of that type. Placement aims every pair at it.
  const RankLink &best() const { return Best; }
  /// True when T has a machine (only then do link classes differ).
  bool hasMachine() const { return Machine; }
  /// "GPU3" on one node, "node 1 GPU3" across several, "rank 3" on CPUs:
  /// how diagnostics name a physical rank.
  std::string rankName(int32_t P) const;

private:
  int32_t NRanks = 0;
  int32_t LocalRanks = 1;
  int32_t NNodes = 1;
  bool Machine = false;
  bool Cpu = false;
  std::vector<RankLink> Links;
  RankLink Best;
};

/// "NVLink" for NVL, "C2C link" for C2C, "PIX path" and so on: how messages
/// name a class of link.
std::string linkClassName(topo::PathType Type);

} // namespace cclc::cost
