//===- Connect.cpp - Rings and trees across identical nodes ---------------===//

#include "compiler/topology/Connect.h"
#include "compiler/topology/Format.h"
#include "compiler/topology/Search.h"
#include "compiler/topology/Trees.h"
#include "plan/Assert.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <ostream>
#include <string>

namespace cclc::topo {

namespace {

bool isPermutation(const std::vector<int> &Order, int Size) {
  if (static_cast<int>(Order.size()) != Size)
    return false;
  std::vector<bool> Seen(Size, false);
  for (int R : Order) {
    if (R < 0 || R >= Size || Seen[R])
      return false;
    Seen[R] = true;
  }
  return true;
}

int floorLog2(int N) {
  int Log = 0;
  while (N >>= 1)
    ++Log;
  return Log;
}

/// NCCL's setTreeDown: a child goes into the first free slot.
void addTreeChild(RankChannel &Links, int Child) {
  auto Free = std::find(Links.TreeDown.begin(), Links.TreeDown.end(), -1);
  CCLC_ASSERT(Free != Links.TreeDown.end(), "tree rank has more than three children");
  *Free = Child;
}

/// Fills the ring neighbours of search channel C for every rank.
void connectRing(const TopoGraph &Ring, int C, bool AlternatePairs, Connection &Conn) {
  int L = Conn.NLocalRanks, N = Conn.NNodes;
  // ncclTopoPostset's ring alternation: odd nodes take the paired channel.
  auto orderOf = [&](int Node) -> const std::vector<int> & {
    return Ring.Intra[AlternatePairs && Node % 2 == 1 ? C ^ 1 : C];
  };
  for (int Node = 0; Node < N; ++Node) {
    const std::vector<int> &Order = orderOf(Node);
    int PrevNode = (Node - 1 + N) % N, NextNode = (Node + 1) % N;
    for (int I = 0; I < L; ++I) {
      RankChannel &Links = Conn.PerRank[Node * L + Order[I]][C];
      // The node's ring head receives from the previous node's tail, its
      // tail sends to the next node's head (connectRings).
      Links.RingPrev = I > 0 ? Node * L + Order[I - 1] : PrevNode * L + orderOf(PrevNode)[L - 1];
      Links.RingNext = I + 1 < L ? Node * L + Order[I + 1] : NextNode * L + orderOf(NextNode)[0];
    }
  }
}

/// Fills the trees of search channel C: the first double-binary tree into
/// channel C, the second into channel C + NSearchChannels.
void connectTree(const TopoGraph &Tree, int C, Connection &Conn) {
  int L = Conn.NLocalRanks, N = Conn.NNodes;
  const std::vector<int> &Chain = Tree.Intra[C];
  // Which GPU takes the child nodes: the first for Tree, the second for
  // SplitTree, one each for BalancedTree (and, as in NCCL, for any other
  // pattern). With one GPU per node there is no choice.
  int Child0Index = L > 1 && Tree.Pat != Pattern::Tree ? 1 : 0;
  int Child1Index = L > 1 && Tree.Pat == Pattern::SplitTree ? 1 : 0;

  for (int Node = 0; Node < N; ++Node) {
    std::array<TreeLinks, 2> Inter = getDtree(N, Node);
    for (int T = 0; T < 2; ++T) {
      int Channel = C + T * Conn.NSearchChannels;
      auto linksOf = [&](int Local) -> RankChannel & {
        return Conn.PerRank[Node * L + Local][Channel];
      };
      // ncclTopoPreset: the chain inside the node.
      for (int I = 0; I < L; ++I) {
        RankChannel &Links = linksOf(Chain[I]);
        Links.TreeUp = I > 0 ? Node * L + Chain[I - 1] : -1;
        Links.TreeDown = {I + 1 < L ? Node * L + Chain[I + 1] : -1, -1, -1};
      }
      // connectTrees: the chain's head links up to the GPU of the parent node
      // that holds this node's child slot; the child GPUs link down to the
      // heads of the child nodes.
      const TreeLinks &Links = Inter[T];
      if (Links.Up != -1) {
        int ParentLocal = Chain[Links.ChildType == 0 ? Child0Index : Child1Index];
        linksOf(Chain[0]).TreeUp = Links.Up * L + ParentLocal;
      }
      if (Links.Down0 != -1)
        addTreeChild(linksOf(Chain[Child0Index]), Links.Down0 * L + Chain[0]);
      if (Links.Down1 != -1)
        addTreeChild(linksOf(Chain[Child1Index]), Links.Down1 * L + Chain[0]);
    }
  }
}

/// NCCL's copyChannels: channels from NChannels up to End repeat the
/// channels from 0 on; nothing when End is not above NChannels.
void copyChannels(Connection &Conn, int End) {
  int Start = Conn.NChannels;
  for (int C = Start; C < End; ++C) {
    Conn.ChannelTree.push_back(Conn.ChannelTree[C - Start]);
    for (std::vector<RankChannel> &Channels : Conn.PerRank)
      Channels.push_back(Channels[C - Start]);
  }
  Conn.NChannels = std::max(Start, End);
}

/// NCCL's dumpLine: "%*d" per rank at the width of the largest rank, the line
/// cut to 127 characters ending in "...".
std::string ringLine(const std::string &Prefix, const std::vector<int> &Ranks) {
  constexpr size_t LineLength = 128;
  int Width = static_cast<int>(std::to_string(Ranks.size() - 1).size());
  std::string Line = Prefix;
  for (size_t I = 0; I < Ranks.size() && Line.size() < LineLength - 1; ++I)
    Line += format(" %*d", Width, Ranks[I]);
  if (Line.size() >= LineLength)
    Line = Line.substr(0, LineLength - 4) + "...";
  return Line;
}

} // namespace

Connection connectNodes(const TopoGraph &Ring, const TopoGraph &Tree,
                        const ConnectOptions &Options) {
  CCLC_ASSERT(Options.NumNodes >= 1, "connect needs at least one node");
  // NCCL's init runs min(ring, tree) channels; postset doubles them, which
  // the search's limit of MAXCHANNELS/2 keeps in range.
  int Base = std::min({Ring.NChannels, Tree.NChannels, MaxChannels / 2});
  CCLC_ASSERT(Base >= 1, "connect needs a ring and a tree channel");
  CCLC_ASSERT(static_cast<int>(Ring.Intra.size()) >= Base &&
                  static_cast<int>(Tree.Intra.size()) >= Base,
              "graph has fewer channel orders than channels");

  Connection Conn;
  Conn.NLocalRanks = static_cast<int>(Ring.Intra[0].size());
  Conn.NNodes = Options.NumNodes;
  Conn.NRanks = Conn.NLocalRanks * Conn.NNodes;
  Conn.NSearchChannels = Base;
  Conn.TreeDepth = Conn.NLocalRanks - 1 + floorLog2(Conn.NNodes);
  for (int C = 0; C < Base; ++C) {
    CCLC_ASSERT(isPermutation(Ring.Intra[C], Conn.NLocalRanks), "ring channel is no GPU order");
    CCLC_ASSERT(isPermutation(Tree.Intra[C], Conn.NLocalRanks), "tree channel is no GPU order");
  }

  int Doubled = 2 * Base;
  Conn.NChannels = Doubled;
  Conn.PerRank.assign(Conn.NRanks, std::vector<RankChannel>(Doubled));

  bool AlternatePairs = Ring.CrossNic && Base % 2 == 0;
  for (int C = 0; C < Base; ++C) {
    connectRing(Ring, C, AlternatePairs, Conn);
    connectTree(Tree, C, Conn);
  }
  // The doubled channels share their ring.
  for (int C = Base; C < Doubled; ++C)
    for (std::vector<RankChannel> &Channels : Conn.PerRank) {
      Channels[C].RingPrev = Channels[C - Base].RingPrev;
      Channels[C].RingNext = Channels[C - Base].RingNext;
    }
  for (int C = 0; C < Doubled; ++C)
    Conn.ChannelTree.push_back(C / Base);
  Conn.TreeLog = Conn.PerRank;
  // The copy for fast sm90 NVLink across nodes (NCCL 2.23: minCompCap == 90).
  if (Options.MinSm == 90 && Conn.NNodes > 1 && Ring.BwIntra > 45.0f && Doubled < 16)
    copyChannels(Conn, 2 * Doubled);
  // NCCL_MAX_NCHANNELS keeps the first channels, NCCL_MIN_NCHANNELS repeats them.
  if (Conn.NChannels > Options.MaxChannels) {
    Conn.NChannels = Options.MaxChannels;
    Conn.ChannelTree.resize(Conn.NChannels);
    for (std::vector<RankChannel> &Channels : Conn.PerRank)
      Channels.resize(Conn.NChannels);
  }
  copyChannels(Conn, Options.MinChannels);

  // ncclBuildRings: walk each ring from rank 0; it must visit every rank.
  for (int C = 0; C < Conn.NChannels; ++C) {
    std::vector<int> &Order = Conn.Rings.emplace_back();
    for (int R = 0; Order.size() < static_cast<size_t>(Conn.NRanks);) {
      CCLC_ASSERT(R >= 0 && Conn.PerRank[R][C].RingIndex == -1,
                  "ring is broken or visits a rank twice");
      Conn.PerRank[R][C].RingIndex = static_cast<int>(Order.size());
      Order.push_back(R);
      R = Conn.PerRank[R][C].RingNext;
    }
    CCLC_ASSERT(Conn.PerRank[Order.back()][C].RingNext == 0, "ring does not close at rank 0");
  }
  return Conn;
}

void printConnection(const Connection &Conn, std::ostream &OS) {
  for (int C = 0; C < Conn.NChannels; ++C)
    OS << ringLine(format("Channel %02d/%02d :", C, Conn.NChannels), Conn.Rings[C]) << '\n';
  for (int R = 0; R < Conn.NRanks; ++R) {
    const std::vector<RankChannel> &Channels = Conn.PerRank[R];
    // connectTrees prints each search channel's pair of trees together.
    for (int C = 0; C < Conn.NSearchChannels; ++C)
      for (int Channel : {C, C + Conn.NSearchChannels}) {
        const RankChannel &L = Conn.TreeLog[R][Channel];
        OS << format("Tree %d : %d -> %d -> %d/%d/%d", Channel, L.TreeUp, R, L.TreeDown[0],
                     L.TreeDown[1], L.TreeDown[2])
           << '\n';
      }
    std::string Trees;
    for (int C = 0; C < Conn.NChannels; ++C) {
      const RankChannel &L = Channels[C];
      OS << format("Ring %02d : %d -> %d -> %d", C, L.RingPrev, R, L.RingNext) << '\n';
      Trees += format(" [%d] %d/%d/%d->%d->%d", C, L.TreeDown[0], L.TreeDown[1], L.TreeDown[2], R,
                      L.TreeUp);
    }
    // NCCL builds the summary in a 1024-byte buffer that keeps 1022 of them.
    OS << "Trees" << Trees.substr(0, 1022) << '\n';
  }
}

nlohmann::json connectionToJson(const Connection &Conn) {
  nlohmann::json Channels = nlohmann::json::array();
  for (int C = 0; C < Conn.NChannels; ++C)
    Channels.push_back({{"ring", Conn.Rings[C]}, {"tree", Conn.ChannelTree[C]}});
  nlohmann::json Ranks = nlohmann::json::array();
  for (int R = 0; R < Conn.NRanks; ++R) {
    nlohmann::json PerChannel = nlohmann::json::array();
    for (const RankChannel &L : Conn.PerRank[R])
      PerChannel.push_back({{"ringPrev", L.RingPrev},
                            {"ringNext", L.RingNext},
                            {"ringIndex", L.RingIndex},
                            {"treeUp", L.TreeUp},
                            {"treeDown", L.TreeDown}});
    Ranks.push_back({{"rank", R},
                     {"node", Conn.nodeOf(R)},
                     {"localRank", Conn.localRankOf(R)},
                     {"channels", std::move(PerChannel)}});
  }
  return {{"nRanks", Conn.NRanks},
          {"nNodes", Conn.NNodes},
          {"localRanks", Conn.NLocalRanks},
          {"nChannels", Conn.NChannels},
          {"searchChannels", Conn.NSearchChannels},
          {"treeDepth", Conn.TreeDepth},
          {"channels", std::move(Channels)},
          {"ranks", std::move(Ranks)}};
}

} // namespace cclc::topo
