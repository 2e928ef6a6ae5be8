//===- SystemPrint.cpp - Text, JSON and Graphviz forms of a System --------===//

#include "compiler/topology/SystemPrint.h"
#include "compiler/topology/Format.h"

#include <ostream>

namespace cclc::topo {

namespace {

/// The node with its type-specific details, as NCCL's ncclTopoPrintRec.
std::string nodeLabel(const System &Sys, NodeRef Ref) {
  const Node &N = Sys.node(Ref);
  std::string Name = nodeName(Sys, Ref);
  switch (Ref.Type) {
  case NodeType::Gpu: return Name + format(" (%d)", N.Gpu.Rank);
  case NodeType::Cpu:
    return Name + format(" (%d/%d/%d)", static_cast<int>(N.Cpu.Arch),
                         static_cast<int>(N.Cpu.Vendor), static_cast<int>(N.Cpu.Model));
  case NodeType::Pci: return Name + format(" (%llx)", static_cast<unsigned long long>(N.PciDevice));
  case NodeType::Net:
    return Name + format(" (%llx/%d/%f)", static_cast<unsigned long long>(N.Net.Asic), N.Net.Port,
                         static_cast<double>(N.Net.Bw));
  default: return Name;
  }
}

void printTree(const System &Sys, NodeRef Ref, std::optional<NodeRef> Prev, std::string Prefix,
               std::ostream &OS) {
  OS << Prefix << nodeLabel(Sys, Ref) << '\n';
  std::string Indent(Prefix.size(), ' ');
  for (const Link &L : Sys.node(Ref).Links) {
    std::string Head = Indent + format("+ %s[%2.1f] - ", std::string(linkTypeName(L.Type)).c_str(),
                                       static_cast<double>(L.Bw));
    if (L.Type == LinkType::Loc)
      OS << Head << nodeName(Sys, L.Remote) << '\n';
    else if (L.Type == LinkType::Pci && Prev && L.Remote == *Prev)
      continue;
    else if (L.Type == LinkType::Pci)
      printTree(Sys, L.Remote, Ref, Head, OS);
    else
      OS << Head
         << (L.Remote.Type == NodeType::Net ? nodeLabel(Sys, L.Remote) : nodeName(Sys, L.Remote))
         << '\n';
  }
}

void printPaths(const System &Sys, NodeRef Ref, std::ostream &OS) {
  OS << nodeName(Sys, Ref) << " :";
  const Node &N = Sys.node(Ref);
  for (int T = 0; T < NumNodeTypes; ++T)
    for (size_t I = 0; I < N.Paths[T].size(); ++I) {
      const Path &P = N.Paths[T][I];
      OS << ' ' << nodeName(Sys, {static_cast<NodeType>(T), static_cast<int>(I)})
         << format(" (%d/%.1f/%s)", P.count(), static_cast<double>(P.Bw),
                   std::string(pathTypeName(P.Type)).c_str());
    }
  OS << '\n';
}

std::string dotId(NodeRef Ref) {
  return std::string(nodeTypeName(Ref.Type)) + std::to_string(Ref.Index);
}

} // namespace

std::string nodeName(const System &Sys, NodeRef Ref) {
  return topoIdName(nodeTypeName(Ref.Type), Sys.node(Ref).Id);
}

void printSystem(const System &Sys, std::ostream &OS) {
  OS << format("=== System : maxBw %2.1f totalBw %2.1f ===\n", static_cast<double>(Sys.MaxBw),
               static_cast<double>(Sys.TotalBw));
  for (int C = 0; C < Sys.count(NodeType::Cpu); ++C)
    printTree(Sys, {NodeType::Cpu, C}, std::nullopt, "", OS);
  OS << "==========================================\n";
  for (NodeType T : {NodeType::Gpu, NodeType::Net})
    for (int I = 0; I < Sys.count(T); ++I)
      printPaths(Sys, {T, I}, OS);
}

nlohmann::json systemToJson(const System &Sys) {
  using nlohmann::json;
  json Nodes = json::array(), Links = json::array(), Paths = json::array();
  for (int T = 0; T < NumNodeTypes; ++T) {
    for (int I = 0; I < Sys.count(static_cast<NodeType>(T)); ++I) {
      NodeRef Ref{static_cast<NodeType>(T), I};
      const Node &N = Sys.node(Ref);
      json J = {{"name", nodeName(Sys, Ref)},
                {"type", nodeTypeName(Ref.Type)},
                {"index", I},
                {"id", N.Id}};
      if (N.Loc.isValid())
        J["line"] = N.Loc.Line;
      if (Ref.Type == NodeType::Gpu)
        J.update({{"rank", N.Gpu.Rank}, {"dev", N.Gpu.Dev}, {"sm", N.Gpu.Sm}, {"gdr", N.Gpu.Gdr}});
      else if (Ref.Type == NodeType::Net)
        J.update({{"dev", N.Net.Dev},   {"netName", N.Net.Name}, {"bw", N.Net.Bw},
                  {"port", N.Net.Port}, {"asic", N.Net.Asic},    {"gdr", N.Net.Gdr},
                  {"coll", N.Net.Coll}, {"maxChannels", N.Net.MaxChannels}});
      else if (Ref.Type == NodeType::Cpu)
        J.update({{"arch", static_cast<int>(N.Cpu.Arch)},
                  {"vendor", static_cast<int>(N.Cpu.Vendor)},
                  {"model", static_cast<int>(N.Cpu.Model)},
                  {"affinity", N.Cpu.Affinity}});
      else if (Ref.Type == NodeType::Pci)
        J["device"] = format("%016llx", static_cast<unsigned long long>(N.PciDevice));
      Nodes.push_back(std::move(J));
      for (const Link &L : N.Links)
        Links.push_back({{"from", nodeName(Sys, Ref)},
                         {"to", nodeName(Sys, L.Remote)},
                         {"type", linkTypeName(L.Type)},
                         {"bw", L.Bw}});
      for (int PT = 0; PT < NumNodeTypes; ++PT)
        for (size_t P = 0; P < N.Paths[PT].size(); ++P) {
          const Path &Pa = N.Paths[PT][P];
          json Hops = json::array();
          for (const LinkRef &Hop : Pa.Hops)
            Hops.push_back(nodeName(Sys, Sys.link(Hop).Remote));
          Paths.push_back({{"from", nodeName(Sys, Ref)},
                           {"to", nodeName(Sys, {static_cast<NodeType>(PT), static_cast<int>(P)})},
                           {"type", pathTypeName(Pa.Type)},
                           {"bw", Pa.Bw},
                           {"hops", std::move(Hops)}});
        }
    }
  }
  return {{"maxBw", Sys.MaxBw}, {"totalBw", Sys.TotalBw}, {"nodes", std::move(Nodes)},
          {"links", std::move(Links)}, {"paths", std::move(Paths)}};
}

void writeDot(const System &Sys, const std::vector<TopoGraph> &Graphs, std::ostream &OS) {
  static const char *Shapes[] = {"box3d", "diamond", "hexagon", "house", "ellipse", "oval"};
  static const char *Colors[] = {"red", "blue", "darkgreen", "orange", "purple", "brown"};
  OS << "graph topology {\n  node [fontname=\"Helvetica\"];\n  edge [fontname=\"Helvetica\", "
        "fontsize=10];\n";
  for (int T = 0; T < NumNodeTypes; ++T)
    for (int I = 0; I < Sys.count(static_cast<NodeType>(T)); ++I) {
      NodeRef Ref{static_cast<NodeType>(T), I};
      OS << "  " << dotId(Ref) << " [shape=" << Shapes[T] << ", label=\"" << nodeLabel(Sys, Ref)
         << "\"];\n";
    }
  // One edge per node pair and link type; both bandwidths when they differ.
  for (int T = 0; T < NumNodeTypes; ++T)
    for (int I = 0; I < Sys.count(static_cast<NodeType>(T)); ++I) {
      NodeRef From{static_cast<NodeType>(T), I};
      for (const Link &L : Sys.node(From).Links) {
        float Back = -1;
        for (const Link &B : Sys.node(L.Remote).Links)
          if (B.Remote == From && B.Type == L.Type)
            Back = B.Bw;
        bool Forward = std::make_pair(static_cast<int>(From.Type), From.Index) <
                       std::make_pair(static_cast<int>(L.Remote.Type), L.Remote.Index);
        if (!Forward && Back >= 0)
          continue; // Drawn from the other side.
        std::string Label = std::string(linkTypeName(L.Type)) + format(" %.1f", double(L.Bw));
        if (Back >= 0 && Back != L.Bw)
          Label += format("/%.1f", double(Back));
        OS << "  " << dotId(From) << " -- " << dotId(L.Remote) << " [label=\"" << Label << "\""
           << (Back < 0 ? ", dir=forward" : "") << "];\n";
      }
    }
  for (size_t G = 0; G < Graphs.size(); ++G) {
    const TopoGraph &Graph = Graphs[G];
    const char *Color = Colors[G % std::size(Colors)];
    for (int C = 0; C < Graph.NChannels && C < static_cast<int>(Graph.Intra.size()); ++C) {
      const std::vector<int> &Ranks = Graph.Intra[C];
      size_t Hops = Graph.Pat == Pattern::Ring ? Ranks.size() : Ranks.size() - 1;
      for (size_t H = 0; H < Hops && Ranks.size() > 1; ++H) {
        int A = Sys.gpuIndexOfRank(Ranks[H]);
        int B = Sys.gpuIndexOfRank(Ranks[(H + 1) % Ranks.size()]);
        if (A < 0 || B < 0)
          continue;
        OS << "  " << dotId({NodeType::Gpu, A}) << " -- " << dotId({NodeType::Gpu, B})
           << " [color=" << Color << ", style=bold, dir=forward, constraint=false, label=\"g"
           << Graph.Id << " c" << C << "\", fontcolor=" << Color << "];\n";
      }
    }
  }
  OS << "}\n";
}

} // namespace cclc::topo
