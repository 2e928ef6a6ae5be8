//===- System.h - The machine as a graph of nodes and links ----*- C++ -*-===//
//
// NCCL's struct ncclTopoSystem: the GPUs, PCI switches, NVSwitch, CPUs (NUMA
// domains), NICs and network ports of one machine, connected by links that
// carry a bandwidth in GB/s. The search walks this graph and reserves
// bandwidth on its links, so links are addressed by index (NodeRef + link
// number) rather than by pointer: a System can be copied freely and every
// search works on its own copy.
//
// The graph is built by NCCL's rules (ncclTopoGetSystemFromXml): PCIe width
// times generation, NVLink per-link bandwidth by compute capability, one NVS
// node for all NVSwitches, BCM PCIe switch flattening, CPU-to-CPU links by
// vendor and model, links sorted NVLink first, PCI down, PCI up, SYS last.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "compiler/topology/NcclEnv.h"
#include "compiler/topology/TopoGraph.h"
#include "plan/Diagnostics.h"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cclc::topo {

struct TopoXml;

/// NCCL's node types; the order is NCCL's and shows in printed ids.
enum class NodeType : int { Gpu, Pci, Nvs, Cpu, Nic, Net };
constexpr int NumNodeTypes = 6;
/// "GPU", "PCI", ... as NCCL prints them.
std::string_view nodeTypeName(NodeType Type);

/// NCCL's link types; the values match the PathType a one-hop path gets.
enum class LinkType : int { Loc = 0, Nvl = 1, C2c = 3, Pci = 4, Sys = 9, Net = 10 };
/// "LOC", "NVL", "C2C", "PCI", "SYS", "NET".
std::string_view linkTypeName(LinkType Type);

/// NCCL's NCCL_TOPO_CPU_ARCH_*, _VENDOR_* and _TYPE_* values (printed as numbers).
enum class CpuArch : int { Unknown = 0, X86 = 1, Power = 2, Arm = 3 };
enum class CpuVendor : int { Unknown = 0, Intel = 1, Amd = 2, Zhaoxin = 3 };
enum class CpuModel : int { Undef = -1, IntelBdw = 1, IntelSkl = 2, IntelSrp = 3, IntelErp = 4, Yongfeng = 1 };

/// Bandwidths in GB/s, NCCL's constants.
constexpr float LocBw = 5000.0f;

/// One node of the graph, addressed by type and index within the type.
struct NodeRef {
  NodeType Type = NodeType::Gpu;
  int Index = -1;
  bool operator==(const NodeRef &O) const { return Type == O.Type && Index == O.Index; }
};

struct Link {
  LinkType Type = LinkType::Loc;
  float Bw = 0; ///< GB/s still available (the search reserves from it).
  NodeRef Remote;
};

/// One hop of a path: link number LinkIndex of node From.
struct LinkRef {
  NodeRef From;
  int LinkIndex = 0;
};

/// NCCL's ncclTopoLinkList: the hops from a node to another, the bottleneck
/// bandwidth and the path type.
struct Path {
  std::vector<LinkRef> Hops;
  float Bw = 0;
  PathType Type = PathType::DIS;
  int count() const { return static_cast<int>(Hops.size()); }
};

struct GpuInfo {
  int Dev = -1;
  int Rank = -1;
  int Sm = -1; ///< CUDA compute capability * 10 + minor, e.g. 80, 90.
  bool Gdr = false;
};

struct NetInfo {
  std::string Name;
  int Dev = -1;
  uint64_t Asic = 0;
  int Port = 0;
  float Bw = 0; ///< GB/s, reserved from by the search like link bandwidths.
  float Latency = 0;
  bool Gdr = false;
  bool Coll = false;
  int MaxChannels = 0;
};

struct CpuInfo {
  CpuArch Arch = CpuArch::Unknown;
  CpuVendor Vendor = CpuVendor::Unknown;
  CpuModel Model = CpuModel::Undef;
  std::string Affinity;
};

struct Node {
  NodeType Type = NodeType::Gpu;
  /// NCCL's id: bus id for GPU, PCI and NIC, NUMA id for CPU, dev for NET,
  /// with the host index in the top byte.
  int64_t Id = 0;
  GpuInfo Gpu;
  NetInfo Net;
  CpuInfo Cpu;
  uint64_t PciDevice = 0; ///< vendor:device:subsystem_vendor:subsystem_device, 16 bits each.
  SourceLoc Loc;          ///< Where the element that created the node is.
  std::vector<Link> Links;
  /// Paths[t][i]: path from this node to node i of type t; empty until
  /// computePaths fills the rows for the types NCCL computes.
  std::array<std::vector<Path>, NumNodeTypes> Paths;
  uint64_t Used = 0; ///< Search: bit c set while channel c visits this GPU.
};

class System {
public:
  std::vector<Node> &nodes(NodeType Type) { return Nodes[static_cast<int>(Type)]; }
  const std::vector<Node> &nodes(NodeType Type) const { return Nodes[static_cast<int>(Type)]; }
  int count(NodeType Type) const { return static_cast<int>(nodes(Type).size()); }
  Node &node(NodeRef Ref) { return nodes(Ref.Type)[Ref.Index]; }
  const Node &node(NodeRef Ref) const { return nodes(Ref.Type)[Ref.Index]; }
  Link &link(LinkRef Ref) { return node(Ref.From).Links[Ref.LinkIndex]; }
  const Link &link(LinkRef Ref) const { return node(Ref.From).Links[Ref.LinkIndex]; }
  const Path &path(NodeRef From, NodeRef To) const {
    return node(From).Paths[static_cast<int>(To.Type)][To.Index];
  }

  /// Index of the node of this type with this id, -1 when there is none.
  int findNode(NodeType Type, int64_t Id) const;
  /// Index of the GPU with this rank, -1 when there is none.
  int gpuIndexOfRank(int Rank) const;
  /// Appends a node and returns its index.
  int addNode(NodeType Type, int64_t Id, SourceLoc Loc);
  /// NCCL's ncclTopoConnectNodes: adds Bw to an existing link of the same type
  /// (NVLinks aggregate) or creates one, keeping links sorted by bandwidth.
  void connect(NodeRef From, NodeRef To, LinkType Type, float Bw);
  /// NCCL's ncclTopoRemoveNode: drops the node and every link to it.
  void removeNode(NodeRef Ref);

  /// Minimum and maximum compute capability over the GPUs.
  int minSm() const;
  int maxSm() const;

  /// NCCL's ncclTopoSearchInit results ("=== System : maxBw X totalBw Y ===").
  float MaxBw = 0;
  float TotalBw = 0;
  /// Number of distinct host_hash values (NCCL's nHosts).
  int NumHosts = 1;
  /// The NCCL environment the machine is searched under (P2P level, peer
  /// access, GDR level, cross-NIC, channel limits): NCCL's defaults unless the
  /// driver sets it from readNcclEnv.
  NcclEnv Env;

private:
  std::array<std::vector<Node>, NumNodeTypes> Nodes;
};

/// NCCL's per-link NVLink bandwidth for a compute capability (SM60 18, SM70/80
/// 20, SM86 12, SM90 20.6, SM100 40.1 GB/s).
float nvlinkBw(int Sm);

/// Builds the graph from a parsed topology file. Reports semantic problems (no
/// GPU, duplicate bus ids or ranks, NVLink to an unknown GPU, GPUs that cannot
/// reach each other) and returns nullopt after any error.
std::optional<System> buildSystem(const TopoXml &Xml, DiagnosticEngine &Diags);

/// Reads, parses and builds a topology file: the entry point of the driver.
/// Every problem is reported through Diags; nullopt means at least one error.
std::optional<System> loadSystem(const std::string &Path, SourceManager &SM,
                                 DiagnosticEngine &Diags);

} // namespace cclc::topo
