//===- TopoXml.cpp - Reader for NCCL's topology XML -----------------------===//

#include "compiler/topology/TopoXml.h"

#include <pugixml.hpp>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace cclc::topo {

bool parseBusId(std::string_view Text, int64_t &BusId) {
  uint64_t Value = 0;
  int Digits = 0;
  for (char C : Text) {
    if (C == ':' || C == '.')
      continue;
    int Digit;
    if (C >= '0' && C <= '9')
      Digit = C - '0';
    else if (C >= 'a' && C <= 'f')
      Digit = C - 'a' + 10;
    else if (C >= 'A' && C <= 'F')
      Digit = C - 'A' + 10;
    else
      return false;
    // 15 hex digits: the top byte of a node id holds the host index.
    if (++Digits > 15)
      return false;
    Value = Value << 4 | static_cast<uint64_t>(Digit);
  }
  if (Digits == 0)
    return false;
  BusId = static_cast<int64_t>(Value);
  return true;
}

namespace {

/// A dictionary entry matched as a prefix of the attribute, as NCCL's
/// kvConvertToInt does ("0x030200" matches "0x03").
template <typename T> struct PrefixEntry {
  const char *Prefix;
  T Value;
};

template <typename T, size_t N>
std::optional<T> matchPrefix(std::string_view Text, const PrefixEntry<T> (&Dict)[N]) {
  for (const PrefixEntry<T> &E : Dict)
    if (Text.substr(0, std::strlen(E.Prefix)) == E.Prefix)
      return E.Value;
  return std::nullopt;
}

const PrefixEntry<NodeType> PciClasses[] = {{"0x060400", NodeType::Pci},
                                            {"0x068000", NodeType::Nvs},
                                            {"0x068001", NodeType::Cpu},
                                            {"0x03", NodeType::Gpu},
                                            {"0x02", NodeType::Nic}};
/// Per-lane speed in 100 Mb/s; the first five are the strings of Linux 5.6 and older.
const PrefixEntry<int> PciGens[] = {
    {"2.5 GT/s", 15},      {"5 GT/s", 30},        {"8 GT/s", 60},         {"16 GT/s", 120},
    {"32 GT/s", 240},      {"2.5 GT/s PCIe", 15}, {"5.0 GT/s PCIe", 30},  {"8.0 GT/s PCIe", 60},
    {"16.0 GT/s PCIe", 120}, {"32.0 GT/s PCIe", 240}, {"64.0 GT/s PCIe", 480}};
constexpr int DefaultLaneSpeed = 60;
const PrefixEntry<CpuArch> CpuArches[] = {
    {"x86_64", CpuArch::X86}, {"arm64", CpuArch::Arm}, {"ppc64", CpuArch::Power}};
const PrefixEntry<CpuVendor> CpuVendors[] = {{"GenuineIntel", CpuVendor::Intel},
                                             {"AuthenticAMD", CpuVendor::Amd},
                                             {"CentaurHauls", CpuVendor::Zhaoxin},
                                             {"  Shanghai  ", CpuVendor::Zhaoxin}};

/// Walks the pugixml tree, converting and checking as it goes. Errors do not
/// stop the walk, so one run reports every problem of the file.
class Reader {
public:
  Reader(uint32_t FileId, const SourceManager &SM, DiagnosticEngine &Diags)
      : FileId(FileId), SM(SM), Diags(Diags) {}

  std::optional<TopoXml> read();

private:
  SourceLoc locOf(const pugi::xml_node &N) const {
    // offset_debug points at the element name; the diagnostic points at '<'.
    ptrdiff_t Offset = N.offset_debug();
    return SM.locForOffset(FileId, Offset > 0 ? static_cast<size_t>(Offset - 1) : 0);
  }
  void error(const pugi::xml_node &N, const std::string &Msg) { Diags.error(locOf(N), Msg); }
  static std::string tag(const pugi::xml_node &N) { return std::string("<") + N.name() + ">"; }

  /// The attribute's text, or an error naming it when it is absent.
  std::optional<std::string_view> required(const pugi::xml_node &N, const char *Name);
  /// An integer attribute (decimal or 0x hex, as strtol base 0) within
  /// [Min, Max]; Default when absent, or an error when there is no default.
  std::optional<int64_t> integer(const pugi::xml_node &N, const char *Name, int64_t Min,
                                 int64_t Max, std::optional<int64_t> Default = std::nullopt);
  std::optional<int64_t> busId(const pugi::xml_node &N, const char *Name);

  std::optional<XmlCpu> readCpu(const pugi::xml_node &N);
  std::optional<XmlPci> readPci(const pugi::xml_node &N);
  std::optional<XmlGpu> readGpu(const pugi::xml_node &N);
  std::optional<XmlNic> readNic(const pugi::xml_node &N);
  std::optional<XmlNet> readNet(const pugi::xml_node &N);

  uint32_t FileId;
  const SourceManager &SM;
  DiagnosticEngine &Diags;
};

std::optional<std::string_view> Reader::required(const pugi::xml_node &N, const char *Name) {
  pugi::xml_attribute A = N.attribute(Name);
  if (!A) {
    error(N, tag(N) + " is missing required attribute '" + Name + "'");
    return std::nullopt;
  }
  return std::string_view(A.value());
}

std::optional<int64_t> Reader::integer(const pugi::xml_node &N, const char *Name, int64_t Min,
                                       int64_t Max, std::optional<int64_t> Default) {
  pugi::xml_attribute A = N.attribute(Name);
  if (!A && Default)
    return Default;
  std::optional<std::string_view> Text = required(N, Name);
  if (!Text)
    return std::nullopt;
  const char *Begin = A.value();
  char *End = nullptr;
  errno = 0;
  long long Value = std::strtoll(Begin, &End, 0);
  while (End && (*End == ' ' || *End == '\t'))
    ++End;
  if (End == Begin || *End != '\0' || errno == ERANGE) {
    error(N, "attribute '" + std::string(Name) + "' of " + tag(N) + " must be an integer, got '" +
                 std::string(*Text) + "'");
    return std::nullopt;
  }
  if (Value < Min || Value > Max) {
    error(N, "attribute '" + std::string(Name) + "' of " + tag(N) + " is out of range: " +
                 std::to_string(Value) + " (expected " + std::to_string(Min) + " to " +
                 std::to_string(Max) + ")");
    return std::nullopt;
  }
  return Value;
}

std::optional<int64_t> Reader::busId(const pugi::xml_node &N, const char *Name) {
  std::optional<std::string_view> Text = required(N, Name);
  if (!Text)
    return std::nullopt;
  int64_t Id;
  if (!parseBusId(*Text, Id)) {
    error(N, "attribute '" + std::string(Name) + "' of " + tag(N) +
                 " is not a PCI bus id (like 0000:3b:00.0): '" + std::string(*Text) + "'");
    return std::nullopt;
  }
  return Id;
}

std::optional<XmlNet> Reader::readNet(const pugi::xml_node &N) {
  XmlNet Net;
  Net.Loc = locOf(N);
  Net.Name = N.attribute("name").value();
  auto Dev = integer(N, "dev", 0, 1 << 20);
  // NCCL treats speed <= 0 as unknown ("some NICs define speed = -1").
  auto Speed = integer(N, "speed", -1, 100'000'000, 0);
  auto Port = integer(N, "port", 0, 1 << 16, 0);
  auto MaxConn = integer(N, "maxconn", 1, 1 << 20, 32);
  auto Gdr = integer(N, "gdr", 0, 1, 0);
  auto Coll = integer(N, "coll", 0, 1, 0);
  bool Ok = Dev && Speed && Port && MaxConn && Gdr && Coll;
  if (pugi::xml_attribute G = N.attribute("guid")) {
    char *End = nullptr;
    errno = 0;
    unsigned long long Guid = std::strtoull(G.value(), &End, 16);
    if (End == G.value() || *End != '\0' || errno == ERANGE) {
      error(N, "attribute 'guid' of <net> must be a hexadecimal number, got '" +
                   std::string(G.value()) + "'");
      Ok = false;
    }
    Net.Guid = Guid;
  }
  if (pugi::xml_attribute L = N.attribute("latency")) {
    char *End = nullptr;
    double Latency = std::strtod(L.value(), &End);
    if (End == L.value() || *End != '\0' || !(Latency >= 0 && Latency < 1e9)) {
      error(N, "attribute 'latency' of <net> must be a non-negative number, got '" +
                   std::string(L.value()) + "'");
      Ok = false;
    }
    Net.Latency = static_cast<float>(Latency);
  }
  if (!Ok)
    return std::nullopt;
  Net.Dev = static_cast<int>(*Dev);
  Net.SpeedMbps = static_cast<int>(*Speed);
  Net.Port = static_cast<int>(*Port);
  Net.MaxConn = static_cast<int>(*MaxConn);
  Net.Gdr = *Gdr != 0;
  Net.Coll = *Coll != 0;
  return Net;
}

std::optional<XmlNic> Reader::readNic(const pugi::xml_node &N) {
  XmlNic Nic;
  Nic.Loc = locOf(N);
  bool Ok = true;
  for (pugi::xml_node Sub : N.children("net")) {
    if (!Sub.attribute("dev"))
      continue; // NCCL ignores nets without a device number.
    if (std::optional<XmlNet> Net = readNet(Sub))
      Nic.Nets.push_back(std::move(*Net));
    else
      Ok = false;
  }
  if (!Ok)
    return std::nullopt;
  return Nic;
}

std::optional<XmlGpu> Reader::readGpu(const pugi::xml_node &N) {
  XmlGpu Gpu;
  Gpu.Loc = locOf(N);
  auto Dev = integer(N, "dev", 0, 1 << 20);
  auto Rank = integer(N, "rank", 0, 1 << 24);
  auto Sm = integer(N, "sm", 10, 1000);
  auto Gdr = integer(N, "gdr", 0, 1);
  bool Ok = Dev && Rank && Sm && Gdr;
  for (pugi::xml_node Sub : N.children()) {
    if (std::strcmp(Sub.name(), "nvlink") == 0) {
      XmlNvLink Link;
      Link.Loc = locOf(Sub);
      auto Count = integer(Sub, "count", 1, 1024);
      std::optional<std::string_view> TClass = required(Sub, "tclass");
      if (!Count || !TClass) {
        Ok = false;
        continue;
      }
      Link.Count = static_cast<int>(*Count);
      std::optional<NodeType> Class = matchPrefix(*TClass, PciClasses);
      Link.TargetType = Class == NodeType::Gpu ? NodeType::Gpu
                        : Class == NodeType::Cpu ? NodeType::Cpu
                                                 : NodeType::Nvs;
      if (Link.TargetType == NodeType::Gpu) {
        std::optional<int64_t> Target = busId(Sub, "target");
        if (!Target) {
          Ok = false;
          continue;
        }
        Link.Target = *Target;
      }
      Gpu.NvLinks.push_back(Link);
    } else if (std::strcmp(Sub.name(), "c2c") == 0) {
      auto Count = integer(Sub, "count", 1, 1024);
      auto Bw = integer(Sub, "bw", 1, 100'000'000);
      if (!Count || !Bw) {
        Ok = false;
        continue;
      }
      Gpu.C2cs.push_back({locOf(Sub), static_cast<int>(*Count), static_cast<int>(*Bw)});
    }
  }
  if (!Ok)
    return std::nullopt;
  Gpu.Dev = static_cast<int>(*Dev);
  Gpu.Rank = static_cast<int>(*Rank);
  Gpu.Sm = static_cast<int>(*Sm);
  Gpu.Gdr = *Gdr != 0;
  return Gpu;
}

std::optional<XmlPci> Reader::readPci(const pugi::xml_node &N) {
  XmlPci Pci;
  Pci.Loc = locOf(N);
  std::optional<int64_t> BusId = busId(N, "busid");
  std::optional<std::string_view> Class = required(N, "class");
  auto Width = integer(N, "link_width", 0, 32);
  std::optional<std::string_view> Speed = required(N, "link_speed");
  bool Ok = BusId && Class && Width && Speed;
  if (Class)
    Pci.Class = matchPrefix(*Class, PciClasses).value_or(NodeType::Pci);
  if (Width)
    Pci.Width = *Width == 0 ? 16 : static_cast<int>(*Width); // 0: not reported by /sys.
  if (Speed) {
    std::optional<int> Lane = matchPrefix(*Speed, PciGens);
    if (!Lane && !Speed->empty())
      Diags.warning(locOf(N), "unknown link_speed '" + std::string(*Speed) +
                                  "'; assuming 8 GT/s as NCCL does");
    Pci.LaneSpeed = Lane.value_or(DefaultLaneSpeed);
  }
  // The four ids make the 64-bit device NCCL matches BCM switches with.
  const char *IdNames[] = {"vendor", "device", "subsystem_vendor", "subsystem_device"};
  for (int I = 0; I < 4; ++I) {
    if (!N.attribute(IdNames[I]))
      continue;
    if (std::optional<int64_t> Id = integer(N, IdNames[I], 0, 0xffff))
      Pci.Device |= static_cast<uint64_t>(*Id) << (48 - 16 * I);
    else
      Ok = false;
  }
  for (pugi::xml_node Sub : N.children()) {
    std::string_view Name = Sub.name();
    if (Name == "gpu") {
      if (!Sub.attribute("rank"))
        continue; // NCCL skips GPUs that no rank of this job drives.
      if (Pci.Gpu) {
        error(Sub, "<pci> has more than one <gpu>");
        Ok = false;
      } else if (std::optional<XmlGpu> Gpu = readGpu(Sub)) {
        Pci.Gpu = std::move(*Gpu);
      } else {
        Ok = false;
      }
    } else if (Name == "nic") {
      if (Pci.Nic) {
        error(Sub, "<pci> has more than one <nic>");
        Ok = false;
      } else if (std::optional<XmlNic> Nic = readNic(Sub)) {
        Pci.Nic = std::move(*Nic);
      } else {
        Ok = false;
      }
    } else if (Name == "pci") {
      if (std::optional<XmlPci> Child = readPci(Sub))
        Pci.Children.push_back(std::move(*Child));
      else
        Ok = false;
    } else if (Name == "pcilink") {
      if (std::optional<int64_t> Target = busId(Sub, "target"))
        Pci.PciLinks.push_back({locOf(Sub), *Target});
      else
        Ok = false;
    }
  }
  if (!Ok)
    return std::nullopt;
  Pci.BusId = *BusId;
  return Pci;
}

std::optional<XmlCpu> Reader::readCpu(const pugi::xml_node &N) {
  XmlCpu Cpu;
  Cpu.Loc = locOf(N);
  auto NumaId = integer(N, "numaid", -1, 1 << 16);
  std::optional<std::string_view> Arch = required(N, "arch");
  bool Ok = NumaId && Arch;
  Cpu.Affinity = N.attribute("affinity").value();
  if (pugi::xml_attribute Hash = N.attribute("host_hash")) {
    char *End = nullptr;
    errno = 0;
    Cpu.HostHash = std::strtoull(Hash.value(), &End, 16);
    if (End == Hash.value() || *End != '\0' || errno == ERANGE) {
      error(N, "attribute 'host_hash' of <cpu> must be a hexadecimal number, got '" +
                   std::string(Hash.value()) + "'");
      Ok = false;
    }
  }
  if (Arch)
    Cpu.Arch = matchPrefix(*Arch, CpuArches).value_or(CpuArch::Unknown);
  if (Cpu.Arch == CpuArch::X86) {
    std::optional<std::string_view> Vendor = required(N, "vendor");
    Ok &= Vendor.has_value();
    if (Vendor)
      Cpu.Vendor = matchPrefix(*Vendor, CpuVendors).value_or(CpuVendor::Unknown);
    if (Cpu.Vendor == CpuVendor::Intel || Cpu.Vendor == CpuVendor::Zhaoxin) {
      auto Family = integer(N, "familyid", 0, 0xffff);
      auto Model = integer(N, "modelid", 0, 0xffff);
      Ok &= Family && Model;
      if (Family && Model && Cpu.Vendor == CpuVendor::Intel)
        Cpu.Model = *Family != 6      ? CpuModel::IntelBdw
                    : *Model >= 0xCF ? CpuModel::IntelErp
                    : *Model >= 0x8F ? CpuModel::IntelSrp
                    : *Model >= 0x55 ? CpuModel::IntelSkl
                                     : CpuModel::IntelBdw;
      else if (Family && Model && *Family == 7 && *Model == 0x5B)
        Cpu.Model = CpuModel::Yongfeng;
    }
  }
  for (pugi::xml_node Sub : N.children()) {
    std::string_view Name = Sub.name();
    if (Name == "pci") {
      if (std::optional<XmlPci> Pci = readPci(Sub))
        Cpu.Children.emplace_back(std::move(*Pci));
      else
        Ok = false;
    } else if (Name == "nic") {
      if (std::optional<XmlNic> Nic = readNic(Sub))
        Cpu.Children.emplace_back(std::move(*Nic));
      else
        Ok = false;
    }
  }
  if (!Ok)
    return std::nullopt;
  Cpu.NumaId = static_cast<int>(*NumaId);
  return Cpu;
}

std::optional<TopoXml> Reader::read() {
  pugi::xml_document Doc;
  if (!loadXmlDocument(Doc, FileId, SM, Diags))
    return std::nullopt;
  pugi::xml_node System = Doc.child("system");
  if (!System) {
    pugi::xml_node First = Doc.first_child();
    Diags.error(First ? locOf(First) : SM.locForOffset(FileId, 0),
                "not an NCCL topology: the top element must be <system>");
    return std::nullopt;
  }
  TopoXml Xml;
  Xml.Loc = locOf(System);
  bool Ok = true;
  for (pugi::xml_node Cpu : System.children("cpu")) {
    if (std::optional<XmlCpu> C = readCpu(Cpu))
      Xml.Cpus.push_back(std::move(*C));
    else
      Ok = false;
  }
  if (!Ok)
    return std::nullopt;
  return Xml;
}

} // namespace

bool loadXmlDocument(pugi::xml_document &Doc, uint32_t FileId, const SourceManager &SM,
                     DiagnosticEngine &Diags) {
  std::string_view Text = SM.getText(FileId);
  pugi::xml_parse_result Result =
      Doc.load_buffer(Text.data(), Text.size(), pugi::parse_default, pugi::encoding_utf8);
  if (!Result) {
    Diags.error(SM.locForOffset(FileId, static_cast<size_t>(Result.offset)),
                std::string("malformed XML: ") + Result.description());
    return false;
  }
  // The readers recurse into nested elements (<pci> in <pci>): bound the
  // depth first, walking the tree without recursion.
  int Depth = 1;
  for (pugi::xml_node N = Doc.first_child(); N;) {
    if (Depth > MaxXmlDepth && N.type() == pugi::node_element) {
      ptrdiff_t Offset = N.offset_debug();
      Diags.error(SM.locForOffset(FileId, Offset > 0 ? static_cast<size_t>(Offset - 1) : 0),
                  "<" + std::string(N.name()) + "> is nested " + std::to_string(Depth) +
                      " elements deep; cclc reads XML nested at most " +
                      std::to_string(MaxXmlDepth) + " deep");
      return false;
    }
    if (pugi::xml_node Child = N.first_child()) {
      N = Child;
      ++Depth;
      continue;
    }
    while (Depth > 0 && !N.next_sibling()) {
      N = N.parent();
      --Depth;
    }
    if (Depth == 0)
      break;
    N = N.next_sibling();
  }
  return true;
}

std::optional<TopoXml> readTopoXml(uint32_t FileId, const SourceManager &SM,
                                   DiagnosticEngine &Diags) {
  return Reader(FileId, SM, Diags).read();
}

} // namespace cclc::topo
