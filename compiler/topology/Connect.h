//===- Connect.h - Rings and trees across identical nodes -------*- C++ -*-===//
//
// NCCL's ncclTopoPreset and ncclTopoPostset (NCCL 2.23 rules) for NNodes
// identical nodes: the search found, inside one node, the GPU order of every
// ring channel and every tree channel; connect turns them into the per-rank
// neighbours the collectives run on.
//
//  * Rings: node n's GPUs in channel c's order, node n's last GPU followed by
//    node n+1's first. With crossNic and an even channel count, odd nodes use
//    the channels in swapped pairs (0<->1, 2<->3) so that a ring enters and
//    leaves every node through different NICs without crossing rails.
//  * Trees: inside a node, a chain in the tree channel's order. Across nodes,
//    NCCL's double binary tree over node indices (Trees.h): the chain's first
//    GPU links up to the parent node; the pattern picks which GPU takes the
//    children - the first GPU (Tree), the second (SplitTree) or one each
//    (BalancedTree: child 0 on the second GPU, child 1 on the first).
//  * Channels: NCCL runs min(ring, tree) channels, then doubles them: channel
//    c and c + n share the ring, channel c uses the first tree and c + n the
//    second. On sm90 machines with fast NVLink (ring bwIntra > 45) spanning
//    several nodes it doubles once more, below 16 channels. Last,
//    NCCL_MAX_NCHANNELS keeps the first channels and NCCL_MIN_NCHANNELS
//    repeats them up to its count.
//
// Ranks are numbered node by node: rank = node * GPUs per node + GPU rank.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "compiler/topology/TopoGraph.h"

#include <nlohmann/json_fwd.hpp>

#include <array>
#include <iosfwd>
#include <vector>

namespace cclc::topo {

struct ConnectOptions {
  int NumNodes = 1;
  /// The smallest compute capability over all GPUs (System::minSm): NCCL 2.23
  /// doubles the channels again when it is exactly 90.
  int MinSm = 0;
  /// NCCL_MIN_NCHANNELS and NCCL_MAX_NCHANNELS (NcclEnv), applied last.
  int MinChannels = 0;
  int MaxChannels = 32;
};

/// One rank's neighbours in one channel; -1 where there is none.
struct RankChannel {
  int RingPrev = -1;
  int RingNext = -1;
  /// The rank's position in Connection::Rings of this channel.
  int RingIndex = -1;
  int TreeUp = -1;
  /// Children in NCCL's order: the next GPU of the node's chain first, then
  /// the heads of child nodes.
  std::array<int, 3> TreeDown = {-1, -1, -1};
};

/// Everything the compiler reads about channels: rings, trees, and where each
/// rank sits in them.
struct Connection {
  int NRanks = 0;
  int NNodes = 0;
  int NLocalRanks = 0; ///< GPUs per node.
  int NChannels = 0;   ///< After NCCL's doublings.
  /// Channels searched and shared by the ring and tree graphs (NCCL's
  /// nChannels before postset); channel c repeats channel c % NSearchChannels.
  int NSearchChannels = 0;
  /// NCCL's tree depth estimate: GPUs per node - 1 + log2(nodes).
  int TreeDepth = 0;
  /// ChannelTree[c]: 0 when channel c's trees across nodes are the binary
  /// tree, 1 when they are the mirrored or shifted second tree.
  std::vector<int> ChannelTree;
  /// Rings[c]: every rank in ring order, starting at rank 0 as NCCL prints.
  std::vector<std::vector<int>> Rings;
  /// PerRank[rank][channel].
  std::vector<std::vector<RankChannel>> PerRank;
  /// The trees of the first 2 * NSearchChannels channels per rank, as NCCL
  /// logs them while connecting, before NCCL_MAX_NCHANNELS may drop some.
  std::vector<std::vector<RankChannel>> TreeLog;

  int nodeOf(int Rank) const { return Rank / NLocalRanks; }
  int localRankOf(int Rank) const { return Rank % NLocalRanks; }
};

/// Connects Ring (pattern Ring) and Tree (any tree pattern) graphs searched
/// for one node across Options.NumNodes nodes. Both graphs must have at least
/// one channel whose Intra is a permutation of the node's GPU ranks.
Connection connectNodes(const TopoGraph &Ring, const TopoGraph &Tree,
                        const ConnectOptions &Options);

/// NCCL's INFO lines for the connection, in NCCL's formats so that they
/// compare with a log line by line: "Channel 00/02 : 0 1 2 3" per channel
/// (cut at 127 characters as NCCL does), then per rank "Tree 0 : -1 -> 0 ->
/// 1/8/-1" per tree channel (NCCL logs these only for the GPUs that link
/// across nodes; here every rank has them), "Ring 00 : 3 -> 0 -> 1" per
/// channel and the "Trees [0] 1/-1/-1->0->-1 ..." summary.
void printConnection(const Connection &Conn, std::ostream &OS);

/// The whole connection: sizes, per-channel rings and trees, per-rank links.
nlohmann::json connectionToJson(const Connection &Conn);

} // namespace cclc::topo
