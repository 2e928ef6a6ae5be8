//===- TopoCommand.cpp - cclc topo ----------------------------------------===//
//
// cclc topo FILE [--nodes N] [--graph GRAPH.xml] [--emit=text|graph-xml|json|dot]
//                [NCCL knobs: --p2p-level, --no-p2p, --cross-nic, ...]
//
// Reads an NCCL topology, searches its ring and tree channels as NCCL's init
// does for N identical nodes under the NCCL environment (or takes them from
// an NCCL graph XML, as NCCL_GRAPH_FILE makes NCCL do), connects them across
// the nodes and shows the result. The text form starts with the effective
// knobs, then NCCL's own INFO lines so that it compares with an
// NCCL_DEBUG=INFO log line by line.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"
#include "InputOutput.h"
#include "NcclOptions.h"

#include "compiler/topology/Connect.h"
#include "compiler/topology/GraphXml.h"
#include "compiler/topology/Machine.h"
#include "compiler/topology/Search.h"
#include "compiler/topology/SystemPrint.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <iostream>
#include <optional>
#include <set>

namespace cclc::driver {

namespace {

using namespace cclc::topo;

struct TopoOptions {
  std::string File;
  int Nodes = 1;
  std::string GraphFile;
  std::string Emit = "text";
  NcclEnvOptions Nccl;
};

/// The CUDA device number of each GPU rank (0..n-1, loadSearchableSystem
/// checks them), which graph XML names GPUs by.
std::vector<int> devicesByRank(const System &Sys) {
  std::vector<int> Devs(Sys.count(NodeType::Gpu), -1);
  for (const Node &Gpu : Sys.nodes(NodeType::Gpu))
    Devs[Gpu.Gpu.Rank] = Gpu.Gpu.Dev;
  return Devs;
}

/// NCCL_GRAPH_FILE: a graph of the file that has channels replaces the
/// searched graph with its id; graphs the search does not produce (CollNet)
/// are kept after the searched ones. Returns the ids taken from the file.
/// As NCCL, a cross-NIC graph is not taken when NCCL_CROSS_NIC is 0.
std::set<int> applyGraphFile(std::vector<TopoGraph> &Graphs, const GraphXmlFile &File,
                             const NcclEnv &Env) {
  std::set<int> Loaded;
  for (const TopoGraph &FromFile : File.Graphs) {
    if (FromFile.CrossNic && Env.CrossNic.Value == 0)
      continue;
    auto Searched = std::find_if(Graphs.begin(), Graphs.end(),
                                 [&](const TopoGraph &G) { return G.Id == FromFile.Id; });
    if (Searched == Graphs.end()) {
      Graphs.push_back(FromFile);
    } else if (FromFile.NChannels > 0) {
      *Searched = FromFile;
      Loaded.insert(FromFile.Id);
    }
  }
  return Loaded;
}

nlohmann::json graphToJson(const TopoGraph &G) {
  nlohmann::json Channels = nlohmann::json::array();
  for (size_t C = 0; C < G.Intra.size(); ++C) {
    nlohmann::json Channel = {{"gpus", G.Intra[C]}};
    if (C < G.Inter.size())
      Channel["nets"] = G.Inter[C];
    Channels.push_back(std::move(Channel));
  }
  return {{"id", G.Id},
          {"pattern", static_cast<int>(G.Pat)},
          {"crossNic", G.CrossNic},
          {"nChannels", G.NChannels},
          {"bwIntra", G.BwIntra},
          {"bwInter", G.BwInter},
          {"latencyInter", G.LatencyInter},
          {"typeIntra", pathTypeName(G.TypeIntra)},
          {"typeInter", pathTypeName(G.TypeInter)},
          {"sameChannels", G.SameChannels},
          {"channels", std::move(Channels)}};
}

int runTopo(const TopoOptions &Opts, const CommonOptions &Common) {
  SourceManager SM;
  DiagnosticEngine Diags(SM);
  configure(Diags, Common);

  std::optional<NcclEnv> Env = readNcclEnv(Opts.Nccl, Diags);
  if (!Env)
    return 1;
  std::optional<System> Sys = loadSearchableSystem(Opts.File, *Env, SM, Diags);
  if (!Sys || Diags.hasErrors())
    return 1;
  std::vector<int> Devs = devicesByRank(*Sys);

  std::vector<TopoGraph> Graphs = searchAll(*Sys, Opts.Nodes);
  GraphXmlFile Out;
  std::set<int> Loaded;
  if (!Opts.GraphFile.empty()) {
    std::optional<uint32_t> Id = loadSource(SM, Diags, Opts.GraphFile);
    if (!Id)
      return 1;
    std::optional<GraphXmlFile> File = readGraphXml(*Id, SM, Diags, Devs);
    if (!File || Diags.hasErrors())
      return 1;
    Loaded = applyGraphFile(Graphs, *File, *Env);
    Out.HexDevs = File->HexDevs;
  }

  // What NCCL's init searched on: paths, trimmed for the node count.
  System Prepared = *Sys;
  prepareSystem(Prepared, Opts.Nodes);
  Connection Conn = connectNodes(graphWithId(Graphs, 0), graphWithId(Graphs, 1),
                                 connectOptions(Prepared, Opts.Nodes));

  if (Opts.Emit == "graph-xml") {
    Out.Graphs = Graphs;
    writeGraphXml(Out, Devs, std::cout);
  } else if (Opts.Emit == "json") {
    nlohmann::json J = {{"settings", ncclEnvToJson(Prepared)},
                        {"system", systemToJson(Prepared)},
                        {"graphs", nlohmann::json::array()},
                        {"connection", connectionToJson(Conn)}};
    for (const TopoGraph &G : Graphs)
      J["graphs"].push_back(graphToJson(G));
    std::cout << J.dump(2) << '\n';
  } else if (Opts.Emit == "dot") {
    writeDot(Prepared, Graphs, std::cout);
  } else {
    printNcclEnv(Prepared, std::cout);
    printSystem(Prepared, std::cout);
    for (const TopoGraph &G : Graphs) {
      if (Loaded.count(G.Id))
        std::cout << "Search " << G.Id << " : " << G.NChannels
                  << " channels loaded from XML graph\n";
      printGraph(G, std::cout);
    }
    printConnection(Conn, std::cout);
  }
  return 0;
}

} // namespace

void addTopoCommand(CLI::App &App, const CommonOptions &Common, int &ExitCode) {
  CLI::App *Cmd = App.add_subcommand(
      "topo", "Search and connect the channels of an NCCL topology (NCCL_TOPO_FILE format)");
  auto Opts = std::make_shared<TopoOptions>();
  Cmd->add_option("file", Opts->File, "Topology XML file (default: the file NCCL_TOPO_FILE names)");
  Cmd->add_option("--nodes", Opts->Nodes, "Number of identical nodes to connect")
      ->check(CLI::Range(1, MaxNodes))
      ->capture_default_str();
  Cmd->add_option("--graph", Opts->GraphFile,
                  "Take channels from an NCCL graph XML (NCCL_GRAPH_FILE) instead of searching");
  Cmd->add_option("--emit", Opts->Emit, "What to print")
      ->check(CLI::IsMember({"text", "graph-xml", "json", "dot"}))
      ->capture_default_str();
  addNcclOptions(*Cmd, Opts->Nccl);
  Cmd->callback([Opts, &Common, &ExitCode] {
    Opts->File = topologyFileOrEnvironment(Opts->File, "file");
    if (Opts->File.empty())
      throw CLI::RequiredError("topo needs a topology: FILE or NCCL_TOPO_FILE");
    ExitCode = runTopo(*Opts, Common);
  });
}

} // namespace cclc::driver
