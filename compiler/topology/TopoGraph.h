//===- TopoGraph.h - Channels found by the topology search ------*- C++ -*-===//
//
// The result of the search for one pattern (NCCL's struct ncclTopoGraph): how
// many channels were found, at what speed and path type, and for each channel
// the order of the node's GPUs and the NICs used to leave and enter the node.
// Search fills it; connect turns it into per-rank ring and tree neighbours; the
// graph-XML reader and writer exchange it with NCCL (NCCL_GRAPH_FILE).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace cclc::topo {

/// NCCL's NCCL_TOPO_PATTERN_* values; the numbers appear in logs and graph XML.
enum class Pattern : int {
  BalancedTree = 1, ///< Tree parent + one child on the first GPU, second child on the second.
  SplitTree = 2,    ///< Tree parent on the first GPU, children on the second.
  Tree = 3,         ///< All NIC traffic to and from the same GPU.
  Ring = 4,
  Nvls = 5,         ///< NVLink SHARP through the NVSwitch.
};

/// NCCL's path types, ordered from closest to farthest; the order matters
/// because the search compares them ("no worse than PIX").
enum class PathType : int { LOC, NVL, NVB, C2C, PIX, PXB, P2C, PXN, PHB, SYS, NET, DIS };

/// "LOC", "NVL", ... as NCCL prints them.
std::string_view pathTypeName(PathType Type);
/// Inverse of pathTypeName; false for an unknown name.
bool parsePathType(std::string_view Name, PathType &Type);

struct TopoGraph {
  int Id = 0; ///< 0 ring, 1 tree, 2 collnet chain, 3 nvls, 4 collnet direct (NCCL 2.23 ids).
  Pattern Pat = Pattern::Ring;
  bool CrossNic = false;
  int MinChannels = 1;
  int MaxChannels = 1;
  int NChannels = 0;
  float BwIntra = 0; ///< GB/s per channel inside the node.
  float BwInter = 0; ///< GB/s per channel across nodes.
  float LatencyInter = 0;
  PathType TypeIntra = PathType::LOC;
  PathType TypeInter = PathType::LOC;
  bool SameChannels = true;
  int NHops = 0;
  /// Intra[c] lists the GPU *ranks* of channel c in visiting order (NCCL's
  /// graph->intra[c*ngpus + i]); every entry has the node's GPU count.
  std::vector<std::vector<int>> Intra;
  /// Inter[c] = {NET id entering the node, NET id leaving it}; empty when the
  /// search ran for a single node (no NET in the pattern).
  std::vector<std::vector<int64_t>> Inter;
};

} // namespace cclc::topo
