//===- System.cpp - The machine as a graph of nodes and links -------------===//

#include "compiler/topology/System.h"
#include "compiler/topology/TopoXml.h"
#include "plan/Assert.h"

#include <algorithm>
#include <cstdio>
#include <deque>

namespace cclc::topo {

std::string_view nodeTypeName(NodeType Type) {
  static constexpr std::string_view Names[] = {"GPU", "PCI", "NVS", "CPU", "NIC", "NET"};
  return Names[static_cast<int>(Type)];
}

std::string_view linkTypeName(LinkType Type) {
  switch (Type) {
  case LinkType::Loc: return "LOC";
  case LinkType::Nvl: return "NVL";
  case LinkType::C2c: return "C2C";
  case LinkType::Pci: return "PCI";
  case LinkType::Sys: return "SYS";
  case LinkType::Net: return "NET";
  }
  CCLC_UNREACHABLE("bad link type");
}

float nvlinkBw(int Sm) {
  return Sm >= 100 ? 40.1f
         : Sm >= 90 ? 20.6f
         : Sm == 86 ? 12.0f
         : Sm >= 80 ? 20.0f
         : Sm >= 70 ? 20.0f
         : Sm >= 60 ? 18.0f
                    : 20.0f;
}

int System::findNode(NodeType Type, int64_t Id) const {
  const std::vector<Node> &List = nodes(Type);
  for (size_t I = 0; I < List.size(); ++I)
    if (List[I].Id == Id)
      return static_cast<int>(I);
  return -1;
}

int System::gpuIndexOfRank(int Rank) const {
  const std::vector<Node> &Gpus = nodes(NodeType::Gpu);
  for (size_t I = 0; I < Gpus.size(); ++I)
    if (Gpus[I].Gpu.Rank == Rank)
      return static_cast<int>(I);
  return -1;
}

int System::addNode(NodeType Type, int64_t Id, SourceLoc Loc) {
  Node N;
  N.Type = Type;
  N.Id = Id;
  N.Loc = Loc;
  nodes(Type).push_back(std::move(N));
  return count(Type) - 1;
}

void System::connect(NodeRef From, NodeRef To, LinkType Type, float Bw) {
  std::vector<Link> &Links = node(From).Links;
  auto It = std::find_if(Links.begin(), Links.end(), [&](const Link &L) {
    return L.Remote == To && L.Type == Type;
  });
  if (It == Links.end()) {
    Links.push_back({Type, 0, To});
    It = Links.end() - 1;
  }
  It->Bw += Bw;
  // Keep links sorted by decreasing bandwidth; a grown link moves up past
  // narrower ones only (equal ones keep their order).
  while (It != Links.begin() && (It - 1)->Bw < It->Bw) {
    std::iter_swap(It - 1, It);
    --It;
  }
}

void System::removeNode(NodeRef Ref) {
  for (std::vector<Node> &List : Nodes) {
    for (Node &N : List) {
      std::erase_if(N.Links, [&](const Link &L) { return L.Remote == Ref; });
      for (Link &L : N.Links)
        if (L.Remote.Type == Ref.Type && L.Remote.Index > Ref.Index)
          --L.Remote.Index;
      for (std::vector<Path> &Row : N.Paths)
        Row.clear();
    }
  }
  std::vector<Node> &List = nodes(Ref.Type);
  List.erase(List.begin() + Ref.Index);
}

int System::minSm() const {
  int Min = 0;
  for (const Node &G : nodes(NodeType::Gpu))
    Min = Min == 0 ? G.Gpu.Sm : std::min(Min, G.Gpu.Sm);
  return Min;
}

int System::maxSm() const {
  int Max = 0;
  for (const Node &G : nodes(NodeType::Gpu))
    Max = std::max(Max, G.Gpu.Sm);
  return Max;
}

namespace {

/// NCCL_TOPO_ID: the host index in the top byte, the local id below.
int64_t topoId(int HostIndex, int64_t LocalId) {
  return static_cast<int64_t>((static_cast<uint64_t>(HostIndex) << 56) +
                              (static_cast<uint64_t>(LocalId) & 0x00ffffffffffffffULL));
}

std::string hexId(int64_t Id) {
  char Buf[24];
  std::snprintf(Buf, sizeof Buf, "%llx", static_cast<unsigned long long>(Id));
  return Buf;
}

/// NCCL's per-vendor bandwidth of the link between two CPU sockets.
float interCpuBw(const CpuInfo &Cpu) {
  switch (Cpu.Arch) {
  case CpuArch::Power: return 32.0f;
  case CpuArch::Arm: return 6.0f;
  case CpuArch::X86:
    switch (Cpu.Vendor) {
    case CpuVendor::Intel:
      return Cpu.Model == CpuModel::IntelErp   ? 40.0f
             : Cpu.Model == CpuModel::IntelSrp ? 22.0f
             : Cpu.Model == CpuModel::IntelSkl ? 10.0f
                                               : 6.0f;
    case CpuVendor::Amd: return 16.0f;
    case CpuVendor::Zhaoxin: return Cpu.Model == CpuModel::Yongfeng ? 9.0f : 6.0f;
    case CpuVendor::Unknown: return LocBw;
    }
    break;
  case CpuArch::Unknown: break;
  }
  return LocBw;
}

/// NCCL's getBcmGen: 4 or 5 for Broadcom PEX switches that present one
/// physical switch as two levels (Level 0 the top, 1 the sub-switches).
int bcmGen(uint64_t Device, int Level) {
  uint64_t Masked = Device & 0xfffffffffffff000ULL;
  if (Masked == 0x1000c0101000a000ULL)
    return 4;
  if (Masked == (0x1000c03010000000ULL | static_cast<uint64_t>(Level) * 0x1000))
    return 5;
  return 0;
}

/// Builds the graph from the parsed file in NCCL's order, so that node
/// indices (and hence search results) match NCCL's.
class Builder {
public:
  explicit Builder(DiagnosticEngine &Diags) : Diags(Diags) {}
  std::optional<System> build(const TopoXml &Xml);

private:
  int hostIndex(uint64_t Hash);
  /// False, after an error pointing at both elements, when a node of this
  /// type already has this id.
  bool isNew(NodeType Type, int64_t Id, SourceLoc Loc, const std::string &What);
  void addCpu(const XmlCpu &Cpu, int Host);
  void addPci(const XmlPci &Pci, NodeRef Parent, int Host);
  void addNic(const XmlNic &Nic, NodeRef NicNode, int Host);
  void addGpuLinks(const XmlPci &Pci, int Host);
  void addPciLinks(const XmlPci &Pci, int Host);
  NodeRef localCpuOf(NodeRef Start) const;
  void flattenBcmSwitches();
  void connectCpus();
  void sortLinks(NodeRef N, std::optional<NodeRef> Up);
  /// Says why a topology has no ranked GPU: PCI devices of GPU class
  /// without <gpu> elements (a file of the PCI tree only), or none at all.
  void reportNoGpus(const TopoXml &Xml);
  void checkReachable(const TopoXml &Xml);
  void checkSymmetric();

  DiagnosticEngine &Diags;
  System Sys;
  std::vector<uint64_t> HostHashes;
};

int Builder::hostIndex(uint64_t Hash) {
  auto It = std::find(HostHashes.begin(), HostHashes.end(), Hash);
  if (It != HostHashes.end())
    return static_cast<int>(It - HostHashes.begin());
  HostHashes.push_back(Hash);
  return static_cast<int>(HostHashes.size()) - 1;
}

bool Builder::isNew(NodeType Type, int64_t Id, SourceLoc Loc, const std::string &What) {
  int Prev = Sys.findNode(Type, Id);
  if (Prev < 0)
    return true;
  Diags.error(Loc, "duplicate " + What);
  Diags.note(Sys.nodes(Type)[Prev].Loc, "first defined here");
  return false;
}

void Builder::addNic(const XmlNic &Nic, NodeRef NicNode, int Host) {
  for (const XmlNet &Net : Nic.Nets) {
    int64_t Id = topoId(Host, Net.Dev);
    if (!isNew(NodeType::Net, Id, Net.Loc, "<net> dev " + std::to_string(Net.Dev)))
      continue;
    NodeRef Ref{NodeType::Net, Sys.addNode(NodeType::Net, Id, Net.Loc)};
    NetInfo &Info = Sys.node(Ref).Net;
    Info.Name = Net.Name;
    Info.Dev = Net.Dev;
    Info.Asic = Net.Guid ? *Net.Guid : static_cast<uint64_t>(Net.Dev);
    Info.Port = Net.Port;
    // NCCL: speed in Mb/s, unknown (<= 0) taken as 10 Gb/s.
    Info.Bw = static_cast<float>((Net.SpeedMbps <= 0 ? 10000 : Net.SpeedMbps) / 8000.0);
    Info.Latency = Net.Latency;
    Info.Gdr = Net.Gdr;
    Info.Coll = Net.Coll;
    Info.MaxChannels = Net.MaxConn;
    Sys.connect(NicNode, Ref, LinkType::Net, Info.Bw);
    Sys.connect(Ref, NicNode, LinkType::Net, Info.Bw);
  }
}

void Builder::addPci(const XmlPci &Pci, NodeRef Parent, int Host) {
  std::optional<NodeRef> Created;
  if (Pci.Gpu) {
    int64_t Id = topoId(Host, Pci.BusId);
    if (!isNew(NodeType::Gpu, Id, Pci.Loc, "GPU bus id " + hexId(Pci.BusId)))
      return;
    if (int Other = Sys.gpuIndexOfRank(Pci.Gpu->Rank); Other >= 0) {
      Diags.error(Pci.Gpu->Loc, "duplicate GPU rank " + std::to_string(Pci.Gpu->Rank));
      Diags.note(Sys.nodes(NodeType::Gpu)[Other].Loc, "first used here");
      return;
    }
    Created = NodeRef{NodeType::Gpu, Sys.addNode(NodeType::Gpu, Id, Pci.Loc)};
    GpuInfo &Info = Sys.node(*Created).Gpu;
    Info.Dev = Pci.Gpu->Dev;
    Info.Rank = Pci.Gpu->Rank;
    Info.Sm = Pci.Gpu->Sm;
    Info.Gdr = Pci.Gpu->Gdr;
  }
  if (Pci.Nic) {
    // Ports of one multi-port NIC share the PCI device: merge on the bus id
    // without its function number.
    int64_t Id = topoId(Host, Pci.BusId & ~int64_t(0xf));
    int Index = Sys.findNode(NodeType::Nic, Id);
    if (Index < 0) {
      Index = Sys.addNode(NodeType::Nic, Id, Pci.Loc);
      Created = NodeRef{NodeType::Nic, Index};
    }
    addNic(*Pci.Nic, NodeRef{NodeType::Nic, Index}, Host);
  } else if (!Pci.Gpu && Pci.Class == NodeType::Pci) {
    int64_t Id = topoId(Host, Pci.BusId);
    if (!isNew(NodeType::Pci, Id, Pci.Loc, "PCI bus id " + hexId(Pci.BusId)))
      return;
    Created = NodeRef{NodeType::Pci, Sys.addNode(NodeType::Pci, Id, Pci.Loc)};
    Sys.node(*Created).PciDevice = Pci.Device;
    for (const XmlPci &Child : Pci.Children)
      addPci(Child, *Created, Host);
  }
  if (Created) {
    float Bw = static_cast<float>(Pci.Width * Pci.LaneSpeed / 80.0);
    Sys.connect(*Created, Parent, LinkType::Pci, Bw);
    Sys.connect(Parent, *Created, LinkType::Pci, Bw);
  }
}

void Builder::addCpu(const XmlCpu &Cpu, int Host) {
  int64_t Id = topoId(Host, Cpu.NumaId);
  if (!isNew(NodeType::Cpu, Id, Cpu.Loc, "<cpu> numaid " + std::to_string(Cpu.NumaId)))
    return;
  NodeRef Ref{NodeType::Cpu, Sys.addNode(NodeType::Cpu, Id, Cpu.Loc)};
  CpuInfo &Info = Sys.node(Ref).Cpu;
  Info.Arch = Cpu.Arch;
  Info.Vendor = Cpu.Vendor;
  Info.Model = Cpu.Model;
  Info.Affinity = Cpu.Affinity;
  for (const auto &Child : Cpu.Children) {
    if (const XmlPci *Pci = std::get_if<XmlPci>(&Child)) {
      addPci(*Pci, Ref, Host);
      continue;
    }
    // NICs listed under a CPU (socket NICs) share one NIC node, attached to
    // the first CPU that lists one, as in NCCL.
    const XmlNic &Nic = std::get<XmlNic>(Child);
    int64_t NicId = topoId(Host, 0);
    int Index = Sys.findNode(NodeType::Nic, NicId);
    if (Index < 0) {
      Index = Sys.addNode(NodeType::Nic, NicId, Nic.Loc);
      Sys.connect(Ref, {NodeType::Nic, Index}, LinkType::Pci, LocBw);
      Sys.connect({NodeType::Nic, Index}, Ref, LinkType::Pci, LocBw);
    }
    addNic(Nic, {NodeType::Nic, Index}, Host);
  }
}

NodeRef Builder::localCpuOf(NodeRef Start) const {
  // Walk the PCI tree (switches only) breadth first until a CPU.
  std::vector<NodeRef> Seen{Start};
  std::deque<NodeRef> Queue{Start};
  while (!Queue.empty()) {
    NodeRef N = Queue.front();
    Queue.pop_front();
    if (N.Type == NodeType::Cpu)
      return N;
    for (const Link &L : Sys.node(N).Links) {
      if (L.Type != LinkType::Pci ||
          (L.Remote.Type != NodeType::Pci && L.Remote.Type != NodeType::Cpu))
        continue;
      if (std::find(Seen.begin(), Seen.end(), L.Remote) != Seen.end())
        continue;
      Seen.push_back(L.Remote);
      Queue.push_back(L.Remote);
    }
  }
  return {NodeType::Cpu, -1};
}

void Builder::addGpuLinks(const XmlPci &Pci, int Host) {
  for (const XmlPci &Child : Pci.Children)
    addGpuLinks(Child, Host);
  if (!Pci.Gpu)
    return;
  int GpuIndex = Sys.findNode(NodeType::Gpu, topoId(Host, Pci.BusId));
  if (GpuIndex < 0)
    return; // Not created: an error was reported.
  NodeRef Gpu{NodeType::Gpu, GpuIndex};
  for (const XmlNvLink &NvLink : Pci.Gpu->NvLinks) {
    NodeRef Remote{NvLink.TargetType, -1};
    if (NvLink.TargetType == NodeType::Gpu) {
      // A peer without a rank is not part of the job: NCCL ignores the link.
      Remote.Index = Sys.findNode(NodeType::Gpu, topoId(Host, NvLink.Target));
    } else if (NvLink.TargetType == NodeType::Cpu) {
      Remote = localCpuOf(Gpu);
    } else {
      // Every NVSwitch is the same fabric: one NVS node.
      Remote.Index = Sys.count(NodeType::Nvs) ? 0 : Sys.addNode(NodeType::Nvs, 0, NvLink.Loc);
    }
    if (Remote.Index < 0)
      continue;
    float Bw = static_cast<float>(NvLink.Count) * nvlinkBw(Pci.Gpu->Sm);
    Sys.connect(Gpu, Remote, LinkType::Nvl, Bw);
    if (Remote.Type != NodeType::Gpu)
      Sys.connect(Remote, Gpu, LinkType::Nvl, Bw);
  }
  for (const XmlC2c &C2c : Pci.Gpu->C2cs) {
    NodeRef Cpu = localCpuOf(Gpu);
    if (Cpu.Index < 0)
      continue;
    float Bw = static_cast<float>(C2c.Count * static_cast<double>(C2c.BwMBps) / 1000.0);
    Sys.connect(Gpu, Cpu, LinkType::C2c, Bw);
    Sys.connect(Cpu, Gpu, LinkType::C2c, Bw);
  }
}

void Builder::addPciLinks(const XmlPci &Pci, int Host) {
  for (const XmlPci &Child : Pci.Children)
    addPciLinks(Child, Host);
  int From = Sys.findNode(NodeType::Pci, topoId(Host, Pci.BusId));
  for (const XmlPciLink &Link : Pci.PciLinks) {
    if (From < 0) {
      Diags.error(Link.Loc, "<pcilink> must be inside a PCI switch");
      continue;
    }
    int To = Sys.findNode(NodeType::Pci, topoId(Host, Link.Target));
    if (To >= 0)
      Sys.connect({NodeType::Pci, From}, {NodeType::Pci, To}, LinkType::Loc, LocBw);
  }
}

void Builder::flattenBcmSwitches() {
  for (int S = 0; S < Sys.count(NodeType::Pci); ++S) {
    int Gen = bcmGen(Sys.nodes(NodeType::Pci)[S].PciDevice, 0);
    if (!Gen)
      continue;
    NodeRef Switch{NodeType::Pci, S};
    std::vector<int64_t> SubIds;
    std::erase_if(Sys.node(Switch).Links, [&](const Link &L) {
      if (L.Remote.Type != NodeType::Pci || bcmGen(Sys.node(L.Remote).PciDevice, 1) != Gen)
        return false;
      SubIds.push_back(Sys.node(L.Remote).Id);
      return true;
    });
    for (int64_t SubId : SubIds) {
      // Indices move as sub-switches are removed: look the sub-switch up by id.
      NodeRef Sub{NodeType::Pci, Sys.findNode(NodeType::Pci, SubId)};
      for (const Link &L : Sys.node(Sub).Links) {
        if (L.Remote == Switch)
          continue;
        Sys.node(Switch).Links.push_back(L);
        for (Link &Back : Sys.node(L.Remote).Links)
          if (Back.Remote == Sub) {
            Back.Remote = Switch;
            break;
          }
      }
      Sys.node(Sub).Links.clear();
      Sys.removeNode(Sub);
      if (Sub.Index < Switch.Index)
        --Switch.Index;
    }
    // Never merge this switch again.
    Sys.node(Switch).PciDevice |= 0xffff;
    S = -1; // Indices changed: start over.
  }
}

void Builder::connectCpus() {
  std::vector<Node> &Cpus = Sys.nodes(NodeType::Cpu);
  for (int A = 0; A < Sys.count(NodeType::Cpu); ++A)
    for (int B = 0; B < Sys.count(NodeType::Cpu); ++B)
      if (A != B && (Cpus[A].Id >> 56) == (Cpus[B].Id >> 56))
        Sys.connect({NodeType::Cpu, A}, {NodeType::Cpu, B}, LinkType::Sys,
                    interCpuBw(Cpus[A].Cpu));
}

void Builder::sortLinks(NodeRef N, std::optional<NodeRef> Up) {
  std::vector<Link> &Links = Sys.node(N).Links;
  if (Up) {
    // The link up the PCI tree goes last (before nothing: SYS links only
    // exist on CPUs, which have no up link).
    auto It = std::find_if(Links.begin(), Links.end(),
                           [&](const Link &L) { return L.Remote == *Up; });
    CCLC_ASSERT(It != Links.end(), "PCI child without a link to its parent");
    std::rotate(It, It + 1, Links.end());
  }
  for (size_t L = 0; L < Sys.node(N).Links.size(); ++L) {
    const Link &Down = Sys.node(N).Links[L];
    if (Down.Type == LinkType::Pci && !(Up && Down.Remote == *Up))
      sortLinks(Down.Remote, N);
  }
}

namespace {

/// The PCI devices of GPU class (0x03) under Pci, in file order, with or
/// without a ranked <gpu> element.
void collectGpuDevices(const XmlPci &Pci, std::vector<const XmlPci *> &Out) {
  if (Pci.Class == NodeType::Gpu)
    Out.push_back(&Pci);
  for (const XmlPci &Child : Pci.Children)
    collectGpuDevices(Child, Out);
}

} // namespace

void Builder::reportNoGpus(const TopoXml &Xml) {
  std::vector<const XmlPci *> Devices;
  for (const XmlCpu &Cpu : Xml.Cpus)
    for (const auto &Child : Cpu.Children)
      if (const auto *Pci = std::get_if<XmlPci>(&Child))
        collectGpuDevices(*Pci, Devices);
  if (Devices.empty()) {
    Diags.error(Xml.Loc, "the topology has no GPU with a 'rank' attribute: it has neither a "
                         "<gpu> element nor a PCI device of GPU class (0x03)");
    return;
  }
  Diags.error(Xml.Loc, "the topology has no GPU with a 'rank' attribute: its " +
                           std::to_string(Devices.size()) +
                           " PCI devices of GPU class (0x03) have no <gpu rank=...> element, "
                           "which NCCL adds when it detects the GPUs at run time. The file "
                           "describes only the PCI tree, as a virtual machine's NCCL_TOPO_FILE "
                           "does; compile against a topology NCCL dumped on the machine "
                           "(NCCL_TOPO_DUMP_FILE)");
  Diags.note(Devices.front()->Loc, "the first of them");
}

void Builder::checkReachable(const TopoXml &Xml) {
  const std::vector<Node> &Gpus = Sys.nodes(NodeType::Gpu);
  if (Gpus.empty()) {
    reportNoGpus(Xml);
    return;
  }
  // Breadth first over every link from the first GPU.
  std::array<std::vector<bool>, NumNodeTypes> Seen;
  for (int T = 0; T < NumNodeTypes; ++T)
    Seen[T].assign(Sys.count(static_cast<NodeType>(T)), false);
  std::deque<NodeRef> Queue{{NodeType::Gpu, 0}};
  Seen[0][0] = true;
  while (!Queue.empty()) {
    NodeRef N = Queue.front();
    Queue.pop_front();
    for (const Link &L : Sys.node(N).Links) {
      auto Flag = Seen[static_cast<int>(L.Remote.Type)][L.Remote.Index];
      if (!Flag) {
        Flag = true;
        Queue.push_back(L.Remote);
      }
    }
  }
  for (size_t G = 1; G < Gpus.size(); ++G)
    if (!Seen[0][G]) {
      Diags.error(Gpus[G].Loc, "GPU rank " + std::to_string(Gpus[G].Gpu.Rank) +
                                   " cannot reach GPU rank " + std::to_string(Gpus[0].Gpu.Rank) +
                                   " (on another host, or on a CPU with no path to it)");
    }
}

void Builder::checkSymmetric() {
  // Paths are followed backwards, so every link needs its reverse; only a
  // one-sided <nvlink> or <pcilink> breaks that.
  for (int T = 0; T < NumNodeTypes; ++T)
    for (int I = 0; I < Sys.count(static_cast<NodeType>(T)); ++I) {
      NodeRef From{static_cast<NodeType>(T), I};
      for (const Link &L : Sys.node(From).Links) {
        const std::vector<Link> &Back = Sys.node(L.Remote).Links;
        if (std::any_of(Back.begin(), Back.end(), [&](const Link &B) {
              return B.Remote == From && B.Type == L.Type;
            }))
          continue;
        Diags.error(Sys.node(From).Loc,
                    std::string(linkTypeName(L.Type)) + " link to " +
                        std::string(nodeTypeName(L.Remote.Type)) + " " +
                        hexId(Sys.node(L.Remote).Id) + " has no link back (add the <" +
                        (L.Type == LinkType::Loc ? "pcilink" : "nvlink") +
                        "> on the other side)");
        Diags.note(Sys.node(L.Remote).Loc, "the other side is here");
      }
    }
}

std::optional<System> Builder::build(const TopoXml &Xml) {
  unsigned ErrorsBefore = Diags.errorCount();
  std::vector<int> Hosts;
  for (const XmlCpu &Cpu : Xml.Cpus) {
    Hosts.push_back(hostIndex(Cpu.HostHash));
    addCpu(Cpu, Hosts.back());
  }
  for (size_t C = 0; C < Xml.Cpus.size(); ++C)
    for (const auto &Child : Xml.Cpus[C].Children)
      if (const XmlPci *Pci = std::get_if<XmlPci>(&Child))
        addGpuLinks(*Pci, Hosts[C]);
  for (size_t C = 0; C < Xml.Cpus.size(); ++C)
    for (const auto &Child : Xml.Cpus[C].Children)
      if (const XmlPci *Pci = std::get_if<XmlPci>(&Child))
        addPciLinks(*Pci, Hosts[C]);
  flattenBcmSwitches();
  connectCpus();
  for (int C = 0; C < Sys.count(NodeType::Cpu); ++C)
    sortLinks({NodeType::Cpu, C}, std::nullopt);
  Sys.NumHosts = static_cast<int>(HostHashes.size());
  checkSymmetric();
  checkReachable(Xml);
  if (Diags.errorCount() != ErrorsBefore)
    return std::nullopt;
  return std::move(Sys);
}

} // namespace

std::optional<System> buildSystem(const TopoXml &Xml, DiagnosticEngine &Diags) {
  return Builder(Diags).build(Xml);
}

std::optional<System> loadSystem(const std::string &Path, SourceManager &SM,
                                 DiagnosticEngine &Diags) {
  std::string Error;
  std::optional<uint32_t> FileId = SM.loadFile(Path, Error);
  if (!FileId) {
    Diags.error(SourceLoc{}, Error);
    return std::nullopt;
  }
  std::optional<TopoXml> Xml = readTopoXml(*FileId, SM, Diags);
  if (!Xml)
    return std::nullopt;
  return buildSystem(*Xml, Diags);
}

} // namespace cclc::topo
