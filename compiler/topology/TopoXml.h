//===- TopoXml.h - Reader for NCCL's topology XML --------------*- C++ -*-===//
//
// NCCL describes a machine in XML (NCCL_TOPO_FILE, NCCL_TOPO_DUMP_FILE):
//
//   <system version="1">
//     <cpu numaid="0" arch="x86_64" vendor="GenuineIntel" familyid="6" modelid="85">
//       <pci busid="0000:3b:00.0" class="0x030000" link_speed="8.0 GT/s PCIe" link_width="16">
//         <gpu dev="0" sm="86" rank="0" gdr="1"><nvlink target="..." count="4" tclass="0x030200"/></gpu>
//       </pci>
//       <nic><net name="eth0" dev="0" speed="100000" .../></nic>
//     </cpu>
//   </system>
//
// The reader checks every element and attribute the builder needs, converts
// them as NCCL does (class prefixes, PCIe generation strings, defaults) and
// keeps each element's location, so that the builder can point at the line
// of a duplicate bus id or a dangling NVLink. NCCL's own skips are kept: a
// <gpu> without rank and a <net> without dev are ignored, unknown elements too.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "compiler/topology/System.h"
#include "plan/Diagnostics.h"

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace pugi {
class xml_document;
}

namespace cclc::topo {

struct XmlNet {
  SourceLoc Loc;
  std::string Name;
  int Dev = 0;
  int SpeedMbps = 0; ///< As written; the builder applies NCCL's default for <= 0.
  int Port = 0;
  float Latency = 0;
  std::optional<uint64_t> Guid;
  int MaxConn = 32;
  bool Gdr = false;
  bool Coll = false;
};

struct XmlNic {
  SourceLoc Loc;
  std::vector<XmlNet> Nets;
};

struct XmlNvLink {
  SourceLoc Loc;
  int64_t Target = 0; ///< Bus id of the peer (only meaningful for GPU peers).
  int Count = 0;
  NodeType TargetType = NodeType::Nvs; ///< GPU, CPU, or anything else (an NVSwitch).
};

struct XmlC2c {
  SourceLoc Loc;
  int Count = 0;
  int BwMBps = 0; ///< Per link, MB/s as NCCL dumps it.
};

struct XmlGpu {
  SourceLoc Loc;
  int Dev = 0;
  int Rank = 0;
  int Sm = 0;
  bool Gdr = false;
  std::vector<XmlNvLink> NvLinks;
  std::vector<XmlC2c> C2cs;
};

struct XmlPciLink {
  SourceLoc Loc;
  int64_t Target = 0;
};

struct XmlPci {
  SourceLoc Loc;
  int64_t BusId = 0;
  NodeType Class = NodeType::Pci; ///< From the class prefix (0x03 GPU, 0x02 NIC, ...).
  uint64_t Device = 0;            ///< vendor, device, subsystem ids, 16 bits each.
  int Width = 16;                 ///< link_width; 0 already replaced by 16.
  int LaneSpeed = 60;             ///< Per lane, in 100 Mb/s (NCCL's kvDictPciGen).
  std::optional<XmlGpu> Gpu;      ///< Present only when the <gpu> has a rank.
  std::optional<XmlNic> Nic;
  std::vector<XmlPci> Children;
  std::vector<XmlPciLink> PciLinks;
};

struct XmlCpu {
  SourceLoc Loc;
  int NumaId = 0;
  std::string Affinity;
  CpuArch Arch = CpuArch::Unknown;
  CpuVendor Vendor = CpuVendor::Unknown;
  CpuModel Model = CpuModel::Undef;
  uint64_t HostHash = 0;
  /// <pci> and <nic> children in file order: NCCL numbers nodes in that order.
  std::vector<std::variant<XmlPci, XmlNic>> Children;
};

/// A parsed topology file.
struct TopoXml {
  SourceLoc Loc; ///< The <system> element.
  std::vector<XmlCpu> Cpus;
};

/// Parses the topology in buffer FileId of SM. Reports every problem found
/// (it does not stop at the first) and returns nullopt if there was an error.
std::optional<TopoXml> readTopoXml(uint32_t FileId, const SourceManager &SM,
                                   DiagnosticEngine &Diags);

/// How deeply the elements of a topology or graph file may nest. NCCL's
/// files nest about 10 deep (PCI switches in PCI switches); the readers
/// recurse, so a bound keeps hostile nesting from overflowing the stack.
inline constexpr int MaxXmlDepth = 64;

/// Parses buffer FileId into Doc; reports malformed XML at the offending
/// line and column, and elements nested more than MaxXmlDepth deep at the
/// first such element. Shared by the topology and graph readers.
bool loadXmlDocument(pugi::xml_document &Doc, uint32_t FileId, const SourceManager &SM,
                     DiagnosticEngine &Diags);

/// NCCL's busIdToInt64: "0000:3b:00.0" -> 0x3b000. False when Text has a
/// character that is not a hex digit, ':' or '.', or too many digits.
bool parseBusId(std::string_view Text, int64_t &BusId);

} // namespace cclc::topo
