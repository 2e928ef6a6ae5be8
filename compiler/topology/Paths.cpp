//===- Paths.cpp - Paths between the nodes of a System --------------------===//

#include "compiler/topology/Paths.h"
#include "plan/Assert.h"

#include <algorithm>

namespace cclc::topo {

namespace {

PathType pathTypeOf(LinkType Type) { return static_cast<PathType>(static_cast<int>(Type)); }

std::vector<Path> &pathsTo(System &Sys, NodeRef From, NodeType To) {
  return Sys.node(From).Paths[static_cast<int>(To)];
}

Path &pathTo(System &Sys, NodeRef From, NodeRef To) {
  return pathsTo(Sys, From, To.Type)[To.Index];
}

/// NCCL's ncclTopoSetPaths: breadth first from Base, every node learns its
/// path to Base. A path replaces a known one only when it is no longer and
/// strictly wider, and GPUs relay traffic only as one NVLink hop (NVB).
void setPaths(System &Sys, NodeRef Base) {
  for (int T = 0; T < NumNodeTypes; ++T)
    for (Node &N : Sys.nodes(static_cast<NodeType>(T)))
      if (N.Paths[static_cast<int>(Base.Type)].empty())
        N.Paths[static_cast<int>(Base.Type)].resize(Sys.count(Base.Type));
  Path &BasePath = pathTo(Sys, Base, Base);
  BasePath.Hops.clear();
  BasePath.Bw = LocBw;
  BasePath.Type = PathType::LOC;

  std::vector<NodeRef> Frontier{Base}, Next;
  while (!Frontier.empty()) {
    Next.clear();
    for (NodeRef From : Frontier) {
      const Node &N = Sys.node(From);
      for (const Link &L : N.Links) {
        const Path &Here = pathTo(Sys, From, Base);
        if (!(From == Base) && N.Type == NodeType::Gpu &&
            (L.Type != LinkType::Nvl || L.Remote.Type != NodeType::Gpu || Here.count() > 1))
          continue;
        Path &There = pathTo(Sys, L.Remote, Base);
        float Bw = std::min(Here.Bw, L.Bw);
        if (!((There.Bw == 0 || There.count() > Here.count()) && There.Bw < Bw))
          continue;
        const std::vector<Link> &Back = Sys.node(L.Remote).Links;
        auto Rev = std::find_if(Back.begin(), Back.end(), [&](const Link &B) {
          return B.Remote == From && B.Type == L.Type;
        });
        CCLC_ASSERT(Rev != Back.end(), "link without a reverse link");
        std::vector<LinkRef> Hops;
        Hops.reserve(Here.Hops.size() + 1);
        Hops.push_back({L.Remote, static_cast<int>(Rev - Back.begin())});
        Hops.insert(Hops.end(), Here.Hops.begin(), Here.Hops.end());
        There.Hops = std::move(Hops);
        There.Bw = Bw;
        // The path type starts as the link type; NET links do not count
        // (only the NIC->GPU part matters).
        PathType Type = L.Type == LinkType::Net ? PathType::LOC : pathTypeOf(L.Type);
        if (N.Type == NodeType::Pci && L.Remote.Type == NodeType::Pci)
          Type = PathType::PXB;
        if (L.Type == LinkType::Pci && (N.Type == NodeType::Cpu || L.Remote.Type == NodeType::Cpu))
          Type = PathType::PHB;
        if (N.Type == NodeType::Gpu && Here.Type == PathType::NVL && Type == PathType::NVL &&
            There.count() > 1)
          Type = PathType::NVB;
        There.Type = std::max(Here.Type, Type);
        if (std::find(Next.begin(), Next.end(), L.Remote) == Next.end())
          Next.push_back(L.Remote);
      }
    }
    std::swap(Frontier, Next);
  }
}

/// NCCL's mergePathType: PCI to a CPU that the GPU reaches over C2C is P2C.
PathType mergePathType(PathType A, PathType B) {
  if (std::max(A, B) == PathType::PHB && std::min(A, B) == PathType::C2C)
    return PathType::P2C;
  return std::max(A, B);
}

/// NCCL's addInterStep: route From -> To through Via (a CPU, or a GPU for PXN).
void addInterStep(System &Sys, NodeRef Via, NodeRef From, NodeRef To) {
  const Path &First = pathTo(Sys, From, Via);
  const Path &Second = pathTo(Sys, Via, To);
  Path Joined;
  Joined.Hops = First.Hops;
  Joined.Hops.insert(Joined.Hops.end(), Second.Hops.begin(), Second.Hops.end());
  Joined.Type = Via.Type == NodeType::Gpu ? PathType::PXN : mergePathType(First.Type, Second.Type);
  Joined.Bw = std::min(First.Bw, Second.Bw);
  pathTo(Sys, From, To) = std::move(Joined);
}

/// NCCL's ncclTopoGetLocal: the nodes of type To reached from From with the
/// widest bandwidth, and among those the best path type.
std::vector<int> localNodes(const System &Sys, NodeRef From, NodeType To) {
  std::vector<int> Result;
  const std::vector<Path> &Paths = Sys.node(From).Paths[static_cast<int>(To)];
  float MaxBw = 0;
  PathType MinType = PathType::DIS;
  for (int I = 0; I < static_cast<int>(Paths.size()); ++I) {
    if (Paths[I].Bw > MaxBw || (Paths[I].Bw == MaxBw && Paths[I].Type < MinType)) {
      MaxBw = Paths[I].Bw;
      MinType = Paths[I].Type;
      Result.clear();
    }
    if (Paths[I].Bw == MaxBw && Paths[I].Type == MinType)
      Result.push_back(I);
  }
  return Result;
}

bool isPow2(int V) { return (V & (V - 1)) == 0; }

/// NCCL's mirrorBits: reverses the low log2(Pow2) bits, so that GPUs 0,1,2,3
/// sharing 4 NICs spread as 0,2,1,3.
int mirrorBits(int Value, int Pow2) {
  int Mirror = 0;
  for (int B = 1, MB = Pow2 >> 1; B < Pow2; B <<= 1, MB >>= 1)
    if (Value & B)
      Mirror |= MB;
  return Mirror;
}

constexpr int MaxLocalChannels = 32;

/// NCCL's ncclTopoSetPaths from every CPU, GPU, NET and NVS node: the paths
/// the links give, before any P2P, GDR or PXN rule reroutes them.
void setDirectPaths(System &Sys) {
  for (int T = 0; T < NumNodeTypes; ++T)
    for (Node &N : Sys.nodes(static_cast<NodeType>(T)))
      for (std::vector<Path> &Row : N.Paths)
        Row.clear();
  for (NodeType T : {NodeType::Cpu, NodeType::Gpu, NodeType::Net, NodeType::Nvs})
    for (int I = 0; I < Sys.count(T); ++I)
      setPaths(Sys, {T, I});
}

/// NCCL's ncclTopoCheckNet: whether both GPUs reach a NIC (PXB or closer)
/// faster than they reach each other, so that the network beats P2P and SHM.
bool netFaster(const System &Sys, int Gpu1, int Gpu2) {
  NodeRef G1{NodeType::Gpu, Gpu1}, G2{NodeType::Gpu, Gpu2};
  float Speed = Sys.path(G1, G2).Bw;
  float Net1 = 0, Net2 = 0;
  for (int N = 0; N < Sys.count(NodeType::Net); ++N) {
    const Path &P1 = Sys.path(G1, {NodeType::Net, N});
    const Path &P2 = Sys.path(G2, {NodeType::Net, N});
    if (P1.Type <= PathType::PXB)
      Net1 = std::max(Net1, P1.Bw);
    if (P2.Type <= PathType::PXB)
      Net2 = std::max(Net2, P2.Bw);
  }
  return Net1 > Speed && Net2 > Speed;
}

/// NCCL's p2pCanConnect between GPUs of one host: P2P allowed, and either
/// relayed by an NVLink peer or neither beaten by the network nor refused by
/// CUDA's peer access.
bool p2pTransport(const System &Sys, int Gpu1, int Gpu2) {
  if (!p2pAllowed(Sys, Gpu1, Gpu2))
    return false;
  const Path &P = Sys.path({NodeType::Gpu, Gpu1}, {NodeType::Gpu, Gpu2});
  if (P.count() == 2 && Sys.link(P.Hops[0]).Remote.Type == NodeType::Gpu)
    return true;
  return !netFaster(Sys, Gpu1, Gpu2) && Sys.Env.PeerAccess.Value;
}

/// NCCL's shmCanConnect between GPUs of one host.
bool shmTransport(const System &Sys, int Gpu1, int Gpu2) {
  return !Sys.Env.ShmDisable.Value && !netFaster(Sys, Gpu1, Gpu2);
}

} // namespace

int localCpu(const System &Sys, int Gpu) {
  const std::vector<Path> &Paths = Sys.nodes(NodeType::Gpu)[Gpu].Paths[int(NodeType::Cpu)];
  int Best = -1;
  for (int C = 0; C < static_cast<int>(Paths.size()); ++C)
    if (Paths[C].count() > 0 && (Best < 0 || Paths[C].count() < Paths[Best].count()))
      Best = C;
  return Best;
}

PathType p2pLevel(const System &Sys) {
  if (Sys.Env.P2pLevel.Value)
    return *Sys.Env.P2pLevel.Value;
  // Not across a CPU host bridge by default; AMD CPUs handle pairs of GPUs.
  const Node &Cpu0 = Sys.nodes(NodeType::Cpu).front();
  if (Cpu0.Cpu.Arch == CpuArch::X86 && Cpu0.Cpu.Vendor == CpuVendor::Amd &&
      Sys.count(NodeType::Gpu) <= 2)
    return PathType::SYS;
  return PathType::PXB;
}

bool p2pAllowed(const System &Sys, int Gpu1, int Gpu2) {
  if (Sys.path({NodeType::Gpu, Gpu1}, {NodeType::Gpu, Gpu2}).Type > p2pLevel(Sys))
    return false;
  // NVML's P2P status of a pair of distinct GPUs, unless told not to look.
  return Gpu1 == Gpu2 || Sys.Env.PeerAccess.Value || Sys.Env.IgnoreDisabledP2p.Value == 2;
}

PathType netGdrLevel(const System &Sys) {
  return Sys.Env.NetGdrLevel.Value.value_or(PathType::PXB);
}

bool gdrAllowed(const System &Sys, int Gpu, int Net) {
  const Node &G = Sys.nodes(NodeType::Gpu)[Gpu];
  if (!Sys.nodes(NodeType::Net)[Net].Net.Gdr || !G.Gpu.Gdr)
    return false;
  const Path &ToNet = Sys.path({NodeType::Gpu, Gpu}, {NodeType::Net, Net});
  PathType Distance = ToNet.Type;
  if (Distance == PathType::PXN) {
    // Through a peer GPU: what counts is that GPU's distance to the NIC.
    for (const LinkRef &Hop : ToNet.Hops) {
      NodeRef Rem = Sys.link(Hop).Remote;
      if (Rem.Type == NodeType::Gpu) {
        Distance = Sys.path(Rem, {NodeType::Net, Net}).Type;
        break;
      }
    }
  }
  return Distance <= netGdrLevel(Sys);
}

int localNet(const System &Sys, int Gpu, int Channel) {
  std::vector<int> Nets = localNodes(Sys, {NodeType::Gpu, Gpu}, NodeType::Net);
  if (Nets.empty())
    return -1;
  int NumGpus = static_cast<int>(localNodes(Sys, {NodeType::Net, Nets[0]}, NodeType::Gpu).size());
  int NumNets = static_cast<int>(Nets.size());
  int Net = Sys.nodes(NodeType::Gpu)[Gpu].Gpu.Dev;
  if (isPow2(NumNets))
    Net = mirrorBits(Net, NumNets);
  Net += Channel % ((NumNets + NumGpus - 1) / std::max(NumGpus, 1));
  return Nets[Net % NumNets];
}

int localGpu(const System &Sys, int Net) {
  std::vector<int> Gpus = localNodes(Sys, {NodeType::Net, Net}, NodeType::Gpu);
  for (int C = 0; C < MaxLocalChannels; ++C)
    for (int G : Gpus)
      if (localNet(Sys, G, C) == Net)
        return G;
  return -1;
}

void computePaths(System &Sys) {
  setDirectPaths(Sys);

  const int NumGpus = Sys.count(NodeType::Gpu);
  for (int G = 0; G < NumGpus; ++G) {
    // GPUs that may not use P2P go through the CPU of the receiving GPU.
    for (int P = 0; P < NumGpus; ++P)
      if (!p2pAllowed(Sys, P, G))
        addInterStep(Sys, {NodeType::Cpu, localCpu(Sys, G)}, {NodeType::Gpu, P},
                     {NodeType::Gpu, G});
    // Peers neither the P2P nor the SHM transport can join are marked NET:
    // NCCL's trim then puts them in another domain.
    for (int P = 0; P < NumGpus; ++P)
      if (P != G && !p2pTransport(Sys, P, G) && !shmTransport(Sys, P, G))
        pathTo(Sys, {NodeType::Gpu, P}, {NodeType::Gpu, G}).Type = PathType::NET;
  }

  // A NIC the GPU reaches over C2C then PCI through its own CPU is P2C.
  for (int G = 0; G < NumGpus; ++G) {
    int Cpu = localCpu(Sys, G);
    if (Cpu < 0)
      continue;
    NodeRef GpuRef{NodeType::Gpu, G};
    for (int N : localNodes(Sys, GpuRef, NodeType::Net)) {
      NodeRef NetRef{NodeType::Net, N};
      if (mergePathType(Sys.path(GpuRef, {NodeType::Cpu, Cpu}).Type,
                        Sys.path(NetRef, {NodeType::Cpu, Cpu}).Type) != PathType::P2C)
        continue;
      PathType &Out = pathTo(Sys, GpuRef, NetRef).Type;
      PathType &In = pathTo(Sys, NetRef, GpuRef).Type;
      Out = std::min(Out, PathType::P2C);
      In = std::min(In, PathType::P2C);
    }
  }

  for (int N = 0; N < Sys.count(NodeType::Net); ++N) {
    NodeRef NetRef{NodeType::Net, N};
    int Local = localGpu(Sys, N);
    for (int G = 0; G < NumGpus; ++G) {
      NodeRef GpuRef{NodeType::Gpu, G};
      // PXN: send through the NVLink peer that sits next to the NIC, when
      // it is closer or faster (GPU->NIC direction only, as NCCL).
      if (Local >= 0 && Local != G) {
        NodeRef Peer{NodeType::Gpu, Local};
        const Path &PeerToNet = Sys.path(Peer, NetRef);
        const Path &Direct = Sys.path(GpuRef, NetRef);
        if (PeerToNet.Type <= PathType::PXB && Sys.path(Peer, GpuRef).Type <= PathType::NVL &&
            (Sys.node(Peer).Id >> 56) == (Sys.node(GpuRef).Id >> 56) &&
            (PeerToNet.Bw > Direct.Bw || Direct.Type > PathType::PXB))
          addInterStep(Sys, Peer, GpuRef, NetRef);
      }
      // Without GPU Direct RDMA the data goes through the GPU's CPU.
      if (Sys.path(GpuRef, NetRef).Type < PathType::PHB && !gdrAllowed(Sys, G, N)) {
        NodeRef Cpu{NodeType::Cpu, localCpu(Sys, G)};
        addInterStep(Sys, Cpu, NetRef, GpuRef);
        addInterStep(Sys, Cpu, GpuRef, NetRef);
      }
    }
  }
}

void trimSystem(System &Sys, int NumNodes) {
  if (NumNodes > 1)
    return;
  while (Sys.count(NodeType::Net) > 0)
    Sys.removeNode({NodeType::Net, Sys.count(NodeType::Net) - 1});
}

bool checkPeerAccess(const System &Sys, DiagnosticEngine &Diags) {
  System Work = Sys;
  setDirectPaths(Work);
  const int NumGpus = Work.count(NodeType::Gpu);
  bool Ok = true;
  // NCCL's ncclTopoCheckP2p: NVML saying no between NVLink peers is taken for
  // a hardware fault.
  if (!Work.Env.PeerAccess.Value && Work.Env.IgnoreDisabledP2p.Value == 0)
    for (int G = 0; G < NumGpus; ++G)
      for (int P = G + 1; P < NumGpus; ++P) {
        PathType Type = Work.path({NodeType::Gpu, G}, {NodeType::Gpu, P}).Type;
        if (Type > PathType::NVB || Type > p2pLevel(Work))
          continue;
        const Node &A = Work.nodes(NodeType::Gpu)[G], &B = Work.nodes(NodeType::Gpu)[P];
        Diags.error(A.Loc, "P2P is disabled between NVLink-connected GPUs " +
                               std::to_string(A.Gpu.Dev) + " and " + std::to_string(B.Gpu.Dev) +
                               " (" + Work.Env.PeerAccess.Source.Name +
                               "): NCCL takes this for a hardware fault and stops; set "
                               "NCCL_IGNORE_DISABLED_P2P=1 to route them through the CPU");
        Ok = false;
      }
  if (!Ok)
    return false;

  // NCCL's ncclTopoTrimSystem: a GPU joins the domain of the first GPU it
  // reaches without the network.
  computePaths(Work);
  std::vector<int> Domain(NumGpus);
  for (int G = 0; G < NumGpus; ++G) {
    Domain[G] = G;
    for (int P = 0; P < G; ++P)
      if (Work.path({NodeType::Gpu, G}, {NodeType::Gpu, P}).Type < PathType::NET)
        Domain[G] = std::min(Domain[G], Domain[P]);
  }
  if (std::all_of(Domain.begin(), Domain.end(), [](int D) { return D == 0; }))
    return true;
  std::string Groups;
  int NumDomains = 0;
  for (int D = 0; D < NumGpus; ++D) {
    std::string Ranks;
    for (int G = 0; G < NumGpus; ++G)
      if (Domain[G] == D)
        Ranks += (Ranks.empty() ? "" : " ") + std::to_string(Work.nodes(NodeType::Gpu)[G].Gpu.Rank);
    if (!Ranks.empty()) {
      Groups += " {" + Ranks + "}";
      ++NumDomains;
    }
  }
  int Outside = static_cast<int>(
      std::find_if(Domain.begin(), Domain.end(), [](int D) { return D != 0; }) - Domain.begin());
  Diags.error(Work.nodes(NodeType::Gpu)[Outside].Loc,
              "NCCL splits this node's GPUs into " + std::to_string(NumDomains) +
                  " network domains (ranks" + Groups +
                  "): between domains neither P2P nor shared memory is used (NCCL_SHM_DISABLE=" +
                  (Work.Env.ShmDisable.Value ? "1" : "0") +
                  ", or a NIC faster than the path between the GPUs), so NCCL connects them "
                  "through the network as separate nodes; cclc connects only nodes whose GPUs "
                  "all reach each other");
  return false;
}

} // namespace cclc::topo
