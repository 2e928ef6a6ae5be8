//===- Search.cpp - Channel search over a System --------------------------===//

#include "compiler/topology/Search.h"
#include "compiler/topology/Format.h"
#include "compiler/topology/Paths.h"
#include "plan/Assert.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <optional>
#include <ostream>

namespace cclc::topo {

namespace {

/// Budgets in search steps (NCCL's "timeouts", which count steps too).
constexpr int64_t GlobalBudget = 1 << 19;
constexpr int Budget = 1 << 14;
constexpr int TreeBudget = 1 << 14;
constexpr int SameChannelsBudget = 1 << 8;
constexpr int PciOrderBudget = 1 << 10;

const std::vector<float> SpeedsIntra = {40.0, 30.0, 20.0, 18.0, 15.0, 12.0, 10.0,
                                        9.0,  7.0,  6.0,  5.0,  4.0,  3.0};
const std::vector<float> SpeedsInter = {48.0, 30.0, 28.0, 24.0, 20.0, 18.0, 15.0,
                                        12.0, 10.0, 9.0,  7.0,  6.0,  5.0,  4.0,
                                        3.0,  2.4,  1.2,  0.24, 0.12};
const std::vector<float> Sm90SpeedsIntra = {60.0, 50.0, 40.0, 30.0, 24.0, 20.0,
                                            15.0, 12.0, 11.0, 6.0,  3.0};
const std::vector<float> Sm90SpeedsInter = {48.0, 45.0, 42.0, 40.0, 30.0, 24.0,
                                            22.0, 20.0, 17.5, 15.0, 12.0, 6.0,
                                            3.0,  2.4,  1.2,  0.24, 0.12};

enum class Order { Search, Pci, Replay };

/// Whether a channel may leave a node through another NIC than it entered
/// by: NCCL_CROSS_NIC's values 0, 1 and 2.
enum class CrossNicPolicy { Never = 0, Always = 1, OddChannels = 2 };

/// The search state of one graph (NCCL's ncclTopoGraph while searching):
/// flat arrays, copied whenever a better solution is saved.
struct State {
  Pattern Pat = Pattern::Ring;
  CrossNicPolicy CrossNic = CrossNicPolicy::Never;
  int MinChannels = 1;
  int MaxChannels = 1;
  int NChannels = 0;
  float BwIntra = 0;
  float BwInter = 0;
  float LatencyInter = 0;
  PathType TypeIntra = PathType::LOC;
  PathType TypeInter = PathType::LOC;
  int SameChannels = 1;
  int NHops = 0;
  std::vector<int> Intra;     ///< MaxChannels x NumGpus ranks.
  std::vector<int64_t> Inter; ///< MaxChannels x 2 NET ids.
};

PathType nextType(PathType T) { return static_cast<PathType>(static_cast<int>(T) + 1); }

/// float -> int as NCCL's int fields truncate.
int truncated(float V) { return static_cast<int>(V); }

/// std::round (halves away from zero), bit for bit on every float, without
/// the library call: the search rounds the bandwidth left on every link it
/// reserves or releases, several times per step. Below 2^23 the truncation
/// through int32 is exact and so is the fraction X - T.
float roundHalfAway(float X) {
  if (!(std::fabs(X) < 8388608.0f))
    return X; // Integral already, or not a number.
  float T = static_cast<float>(static_cast<int32_t>(X));
  if (std::fabs(X - T) >= 0.5f)
    T += X < 0 ? -1.0f : 1.0f;
  return std::copysign(T, X);
}

/// One hop of a path as the search follows it: the link, what it charges and,
/// for pre-Volta GPUs and POWER NVLink, the reverse link it also charges.
struct SearchHop {
  /// What the reverse link is charged: nothing, an eighth of the forward
  /// bandwidth (into a pre-Volta GPU from a NIC or switch), or all of it
  /// (NVLink into a POWER CPU).
  enum class Back : uint8_t { None, Eighth, Full };
  Link *Forward = nullptr;
  Link *Reverse = nullptr;
  bool Pci = false;
  Back Charge = Back::None;
};

/// A path between two nodes the search moves between (GPUs, NETs, the
/// NVSwitch), resolved to the links it reserves bandwidth on.
struct SearchPath {
  std::vector<SearchHop> Hops;
  PathType Type = PathType::DIS;
  PathType ReverseType = PathType::DIS; ///< The type of the path back.
  float Bw = 0;
  /// What NCCL's GPU scores read: the hops and the bandwidth as an int.
  int Count = 0;
  int ScoreBw = 0;
  /// GPU-to-GPU traffic through an Intel root complex costs 20% more PCI
  /// bandwidth.
  bool IntelPci = false;
  int count() const { return Count; }
};

/// Pairs of GPUs in NCCL's preference order (ncclGpuScore).
struct GpuScore {
  int G;
  int StartIndex;
  int IntraHops;
  int IntraBw;
  int InterHops;
  int InterPciBw;
  int InterBw;
};

class Searcher {
public:
  explicit Searcher(System &Sys);

  void compute(TopoGraph &Graph);

private:
  NodeRef gpu(int G) const { return {NodeType::Gpu, G}; }
  NodeRef net(int N) const { return {NodeType::Net, N}; }

  int followPath(const SearchPath &P, int MaxSteps, float Bw);
  SearchPath resolvePath(NodeRef From, NodeRef To) const;
  int endpoint(NodeRef Ref) const { return EndpointBase[static_cast<int>(Ref.Type)] + Ref.Index; }
  const SearchPath &path(NodeRef From, NodeRef To) const {
    return Paths[endpoint(From) * NumEndpoints + endpoint(To)];
  }
  bool followPathTo(State &G, std::optional<NodeRef> From, NodeRef To, float Mult);
  const std::vector<int> &selectNets(PathType TypeInter, int Gpu);
  /// The GPUs to try after Gpu, in NCCL's order, into Next (a buffer of
  /// this channel and step, so that deeper steps do not overwrite it).
  void nextGpus(State &G, int Gpu, int SortNet, std::vector<int> &Next);
  int gpuPciBw(int G) const;
  int netIndex(int64_t Id) const;
  int gpuIndexOfRank(int Rank) const {
    return Rank >= 0 && Rank < static_cast<int>(GpuOfRank.size()) ? GpuOfRank[Rank] : -1;
  }
  int replayGpu(const State &G, int Step) const;
  bool better(const State &G, const State &Ref) const;

  void searchRec(State &G, State &Save, int &Time);
  void searchRecNet(State &G, State &Save, int BackToNet, int BackToFirstRank, int &Time);
  void tryGpu(State &G, State &Save, int Step, int BackToNet, int BackToFirstRank, Order Ord,
              int &Time, std::optional<NodeRef> From, int Gpu);
  void searchRecGpu(State &G, State &Save, int Gpu, int Step, int BackToNet, int BackToFirstRank,
                    Order Ord, int &Time);
  void backToNet(State &G, State &Save, int Gpu, int Step, int BackToFirstRank, Order Ord,
                 int &Time);
  void tryNvls(State &G, State &Save, int Gpu, int &Time);
  void searchParams(Pattern Pat, int &BackToNet, int &BackToFirstRank) const;
  void dupChannels(State &G, int CcMin) const;
  void reserveNet(int N, float Bw);

  System &Sys;
  int NumGpus;
  int NumNets;
  /// selectNets results by [path type][GPU + 1]; paths do not change during a search.
  std::vector<std::vector<std::optional<std::vector<int>>>> NetLists;

  // What a search step looks up, gathered once: the graph's shape does not
  // change while a search reserves and releases bandwidth on its links.
  /// The paths between every two GPUs, NETs and NVSwitches, numbered GPUs
  /// first, then NETs, then NVSwitches.
  std::array<int, NumNodeTypes> EndpointBase{};
  int NumEndpoints = 0;
  std::vector<SearchPath> Paths;
  /// Per GPU, its PCI link and the remote's link back (null when it has none).
  std::vector<std::pair<const Link *, const Link *>> PciLinks;
  /// The ids of the NETs, and the GPU index of every rank (-1 when none).
  std::vector<int64_t> NetIds;
  std::vector<int> GpuOfRank;
  /// Buffers for the next GPUs, per channel and step, and for their scores.
  std::vector<std::vector<int>> NextBuffers;
  std::vector<GpuScore> Scores;
};

Searcher::Searcher(System &Sys)
    : Sys(Sys), NumGpus(Sys.count(NodeType::Gpu)), NumNets(Sys.count(NodeType::Net)) {
  const std::array<NodeType, 3> Endpoints = {NodeType::Gpu, NodeType::Net, NodeType::Nvs};
  for (NodeType T : Endpoints) {
    EndpointBase[static_cast<int>(T)] = NumEndpoints;
    NumEndpoints += Sys.count(T);
  }
  Paths.resize(static_cast<size_t>(NumEndpoints) * NumEndpoints);
  for (NodeType From : Endpoints)
    for (int I = 0; I < Sys.count(From); ++I)
      for (NodeType To : Endpoints)
        for (int J = 0; J < Sys.count(To); ++J)
          Paths[endpoint({From, I}) * NumEndpoints + endpoint({To, J})] =
              resolvePath({From, I}, {To, J});
  for (int G = 0; G < NumGpus; ++G) {
    // The narrower of both directions of the first PCI link counts.
    NodeRef Ref{NodeType::Gpu, G};
    std::pair<const Link *, const Link *> Pci{nullptr, nullptr};
    for (const Link &L : Sys.node(Ref).Links) {
      if (L.Type != LinkType::Pci || Pci.first)
        continue;
      for (const Link &B : Sys.node(L.Remote).Links)
        if (B.Remote == Ref) {
          Pci = {&L, &B};
          break;
        }
    }
    PciLinks.push_back(Pci);
  }
  for (const Node &Net : Sys.nodes(NodeType::Net))
    NetIds.push_back(Net.Id);
  for (const Node &Gpu : Sys.nodes(NodeType::Gpu))
    if (Gpu.Gpu.Rank >= 0) {
      if (Gpu.Gpu.Rank >= static_cast<int>(GpuOfRank.size()))
        GpuOfRank.resize(Gpu.Gpu.Rank + 1, -1);
      if (GpuOfRank[Gpu.Gpu.Rank] < 0)
        GpuOfRank[Gpu.Gpu.Rank] = static_cast<int>(&Gpu - Sys.nodes(NodeType::Gpu).data());
    }
  NextBuffers.resize(static_cast<size_t>(MaxChannels + 1) * (NumGpus + 1));
}

SearchPath Searcher::resolvePath(NodeRef From, NodeRef To) const {
  SearchPath Resolved;
  const std::vector<Path> &Row = Sys.node(From).Paths[static_cast<int>(To.Type)];
  const std::vector<Path> &Back = Sys.node(To).Paths[static_cast<int>(From.Type)];
  if (Row.empty() || Back.empty())
    return Resolved; // Not computed: the search never goes there.
  const Path &P = Row[To.Index];
  Resolved.Type = P.Type;
  Resolved.ReverseType = Back[From.Index].Type;
  Resolved.Bw = P.Bw;
  NodeRef At = From;
  for (const LinkRef &Hop : P.Hops) {
    CCLC_ASSERT(Hop.From == At, "a path's hops do not follow each other");
    Link &L = Sys.link(Hop);
    const Node &Rem = Sys.node(L.Remote);
    if (P.Type == PathType::PHB && From.Type == NodeType::Gpu && Rem.Type == NodeType::Cpu &&
        Rem.Cpu.Arch == CpuArch::X86 && Rem.Cpu.Vendor == CpuVendor::Intel)
      Resolved.IntelPci = true;
    SearchHop &H = Resolved.Hops.emplace_back();
    H.Forward = &L;
    H.Pci = L.Type == LinkType::Pci;
    if (Rem.Type == NodeType::Gpu && Rem.Gpu.Sm < 80 && From.Type != NodeType::Gpu)
      H.Charge = SearchHop::Back::Eighth;
    if (Rem.Type == NodeType::Cpu && Rem.Cpu.Arch == CpuArch::Power && L.Type == LinkType::Nvl)
      H.Charge = SearchHop::Back::Full;
    if (H.Charge != SearchHop::Back::None) {
      std::vector<Link> &Links = Sys.node(L.Remote).Links;
      auto Rev = std::find_if(Links.begin(), Links.end(), [&](const Link &B) {
        return B.Remote == At && B.Type == L.Type;
      });
      CCLC_ASSERT(Rev != Links.end(), "link without a reverse link");
      H.Reverse = &*Rev;
    }
    At = L.Remote;
  }
  Resolved.Count = static_cast<int>(Resolved.Hops.size());
  Resolved.ScoreBw = truncated(P.Bw);
  return Resolved;
}

int Searcher::followPath(const SearchPath &P, int MaxSteps, float Bw) {
  const float PciBw = P.IntelPci ? Bw * 6 / 5 : Bw;
  for (int Step = 0; Step < MaxSteps; ++Step) {
    const SearchHop &H = P.Hops[Step];
    Link &L = *H.Forward;
    float Fw = H.Pci ? PciBw : Bw;
    float RevBw = 0;
    if (H.Charge == SearchHop::Back::Eighth)
      RevBw += Fw / 8;
    else if (H.Charge == SearchHop::Back::Full)
      RevBw += Fw;
    if (L.Bw < Fw || (RevBw != 0 && H.Reverse->Bw < RevBw))
      return Step;
    L.Bw = roundHalfAway((L.Bw - Fw) * 1000) / 1000;
    if (RevBw != 0)
      H.Reverse->Bw = roundHalfAway((H.Reverse->Bw - RevBw) * 1000) / 1000;
  }
  return MaxSteps;
}

bool Searcher::followPathTo(State &G, std::optional<NodeRef> From, NodeRef To, float Mult) {
  if (!From)
    return true;
  const SearchPath &P = path(*From, To);
  bool Intra = (From->Type == NodeType::Gpu || From->Type == NodeType::Nvs) &&
               (To.Type == NodeType::Gpu || To.Type == NodeType::Nvs);
  float Bw = Intra ? G.BwIntra : G.BwInter;
  PathType Type = Intra ? G.TypeIntra : G.TypeInter;
  if (Mult > 0 && P.Type > Type)
    return false;
  if (Mult > 0 &&
      (G.Pat == Pattern::BalancedTree || G.Pat == Pattern::Tree || G.Pat == Pattern::SplitTree) &&
      P.ReverseType > Type)
    return false;
  Bw *= Mult;
  int Steps = followPath(P, P.count(), Bw);
  if (Steps < P.count()) {
    followPath(P, Steps, -Bw);
    return false;
  }
  G.NHops += static_cast<int>(Mult * static_cast<float>(P.count()));
  return true;
}

const std::vector<int> &Searcher::selectNets(PathType TypeInter, int Gpu) {
  if (NetLists.empty())
    NetLists.assign(static_cast<size_t>(PathType::DIS) + 1,
                    std::vector<std::optional<std::vector<int>>>(NumGpus + 1));
  std::optional<std::vector<int>> &Cached = NetLists[static_cast<int>(TypeInter)][Gpu + 1];
  if (Cached)
    return *Cached;
  std::vector<int> &Nets = Cached.emplace();
  auto Append = [&](int N) {
    if (std::find(Nets.begin(), Nets.end(), N) == Nets.end())
      Nets.push_back(N);
  };
  // First the NICs each GPU would use, channel after channel.
  for (int G = 0; G < NumGpus; ++G) {
    if (Gpu != -1 && Gpu != G)
      continue;
    std::vector<int> Local;
    for (int C = 0; C < MaxChannels; ++C) {
      int N = localNet(Sys, G, C);
      if (!Local.empty() && N == Local[0])
        break;
      Local.push_back(N);
    }
    for (int N : Local)
      Append(N);
  }
  // Then every other NIC no farther than TypeInter, closest first.
  for (int T = 0; T <= static_cast<int>(TypeInter); ++T)
    for (int G = 0; G < NumGpus; ++G) {
      if (Gpu != -1 && Gpu != G)
        continue;
      for (int N = 0; N < NumNets && N < MaxChannels; ++N)
        if (static_cast<int>(Sys.path(gpu(G), net(N)).Type) == T)
          Append(N);
    }
  return Nets;
}

/// The bandwidth of a GPU's PCI link, the narrower of both directions.
int Searcher::gpuPciBw(int G) const {
  auto [Out, Back] = PciLinks[G];
  return Out ? truncated(std::min(Out->Bw, Back->Bw)) : -1;
}

int Searcher::netIndex(int64_t Id) const {
  auto It = std::find(NetIds.begin(), NetIds.end(), Id);
  return It == NetIds.end() ? -1 : static_cast<int>(It - NetIds.begin());
}

void Searcher::nextGpus(State &G, int Gpu, int SortNet, std::vector<int> &Next) {
  const uint64_t Flag = 1ULL << G.NChannels;
  auto Candidate = [&](int Other) {
    return Other != Gpu && path(gpu(Gpu), gpu(Other)).count() != 0 &&
           !(Sys.nodes(NodeType::Gpu)[Other].Used & Flag);
  };
  Next.clear();
  if (Sys.count(NodeType::Nvs) > 0) {
    // NVSwitches prefer few peers per GPU: only the neighbours are tried,
    // NCCL moving each to the front of its sorted list in turn, so the one
    // named last comes first whatever the scores.
    int Prev = (Gpu - 1 + NumGpus) % NumGpus, After = (Gpu + 1) % NumGpus;
    std::array<int, 2> First{After, -1};
    int NumFirst = 1;
    if (G.Pat == Pattern::Ring)
      First = {After, Prev}, NumFirst = 2;
    else if (G.Pat == Pattern::SplitTree || G.Pat == Pattern::BalancedTree)
      First = {Prev, After}, NumFirst = 2;
    if (NumFirst == 2 && First[0] == First[1])
      NumFirst = 1;
    for (int I = 0; I < NumFirst; ++I)
      if (Candidate(First[I]))
        Next.insert(Next.begin(), First[I]);
    return;
  }
  const int Net = SortNet ? netIndex(G.Inter[G.NChannels * 2]) : -1;
  Scores.clear();
  for (int I = 1, Other = Gpu + 1; I < NumGpus; ++I, ++Other) {
    if (Other == NumGpus)
      Other = 0;
    if (!Candidate(Other))
      continue;
    const SearchPath &Intra = path(gpu(Gpu), gpu(Other));
    GpuScore S{Other, I, Intra.count(), Intra.ScoreBw, 0, 0, 0};
    if (SortNet) {
      const SearchPath &Inter = path(net(Net), gpu(Other));
      S.InterHops = Inter.count();
      S.InterPciBw = gpuPciBw(Other);
      S.InterBw = Inter.ScoreBw;
    }
    Scores.push_back(S);
  }
  std::sort(Scores.begin(), Scores.end(), [](const GpuScore &A, const GpuScore &B) {
    if (A.InterBw != B.InterBw)
      return A.InterBw > B.InterBw;
    if (A.InterPciBw != B.InterPciBw)
      return A.InterPciBw > B.InterPciBw;
    if (A.InterHops != B.InterHops)
      return A.InterHops < B.InterHops;
    if (A.IntraBw != B.IntraBw)
      return A.IntraBw > B.IntraBw;
    if (A.IntraHops != B.IntraHops)
      return A.IntraHops < B.IntraHops;
    return A.StartIndex < B.StartIndex;
  });
  bool SameIntra = std::all_of(Scores.begin(), Scores.end(), [&](const GpuScore &S) {
    return S.IntraBw == Scores[0].IntraBw && S.IntraHops == Scores[0].IntraHops;
  });
  // When leaving for the NIC next, equal GPUs are tried in reverse order.
  if (SortNet == -1 && SameIntra)
    for (auto It = Scores.rbegin(); It != Scores.rend(); ++It)
      Next.push_back(It->G);
  else
    for (const GpuScore &S : Scores)
      Next.push_back(S.G);
}

int Searcher::replayGpu(const State &G, int Step) const {
  int Rank = G.Intra[(G.NChannels - 1) * NumGpus + Step + 1];
  int Index = gpuIndexOfRank(Rank);
  CCLC_ASSERT(Index >= 0, "replayed channel names an unknown rank");
  return Index;
}

bool Searcher::better(const State &G, const State &Ref) const {
  if (G.NChannels < G.MinChannels)
    return false;
  if (G.Pat == Pattern::Nvls) // More heads pulling from the switch is better.
    return (G.NChannels > Ref.NChannels && G.NChannels <= NumGpus) ||
           G.NChannels * G.BwInter > Ref.NChannels * Ref.BwInter;
  if (G.NChannels * G.BwIntra != Ref.NChannels * Ref.BwIntra)
    return G.NChannels * G.BwIntra > Ref.NChannels * Ref.BwIntra;
  return G.Pat == Ref.Pat && G.CrossNic == Ref.CrossNic && G.NHops < Ref.NHops;
}

void Searcher::searchParams(Pattern Pat, int &BackToNet, int &BackToFirstRank) const {
  if (NumNets) {
    BackToNet = Pat == Pattern::Ring ? NumGpus - 1 : Pat == Pattern::SplitTree ? 1 : 0;
    BackToFirstRank = -1;
  } else {
    BackToNet = -1;
    BackToFirstRank = Pat == Pattern::Ring ? NumGpus - 1 : -1;
  }
}

void Searcher::tryGpu(State &G, State &Save, int Step, int BackToNet, int BackToFirstRank,
                      Order Ord, int &Time, std::optional<NodeRef> From, int Gpu) {
  if (!followPathTo(G, From, gpu(Gpu), 1))
    return;
  const uint64_t Flag = 1ULL << G.NChannels;
  Sys.nodes(NodeType::Gpu)[Gpu].Used ^= Flag;
  searchRecGpu(G, Save, Gpu, Step, BackToNet, BackToFirstRank, Ord, Time);
  Sys.nodes(NodeType::Gpu)[Gpu].Used ^= Flag;
  followPathTo(G, From, gpu(Gpu), -1);
}

void Searcher::tryNvls(State &G, State &Save, int Gpu, int &Time) {
  NodeRef Nvs{NodeType::Nvs, 0};
  // Enough bandwidth NVS->GPU for every GPU (twice for the head), then back.
  int D0 = 0;
  while (D0 < NumGpus && followPathTo(G, Nvs, gpu(D0), D0 == Gpu ? 2 : 1))
    ++D0;
  if (D0 == NumGpus) {
    int D1 = 0;
    while (D1 < NumGpus && followPathTo(G, gpu(D1), Nvs, D1 == Gpu ? 2 : 1))
      ++D1;
    if (D1 == NumGpus)
      searchRecGpu(G, Save, -1, NumGpus, -1, -1, Order::Search, Time);
    while (D1--)
      followPathTo(G, gpu(D1), Nvs, D1 == Gpu ? -2 : -1);
  }
  while (D0--)
    followPathTo(G, Nvs, gpu(D0), D0 == Gpu ? -2 : -1);
}

void Searcher::backToNet(State &G, State &Save, int Gpu, int Step, int BackToFirstRank, Order Ord,
                         int &Time) {
  int64_t StartId = G.Inter[G.NChannels * 2];
  const NetInfo &Start = Sys.nodes(NodeType::Net)[netIndex(StartId)].Net;
  for (int N : selectNets(G.TypeInter, Gpu)) {
    const Node &Net = Sys.nodes(NodeType::Net)[N];
    if (G.Pat == Pattern::Tree && Net.Id != StartId)
      continue; // Trees are symmetric.
    if (G.Pat == Pattern::Ring && G.CrossNic == CrossNicPolicy::OddChannels) {
      if ((G.NChannels & 1) && Net.Id != G.Inter[(G.NChannels - 1) * 2])
        continue;
    } else if (G.CrossNic == CrossNicPolicy::Never &&
               (Net.Net.Asic != Start.Asic || Net.Net.Port != Start.Port)) {
      continue;
    }
    // Balanced tree: half the NIC bandwidth on each of the first two GPUs.
    int NextBackToNet = -1;
    float SavedBwInter = G.BwInter;
    if (G.Pat == Pattern::BalancedTree) {
      if (Step == 0)
        NextBackToNet = 1;
      else if (Net.Id != G.Inter[G.NChannels * 2 + 1])
        continue;
      G.BwInter /= 2;
    }
    bool Ok = followPathTo(G, gpu(Gpu), net(N), 1);
    G.BwInter = SavedBwInter;
    if (!Ok)
      continue;
    G.Inter[G.NChannels * 2 + 1] = Net.Id;
    searchRecGpu(G, Save, Gpu, Step, NextBackToNet, BackToFirstRank, Ord, Time);
    if (G.Pat == Pattern::BalancedTree)
      G.BwInter /= 2;
    followPathTo(G, gpu(Gpu), net(N), -1);
    G.BwInter = SavedBwInter;
  }
}

void Searcher::searchRecGpu(State &G, State &Save, int Gpu, int Step, int BackToNet,
                            int BackToFirstRank, Order Ord, int &Time) {
  if (Time <= 0)
    return;
  --Time;
  if (Step == NumGpus) {
    // A channel is complete: keep it if better, then look for one more.
    ++G.NChannels;
    if (better(G, Save)) {
      Save = G;
      if (G.NChannels == G.MaxChannels)
        Time = -1;
    }
    if (G.NChannels < G.MaxChannels)
      searchRec(G, Save, Time);
    --G.NChannels;
    return;
  }
  G.Intra[G.NChannels * NumGpus + Step] = Sys.nodes(NodeType::Gpu)[Gpu].Gpu.Rank;
  if (Step == BackToNet) {
    if (NumNets)
      backToNet(G, Save, Gpu, Step, BackToFirstRank, Ord, Time);
  } else if (G.Pat == Pattern::Nvls) {
    tryNvls(G, Save, Gpu, Time);
  } else if (Step < NumGpus - 1) {
    if (Ord == Order::Pci) {
      tryGpu(G, Save, Step + 1, BackToNet, BackToFirstRank, Ord, Time, gpu(Gpu), Step + 1);
    } else if (Ord == Order::Replay) {
      tryGpu(G, Save, Step + 1, BackToNet, BackToFirstRank, Ord, Time, gpu(Gpu),
             replayGpu(G, Step));
    } else {
      std::vector<int> &Next = NextBuffers[G.NChannels * (NumGpus + 1) + Step];
      nextGpus(G, Gpu, BackToNet == -1 ? 0 : BackToNet == Step + 1 ? 1 : -1, Next);
      for (int N : Next)
        tryGpu(G, Save, Step + 1, BackToNet, BackToFirstRank, Ord, Time, gpu(Gpu), N);
    }
  } else if (Step == BackToFirstRank) {
    // Close the ring.
    int First = gpuIndexOfRank(G.Intra[G.NChannels * NumGpus]);
    if (followPathTo(G, gpu(Gpu), gpu(First), 1)) {
      searchRecGpu(G, Save, First, Step + 1, BackToNet, -1, Ord, Time);
      followPathTo(G, gpu(Gpu), gpu(First), -1);
    }
  } else {
    searchRecGpu(G, Save, Gpu, NumGpus, -1, -1, Ord, Time);
  }
}

void Searcher::reserveNet(int N, float Bw) {
  // Ports of the same NIC share its bandwidth.
  const NetInfo Net = Sys.nodes(NodeType::Net)[N].Net;
  for (Node &Other : Sys.nodes(NodeType::Net))
    if (Other.Net.Asic == Net.Asic && Other.Net.Port == Net.Port)
      Other.Net.Bw -= Bw;
}

void Searcher::searchRecNet(State &G, State &Save, int BackToNet, int BackToFirstRank,
                            int &Time) {
  const int Bw = truncated(G.BwInter); // NCCL keeps this one as an int.
  // selectNets' lists stay where they are once made.
  const std::vector<int> &Nets = selectNets(G.TypeInter, -1);
  const int NetCount = static_cast<int>(Nets.size());
  bool Found = false;
  for (int I = 0; I < NetCount; ++I) {
    if (G.Pat == Pattern::Nvls && Found)
      break;
    int N = Nets[(G.NChannels + I) % NetCount];
    const Node &Net = Sys.nodes(NodeType::Net)[N];
    if (Net.Net.Bw < static_cast<float>(Bw))
      continue;
    if (G.Pat == Pattern::Ring && G.CrossNic == CrossNicPolicy::OddChannels &&
        (G.NChannels & 1) && Net.Id != G.Inter[(G.NChannels - 1) * 2 + 1])
      continue;
    G.Inter[G.NChannels * 2] = Net.Id;
    G.LatencyInter = Net.Net.Latency;
    reserveNet(N, static_cast<float>(Bw));
    if (G.Pat == Pattern::Nvls) {
      // NVLS only looks for NIC:GPU pairs to place the heads.
      int Local = G.NChannels < NetCount ? localGpu(Sys, N) : -1;
      bool Duplicate = false;
      for (int C = 0; C < G.NChannels && Local >= 0; ++C)
        Duplicate |= G.Intra[C * NumGpus] == Sys.nodes(NodeType::Gpu)[Local].Gpu.Rank;
      if (Local >= 0 && !Duplicate) {
        tryGpu(G, Save, 0, BackToNet, BackToFirstRank, Order::Search, Time, net(N), Local);
        Found = true;
      }
    } else {
      if (G.NChannels > 0)
        tryGpu(G, Save, 0, BackToNet, BackToFirstRank, Order::Replay, Time, net(N),
               replayGpu(G, -1));
      if (G.NChannels == 0 || G.SameChannels == 0) {
        if (G.NChannels == 0 && Sys.count(NodeType::Nvs) == 0) {
          // The PCI order first, as a cheap reference that does not use the budget.
          int T = PciOrderBudget;
          tryGpu(G, Save, 0, BackToNet, BackToFirstRank, Order::Pci, T, net(N), 0);
          if (T == -1)
            Time = -1;
        }
        // Then the GPUs closest to the NIC.
        const std::vector<Path> &Paths = Net.Paths[static_cast<int>(NodeType::Gpu)];
        float MaxBw = 0;
        int MinHops = 0xfffffff;
        for (const Path &P : Paths) {
          if (P.Bw > MaxBw) {
            MaxBw = P.Bw;
            MinHops = P.count();
          } else if (P.Bw == MaxBw && P.count() > 0 && P.count() < MinHops) {
            MinHops = P.count();
          }
        }
        if (MaxBw >= static_cast<float>(Bw))
          for (int J = 0; J < NumGpus; ++J) {
            int Gpu = (G.NChannels + J) % NumGpus;
            if (Paths[Gpu].Bw == MaxBw && Paths[Gpu].count() == MinHops)
              tryGpu(G, Save, 0, BackToNet, BackToFirstRank, Order::Search, Time, net(N), Gpu);
          }
      }
    }
    reserveNet(N, -static_cast<float>(Bw));
  }
}

void Searcher::searchRec(State &G, State &Save, int &Time) {
  int BackToNet, BackToFirstRank;
  searchParams(G.Pat, BackToNet, BackToFirstRank);
  if (NumNets) {
    searchRecNet(G, Save, BackToNet, BackToFirstRank, Time);
    return;
  }
  if (G.Pat == Pattern::Nvls) {
    tryGpu(G, Save, 0, BackToNet, BackToFirstRank, Order::Search, Time, std::nullopt,
           G.NChannels);
    return;
  }
  if (G.NChannels == 0)
    tryGpu(G, Save, 0, BackToNet, BackToFirstRank, Order::Pci, Time, std::nullopt, 0);
  else
    tryGpu(G, Save, 0, BackToNet, BackToFirstRank, Order::Replay, Time, std::nullopt,
           replayGpu(G, -1));
  if (G.SameChannels == 0 || G.NChannels == 0)
    for (int Gpu = 0; Gpu < NumGpus; ++Gpu)
      tryGpu(G, Save, 0, BackToNet, BackToFirstRank, Order::Search, Time, std::nullopt, Gpu);
}

void Searcher::dupChannels(State &G, int CcMin) const {
  if (G.NChannels == 0 || G.Pat == Pattern::Nvls || G.BwIntra < 25.0f)
    return;
  if (CcMin > 80 && G.BwIntra < 50.0f && G.NChannels > 4)
    return;
  int Dup = std::min(G.NChannels * 2, G.MaxChannels);
  std::copy_n(G.Intra.begin(), (Dup - G.NChannels) * NumGpus,
              G.Intra.begin() + G.NChannels * NumGpus);
  std::copy_n(G.Inter.begin(), (Dup - G.NChannels) * 2, G.Inter.begin() + G.NChannels * 2);
  float Div = static_cast<float>((Dup + G.NChannels - 1) / G.NChannels);
  G.BwIntra /= Div;
  G.BwInter /= Div;
  G.NChannels = Dup;
}

void Searcher::compute(TopoGraph &Out) {
  State Graph;
  Graph.Pat = Out.Pat;
  Graph.MinChannels = Out.MinChannels;
  Graph.MaxChannels = std::min(Out.MaxChannels, MaxChannels);
  Graph.Intra.assign(static_cast<size_t>(MaxChannels) * NumGpus, 0);
  Graph.Inter.assign(static_cast<size_t>(MaxChannels) * 2, 0);
  const Node &Cpu0 = Sys.nodes(NodeType::Cpu).front();
  // NCCL_CROSS_NIC: 0 never, 1 always, 2 (default) tried after the same-NIC
  // search; it only matters with several NICs.
  const CrossNicPolicy CrossNic = NumNets > 1 && (Graph.Pat == Pattern::Ring ||
                                                  Graph.Pat == Pattern::BalancedTree ||
                                                  Graph.Pat == Pattern::SplitTree)
                                      ? static_cast<CrossNicPolicy>(Sys.Env.CrossNic.Value)
                                      : CrossNicPolicy::Never;
  const CrossNicPolicy FirstCrossNic =
      CrossNic == CrossNicPolicy::Always ? CrossNicPolicy::Always : CrossNicPolicy::Never;
  Graph.CrossNic = FirstCrossNic;
  Graph.TypeIntra = NumGpus == 1 ? PathType::LOC : PathType::NVL;
  Graph.TypeInter = PathType::PIX;
  const int TrySameChannels = Graph.Pat == Pattern::Nvls ? 0 : 1;
  Graph.SameChannels = TrySameChannels;
  const int CcMin = Sys.minSm();

  auto Finish = [&] {
    Out.Pat = Graph.Pat;
    Out.CrossNic = Graph.CrossNic != CrossNicPolicy::Never;
    Out.MinChannels = Graph.MinChannels;
    Out.MaxChannels = Graph.MaxChannels;
    Out.NChannels = Graph.NChannels;
    Out.BwIntra = Graph.BwIntra;
    Out.BwInter = Graph.BwInter;
    Out.LatencyInter = Graph.LatencyInter;
    Out.TypeIntra = Graph.TypeIntra;
    Out.TypeInter = Graph.TypeInter;
    Out.SameChannels = Graph.SameChannels != 0;
    Out.NHops = Graph.NHops;
    Out.Intra.clear();
    Out.Inter.clear();
    for (int C = 0; C < Graph.NChannels; ++C) {
      auto Begin = Graph.Intra.begin() + C * NumGpus;
      Out.Intra.emplace_back(Begin, Begin + NumGpus);
      if (NumNets)
        Out.Inter.push_back({Graph.Inter[C * 2], Graph.Inter[C * 2 + 1]});
    }
  };

  if (Graph.Pat == Pattern::Nvls && (Sys.count(NodeType::Nvs) == 0 || CcMin < 90))
    return Finish();
  if (Graph.Pat == Pattern::Nvls)
    Graph.MaxChannels = NumGpus;
  if (NumGpus == 1 && Graph.Pat != Pattern::Ring)
    Graph.Pat = Pattern::Tree;
  if (NumNets == 0 && Graph.Pat == Pattern::Nvls)
    Graph.MinChannels = Graph.MaxChannels = NumGpus; // Pull evenly from all GPUs.

  State Tmp = Graph;
  const std::vector<float> &Speeds = NumNets == 0 ? (CcMin >= 90 ? Sm90SpeedsIntra : SpeedsIntra)
                                                  : (CcMin >= 90 ? Sm90SpeedsInter : SpeedsInter);
  const int NumSpeeds = static_cast<int>(Speeds.size());
  int Pass = 1;
  int SpeedIndex = 0;
  float MaxBw = Sys.MaxBw;
  float TotalBw = Sys.TotalBw;
  if (NumGpus > 1 && Graph.Pat != Pattern::Ring)
    TotalBw *= static_cast<float>(NumGpus * 1.0 / (NumGpus - 1));
  while ((Speeds[SpeedIndex] > MaxBw || Speeds[SpeedIndex] * Graph.MinChannels > TotalBw) &&
         SpeedIndex < NumSpeeds - 1)
    ++SpeedIndex;
  Tmp.BwIntra = Tmp.BwInter = Speeds[SpeedIndex];
  int64_t GlobalLeft = GlobalBudget;

  for (;;) {
    int Time = Tmp.SameChannels ? SameChannelsBudget
               : Tmp.Pat == Pattern::Tree ? TreeBudget
                                          : Budget;
    Tmp.NChannels = 0;
    GlobalLeft -= Time;
    searchRec(Tmp, Graph, Time);
    bool Done = Time == -1 || Graph.NChannels * Graph.BwInter >= Sys.TotalBw;
    if (!Done && Pass == 1) {
      // Pass 1: relax one constraint at a time until something is found.
      if (Tmp.SameChannels == 1 &&
          !(Cpu0.Cpu.Arch == CpuArch::X86 && Cpu0.Cpu.Vendor == CpuVendor::Amd &&
            Tmp.TypeIntra == PathType::SYS)) {
        Tmp.SameChannels = 0;
        continue;
      }
      Tmp.SameChannels = TrySameChannels;
      GlobalLeft += Time;
      if (!(GlobalLeft < 0 && Graph.NChannels)) {
        if (CcMin >= 90 && Tmp.Pat == Pattern::BalancedTree) {
          Tmp.Pat = Pattern::Tree; // A simpler tree.
          continue;
        }
        Tmp.Pat = Graph.Pat;
        PathType MaxTypeIntra = NumNets > 0 ? Tmp.TypeInter : PathType::SYS;
        if (Tmp.TypeIntra < MaxTypeIntra &&
            (Graph.NChannels == 0 || Tmp.TypeIntra < Graph.TypeIntra)) {
          Tmp.TypeIntra = nextType(Tmp.TypeIntra);
          continue;
        }
        Tmp.TypeIntra = NumGpus == 1 ? PathType::LOC : PathType::NVL;
        if (NumNets > 0 && Tmp.TypeInter < PathType::SYS &&
            (Graph.NChannels == 0 || Tmp.TypeInter < Graph.TypeInter ||
             Tmp.TypeInter < PathType::PXN)) {
          Tmp.TypeInter = nextType(Tmp.TypeInter);
          continue;
        }
        Tmp.TypeInter = PathType::PIX;
        if (CrossNic == CrossNicPolicy::OddChannels && Tmp.CrossNic == CrossNicPolicy::Never &&
            (Graph.Pat == Pattern::Ring || Graph.Pat == Pattern::BalancedTree)) {
          Tmp.CrossNic = CrossNicPolicy::OddChannels;
          continue;
        }
        Tmp.CrossNic = FirstCrossNic;
        if (SpeedIndex < NumSpeeds - 1 &&
            (Graph.NChannels == 0 || Speeds[SpeedIndex + 1] / Graph.BwInter > .49f)) {
          Tmp.BwInter = Tmp.BwIntra = Speeds[++SpeedIndex];
          continue;
        }
        SpeedIndex = 0;
        while (Speeds[SpeedIndex] > MaxBw && SpeedIndex < NumSpeeds - 1)
          ++SpeedIndex;
        Tmp.BwIntra = Tmp.BwInter = Speeds[SpeedIndex];
      }
    }
    if (Pass == 1) {
      // A solution: duplicate its channels, then try it at higher speeds.
      Time = -1;
      dupChannels(Graph, CcMin);
      Tmp = Graph;
      SpeedIndex = 0;
      while (Speeds[SpeedIndex] > Graph.BwInter && SpeedIndex < NumSpeeds - 1)
        ++SpeedIndex;
      Tmp.BwIntra = Tmp.BwInter = Speeds[SpeedIndex];
      Tmp.MinChannels = Graph.NChannels;
      Pass = 2;
    }
    if (Time != 0 && SpeedIndex > 0) {
      if (Graph.Pat == Pattern::Ring) {
        Tmp.BwIntra = Tmp.BwInter = Speeds[--SpeedIndex];
        continue;
      }
      if (Graph.Pat == Pattern::Nvls && Tmp.BwInter == Graph.BwInter &&
          Tmp.BwInter < Tmp.BwIntra * 2) {
        Tmp.MinChannels = Tmp.MaxChannels = Graph.NChannels;
        Tmp.BwInter = Speeds[--SpeedIndex];
        continue;
      }
      if (Tmp.BwIntra == Graph.BwIntra && Tmp.BwIntra < Tmp.BwInter * 2) {
        Tmp.BwIntra = Speeds[--SpeedIndex]; // Trees across nodes: raise the intra speed.
        continue;
      }
    }
    break;
  }

  if (Graph.NChannels == 0 && Graph.Pat != Pattern::Nvls) {
    // Nothing fits: NCCL falls back to the GPUs in order, at a token speed.
    for (int G = 0; G < NumGpus; ++G)
      Graph.Intra[G] = Sys.nodes(NodeType::Gpu)[G].Gpu.Rank;
    Graph.Inter[0] = Graph.Inter[1] = 0;
    Graph.BwIntra = Graph.BwInter = 0.1f;
    Graph.TypeIntra = Graph.TypeInter = PathType::SYS;
    Graph.NChannels = 1;
  }
  Finish();
}

} // namespace

void searchInit(System &Sys) {
  Sys.MaxBw = Sys.TotalBw = 0;
  const bool Inter = Sys.count(NodeType::Net) > 0;
  if (!Inter && Sys.count(NodeType::Gpu) == 1) {
    Sys.MaxBw = Sys.TotalBw = LocBw;
    return;
  }
  for (const Node &Gpu : Sys.nodes(NodeType::Gpu)) {
    // Widest path to another GPU (or to a NIC across nodes) ...
    for (const Path &P : Gpu.Paths[static_cast<int>(Inter ? NodeType::Net : NodeType::Gpu)])
      if (P.count() != 0)
        Sys.MaxBw = std::max(Sys.MaxBw, P.Bw);
    // ... and the most a GPU can push: all its NVLinks, or its PCI link.
    float NvlBw = 0, PciBw = 0;
    for (const Link &L : Gpu.Links) {
      if (L.Type == LinkType::Nvl)
        NvlBw += L.Bw;
      if (L.Type == LinkType::Pci)
        PciBw = L.Bw;
    }
    Sys.TotalBw = std::max(Sys.TotalBw, std::max(PciBw, NvlBw));
  }
}

void prepareSystem(System &Sys, int NumNodes) {
  computePaths(Sys);
  trimSystem(Sys, NumNodes);
  computePaths(Sys);
  searchInit(Sys);
}

void computeGraph(System &Sys, TopoGraph &Graph) { Searcher(Sys).compute(Graph); }

std::vector<TopoGraph> searchAll(const System &Sys, int NumNodes) {
  System Work = Sys;
  prepareSystem(Work, NumNodes);
  std::vector<TopoGraph> Graphs(2);
  TopoGraph &Ring = Graphs[0];
  Ring.Id = 0;
  Ring.Pat = Pattern::Ring;
  Ring.MinChannels = 1;
  Ring.MaxChannels = MaxChannels / 2;
  computeGraph(Work, Ring);
  TopoGraph &Tree = Graphs[1];
  Tree.Id = 1;
  Tree.Pat = Pattern::BalancedTree;
  Tree.MinChannels = Tree.MaxChannels = Ring.NChannels;
  computeGraph(Work, Tree);
  if (Work.count(NodeType::Nvs) > 0 && Work.minSm() >= 90) {
    TopoGraph Nvls;
    Nvls.Id = 3;
    Nvls.Pat = Pattern::Nvls;
    Nvls.MinChannels = 1;
    Nvls.MaxChannels = MaxChannels;
    computeGraph(Work, Nvls);
    Graphs.push_back(std::move(Nvls));
  }
  return Graphs;
}

std::string graphSummary(const TopoGraph &Graph) {
  return format("Pattern %d, crossNic %d, nChannels %d, bw %f/%f, type %s/%s, sameChannels %d",
                static_cast<int>(Graph.Pat), Graph.CrossNic ? 1 : 0, Graph.NChannels,
                static_cast<double>(Graph.BwIntra), static_cast<double>(Graph.BwInter),
                std::string(pathTypeName(Graph.TypeIntra)).c_str(),
                std::string(pathTypeName(Graph.TypeInter)).c_str(), Graph.SameChannels ? 1 : 0);
}

void printGraph(const TopoGraph &Graph, std::ostream &OS) {
  OS << graphSummary(Graph) << '\n';
  auto NetName = [](int64_t Id) { return " " + topoIdName("NET", Id); };
  for (size_t C = 0; C < Graph.Intra.size(); ++C) {
    OS << format("%2d :", static_cast<int>(C));
    if (C < Graph.Inter.size())
      OS << NetName(Graph.Inter[C][0]);
    for (int Rank : Graph.Intra[C])
      OS << " GPU/" << Rank;
    if (C < Graph.Inter.size())
      OS << NetName(Graph.Inter[C][1]);
    OS << '\n';
  }
}

} // namespace cclc::topo
