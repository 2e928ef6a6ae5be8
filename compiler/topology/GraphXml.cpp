//===- GraphXml.cpp - NCCL's graph XML (NCCL_GRAPH_FILE) ------------------===//

#include "compiler/topology/GraphXml.h"
#include "compiler/topology/TopoXml.h"
#include "compiler/topology/Format.h"
#include "compiler/topology/Search.h"
#include "plan/Assert.h"

#include <pugixml.hpp>

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <map>
#include <ostream>
#include <string>

namespace cclc::topo {

namespace {

/// NCCL's id of the NVLS graph, whose channels name only their head GPU.
constexpr int NvlsGraphId = 3;

/// NCCL's kvDictLinkType names in path order, for the "expected" note.
constexpr const char *PathTypeList = "LOC, NVL, NVB, C2C, PIX, PXB, P2C, PXN, PHB, SYS, NET";

/// Parses a non-negative integer written in decimal or, with a 0x prefix, in
/// hex. False for anything else, including trailing characters and overflow.
bool parseInteger(std::string_view Text, int64_t &Value) {
  int Base = 10;
  if (Text.size() > 2 && Text[0] == '0' && (Text[1] == 'x' || Text[1] == 'X')) {
    Text.remove_prefix(2);
    Base = 16;
  }
  if (Text.empty())
    return false;
  auto [End, Ec] = std::from_chars(Text.data(), Text.data() + Text.size(), Value, Base);
  return Ec == std::errc() && End == Text.data() + Text.size() && Value >= 0;
}

/// Parses a finite, non-negative float as strtof reads it, whole string only.
bool parseFloat(const std::string &Text, float &Value) {
  if (Text.empty())
    return false;
  char *End = nullptr;
  Value = std::strtof(Text.c_str(), &End);
  return End == Text.c_str() + Text.size() && std::isfinite(Value) && Value >= 0;
}

/// NCCL writes device numbers with "%#lx" from 2.21 on, in decimal before.
std::string formatDev(int64_t Dev, bool Hex) {
  return Hex ? format("%#llx", static_cast<unsigned long long>(Dev))
             : format("%lld", static_cast<long long>(Dev));
}

/// NCCL's xmlSetAttrFloat: "%g".
std::string formatFloat(float Value) { return format("%g", static_cast<double>(Value)); }

class GraphXmlReader {
public:
  GraphXmlReader(uint32_t FileId, const SourceManager &SM, DiagnosticEngine &Diags,
                 const std::vector<int> &DevByRank)
      : FileId(FileId), Text(SM.getText(FileId)), SM(SM), Diags(Diags) {
    for (int Rank = 0; Rank < static_cast<int>(DevByRank.size()); ++Rank)
      RankOfDev[DevByRank[Rank]] = Rank;
    NumGpus = static_cast<int>(DevByRank.size());
  }

  std::optional<GraphXmlFile> read();

private:
  /// Where the element starts (its '<').
  SourceLoc locOf(pugi::xml_node Element) const {
    ptrdiff_t Offset = Element.offset_debug();
    return SM.locForOffset(FileId, Offset > 0 ? static_cast<size_t>(Offset - 1) : 0);
  }
  SourceRange rangeOf(pugi::xml_node Element) const;
  SourceRange rangeOf(pugi::xml_node Element, const char *Attr) const;

  /// The attribute's text, or nullopt after reporting that it is missing.
  std::optional<std::string> requireAttr(pugi::xml_node Element, const char *Attr);
  void reportInvalid(pugi::xml_node Element, const char *Attr, const std::string &Value);
  /// Reads attribute Attr through Parse, which is false for an invalid
  /// value; false after reporting a missing or invalid value.
  template <typename ParseFn>
  bool readAttr(pugi::xml_node Element, const char *Attr, ParseFn Parse);
  /// Reads an integer attribute in [Min, Max]; false after reporting.
  bool readInt(pugi::xml_node Element, const char *Attr, int64_t Min, int64_t Max, int64_t &Out);
  bool readFloat(pugi::xml_node Element, const char *Attr, float &Out);
  bool readPathType(pugi::xml_node Element, const char *Attr, PathType &Out);

  std::optional<TopoGraph> readGraph(pugi::xml_node Element);
  bool readChannel(pugi::xml_node Element, TopoGraph &Graph);
  void noteDevFormat(const std::string &Value);
  void warnUnknown(pugi::xml_node Element, pugi::xml_node Parent);

  uint32_t FileId;
  std::string_view Text;
  const SourceManager &SM;
  DiagnosticEngine &Diags;
  std::map<int64_t, int> RankOfDev;
  int NumGpus = 0;
  /// Set by the first dev value that tells the formats apart ("0" does not).
  std::optional<bool> HexDevs;
};

SourceRange GraphXmlReader::rangeOf(pugi::xml_node Element) const {
  SourceLoc Begin = locOf(Element);
  SourceLoc End = Begin;
  End.Col += 1 + static_cast<uint32_t>(std::string_view(Element.name()).size());
  return {Begin, End};
}

SourceRange GraphXmlReader::rangeOf(pugi::xml_node Element, const char *Attr) const {
  // pugixml keeps no attribute offsets: find `Attr=` inside the start tag.
  ptrdiff_t Offset = Element.offset_debug();
  size_t TagEnd = Text.find('>', static_cast<size_t>(Offset));
  std::string_view Tag =
      Text.substr(Offset, TagEnd == std::string_view::npos ? TagEnd : TagEnd - Offset);
  std::string_view Name(Attr);
  for (size_t Pos = Tag.find(Name); Pos != std::string_view::npos; Pos = Tag.find(Name, Pos + 1)) {
    size_t After = Pos + Name.size();
    while (After < Tag.size() && std::isspace(static_cast<unsigned char>(Tag[After])))
      ++After;
    if (Pos == 0 || !std::isspace(static_cast<unsigned char>(Tag[Pos - 1])) ||
        After >= Tag.size() || Tag[After] != '=')
      continue;
    // Underline name="value" up to the closing quote.
    size_t Quote = Tag.find_first_of("\"'", After);
    size_t Close = Quote == std::string_view::npos ? Quote : Tag.find(Tag[Quote], Quote + 1);
    size_t End = Close == std::string_view::npos ? After + 1 : Close + 1;
    return {SM.locForOffset(FileId, Offset + Pos), SM.locForOffset(FileId, Offset + End)};
  }
  return rangeOf(Element);
}

std::optional<std::string> GraphXmlReader::requireAttr(pugi::xml_node Element, const char *Attr) {
  pugi::xml_attribute A = Element.attribute(Attr);
  if (!A) {
    Diags.error(rangeOf(Element),
                "<" + std::string(Element.name()) + "> is missing the '" + Attr + "' attribute");
    return std::nullopt;
  }
  return std::string(A.value());
}

void GraphXmlReader::reportInvalid(pugi::xml_node Element, const char *Attr,
                                   const std::string &Value) {
  Diags.error(rangeOf(Element, Attr), "<" + std::string(Element.name()) + "> has invalid '" + Attr +
                                          "' value '" + Value + "'");
}

template <typename ParseFn>
bool GraphXmlReader::readAttr(pugi::xml_node Element, const char *Attr, ParseFn Parse) {
  std::optional<std::string> Value = requireAttr(Element, Attr);
  if (!Value)
    return false;
  if (!Parse(*Value)) {
    reportInvalid(Element, Attr, *Value);
    return false;
  }
  return true;
}

bool GraphXmlReader::readInt(pugi::xml_node Element, const char *Attr, int64_t Min, int64_t Max,
                             int64_t &Out) {
  return readAttr(Element, Attr, [&](const std::string &Value) {
    return parseInteger(Value, Out) && Out >= Min && Out <= Max;
  });
}

bool GraphXmlReader::readFloat(pugi::xml_node Element, const char *Attr, float &Out) {
  return readAttr(Element, Attr, [&](const std::string &Value) { return parseFloat(Value, Out); });
}

bool GraphXmlReader::readPathType(pugi::xml_node Element, const char *Attr, PathType &Out) {
  if (readAttr(Element, Attr, [&](const std::string &Value) {
        return parsePathType(Value, Out) && Out != PathType::DIS;
      }))
    return true;
  if (Element.attribute(Attr))
    Diags.note(SourceLoc{}, std::string("path types are ") + PathTypeList);
  return false;
}

void GraphXmlReader::noteDevFormat(const std::string &Value) {
  if (HexDevs || Value == "0")
    return;
  HexDevs = Value.size() > 2 && Value[0] == '0' && (Value[1] == 'x' || Value[1] == 'X');
}

void GraphXmlReader::warnUnknown(pugi::xml_node Element, pugi::xml_node Parent) {
  if (Element.type() != pugi::node_element)
    return;
  Diags.warning(rangeOf(Element), "unknown element <" + std::string(Element.name()) + "> in <" +
                                      Parent.name() + "> ignored");
}

bool GraphXmlReader::readChannel(pugi::xml_node Element, TopoGraph &Graph) {
  bool Ok = true;
  std::vector<int> Gpus;
  std::vector<int64_t> Nets;
  std::vector<bool> Seen(NumGpus, false);
  for (pugi::xml_node Sub : Element.children()) {
    std::string_view Name = Sub.name();
    if (Name != "gpu" && Name != "net") {
      warnUnknown(Sub, Element);
      continue;
    }
    int64_t Dev = 0;
    if (!readAttr(Sub, "dev", [&](const std::string &Value) {
          if (!parseInteger(Value, Dev))
            return false;
          noteDevFormat(Value);
          return true;
        })) {
      Ok = false;
      continue;
    }
    if (Name == "net") {
      if (Nets.size() == 2) {
        Diags.error(rangeOf(Sub), "<channel> has more than two <net> elements (entry and exit)");
        Ok = false;
      }
      Nets.push_back(Dev);
      continue;
    }
    auto It = RankOfDev.find(Dev);
    if (It == RankOfDev.end()) {
      Diags.error(rangeOf(Sub, "dev"), "<gpu> names device " + std::to_string(Dev) +
                                           ", which is not a GPU of the system");
      Ok = false;
      continue;
    }
    if (Seen[It->second]) {
      Diags.error(rangeOf(Sub, "dev"),
                  "<channel> lists GPU device " + std::to_string(Dev) + " twice");
      Ok = false;
      continue;
    }
    Seen[It->second] = true;
    Gpus.push_back(It->second);
  }
  if (!Ok)
    return false;

  // NVLS channels (graph id 3) name only their head GPU; the others visit
  // every GPU, so ring and tree channels are always whole GPU orders.
  bool Nvls = Graph.Id == NvlsGraphId;
  if (Nvls ? Gpus.empty() : static_cast<int>(Gpus.size()) != NumGpus) {
    Diags.error(rangeOf(Element), "<channel> lists " + std::to_string(Gpus.size()) +
                                      " GPUs; the system has " + std::to_string(NumGpus));
    return false;
  }
  if (Nets.size() == 1) {
    Diags.error(rangeOf(Element), "<channel> has one <net>; a channel enters and leaves the node "
                                  "through two <net> elements or uses none");
    return false;
  }
  bool FirstChannel = Graph.Intra.empty();
  if (!FirstChannel && Graph.Inter.empty() != Nets.empty()) {
    Diags.error(rangeOf(Element), "<channel> " + std::string(Nets.empty() ? "has no" : "has") +
                                      " <net> elements, unlike the channels before it");
    return false;
  }
  Graph.Intra.push_back(std::move(Gpus));
  if (!Nets.empty())
    Graph.Inter.push_back(std::move(Nets));
  return true;
}

std::optional<TopoGraph> GraphXmlReader::readGraph(pugi::xml_node Element) {
  TopoGraph Graph;
  int64_t Id = 0, Pat = 0, CrossNic = 0, NChannels = 0, SameChannels = 0;
  bool Ok = readInt(Element, "id", 0, 4, Id);
  // 1-5 are TopoGraph's patterns; NCCL 2.23 dumps its CollNet Direct graph
  // with pattern 6, which is kept as a number so the file writes back as read.
  Ok &= readInt(Element, "pattern", 1, 6, Pat);
  // crossnic 2 is NCCL 2.24's "cross NIC allowed"; it reads as crossing.
  Ok &= readInt(Element, "crossnic", 0, 2, CrossNic);
  Ok &= readInt(Element, "nchannels", 0, MaxChannels, NChannels);
  Ok &= readFloat(Element, "speedintra", Graph.BwIntra);
  Ok &= readFloat(Element, "speedinter", Graph.BwInter);
  // NCCL treats latencyinter as optional (older dumps lack it).
  if (Element.attribute("latencyinter"))
    Ok &= readFloat(Element, "latencyinter", Graph.LatencyInter);
  Ok &= readPathType(Element, "typeintra", Graph.TypeIntra);
  Ok &= readPathType(Element, "typeinter", Graph.TypeInter);
  Ok &= readInt(Element, "samechannels", 0, 1, SameChannels);
  if (!Ok)
    return std::nullopt;
  Graph.Id = static_cast<int>(Id);
  Graph.Pat = static_cast<Pattern>(Pat);
  Graph.CrossNic = CrossNic != 0;
  Graph.NChannels = static_cast<int>(NChannels);
  Graph.SameChannels = SameChannels != 0;

  int NumChannelElements = 0;
  for (pugi::xml_node Sub : Element.children()) {
    if (std::string_view(Sub.name()) != "channel") {
      warnUnknown(Sub, Element);
      continue;
    }
    ++NumChannelElements;
    Ok &= readChannel(Sub, Graph);
  }
  if (!Ok)
    return std::nullopt;
  if (NumChannelElements != NChannels) {
    Diags.error(rangeOf(Element, "nchannels"),
                "<graph> says nchannels=\"" + std::to_string(NChannels) + "\" but has " +
                    std::to_string(NumChannelElements) + " <channel> elements");
    return std::nullopt;
  }
  return Graph;
}

std::optional<GraphXmlFile> GraphXmlReader::read() {
  pugi::xml_document Doc;
  if (!loadXmlDocument(Doc, FileId, SM, Diags))
    return std::nullopt;
  pugi::xml_node Root = Doc.document_element();
  if (!Root) {
    Diags.error(SourceLoc{FileId, 1, 1}, "graph XML has no <graphs> element");
    return std::nullopt;
  }
  if (std::string_view(Root.name()) != "graphs") {
    Diags.error(rangeOf(Root),
                "expected <graphs> as the root element, found <" + std::string(Root.name()) + ">");
    return std::nullopt;
  }
  if (pugi::xml_attribute Version = Root.attribute("version");
      Version && std::string_view(Version.value()) != "1") {
    Diags.error(rangeOf(Root, "version"), "unsupported graph XML version '" +
                                              std::string(Version.value()) + "' (NCCL writes 1)");
    return std::nullopt;
  }

  GraphXmlFile File;
  std::map<int, pugi::xml_node> FirstOfId;
  bool Ok = true;
  for (pugi::xml_node Sub : Root.children()) {
    if (std::string_view(Sub.name()) != "graph") {
      warnUnknown(Sub, Root);
      continue;
    }
    std::optional<TopoGraph> Graph = readGraph(Sub);
    if (!Graph) {
      Ok = false;
      continue;
    }
    auto [It, Inserted] = FirstOfId.emplace(Graph->Id, Sub);
    if (!Inserted) {
      Diags.error(rangeOf(Sub, "id"), "duplicate <graph> id " + std::to_string(Graph->Id));
      Diags.note(rangeOf(It->second, "id"), "first defined here");
      Ok = false;
      continue;
    }
    File.Graphs.push_back(std::move(*Graph));
  }
  if (!Ok)
    return std::nullopt;
  File.HexDevs = HexDevs.value_or(true);
  return File;
}

} // namespace

std::optional<GraphXmlFile> readGraphXml(uint32_t FileId, const SourceManager &SM,
                                         DiagnosticEngine &Diags,
                                         const std::vector<int> &DevByRank) {
  return GraphXmlReader(FileId, SM, Diags, DevByRank).read();
}

void writeGraphXml(const GraphXmlFile &File, const std::vector<int> &DevByRank, std::ostream &OS) {
  OS << "<graphs version=\"1\">\n";
  for (const TopoGraph &G : File.Graphs) {
    OS << "  <graph id=\"" << G.Id << "\" pattern=\"" << static_cast<int>(G.Pat) << "\" crossnic=\""
       << (G.CrossNic ? 1 : 0) << "\" nchannels=\"" << G.NChannels << "\" speedintra=\""
       << formatFloat(G.BwIntra) << "\" speedinter=\"" << formatFloat(G.BwInter)
       << "\" latencyinter=\"" << formatFloat(G.LatencyInter) << "\" typeintra=\""
       << pathTypeName(G.TypeIntra) << "\" typeinter=\"" << pathTypeName(G.TypeInter)
       << "\" samechannels=\"" << (G.SameChannels ? 1 : 0) << "\"";
    if (G.NChannels == 0) {
      OS << "/>\n";
      continue;
    }
    OS << ">\n";
    CCLC_ASSERT(static_cast<int>(G.Intra.size()) >= G.NChannels,
                "graph has fewer channels than NChannels");
    for (int C = 0; C < G.NChannels; ++C) {
      OS << "    <channel>\n";
      bool HasNets = static_cast<int>(G.Inter.size()) > C;
      if (HasNets)
        OS << "      <net dev=\"" << formatDev(G.Inter[C][0], File.HexDevs) << "\"/>\n";
      for (int Rank : G.Intra[C]) {
        CCLC_ASSERT(Rank >= 0 && Rank < static_cast<int>(DevByRank.size()),
                    "channel rank has no GPU");
        OS << "      <gpu dev=\"" << formatDev(DevByRank[Rank], File.HexDevs) << "\"/>\n";
        // NCCL records only the head GPU of an NVLS channel.
        if (G.Id == NvlsGraphId)
          break;
      }
      if (HasNets)
        OS << "      <net dev=\"" << formatDev(G.Inter[C][1], File.HexDevs) << "\"/>\n";
      OS << "    </channel>\n";
    }
    OS << "  </graph>\n";
  }
  OS << "</graphs>\n";
}

} // namespace cclc::topo
