//===- TopoBench.cpp - Time of the topology search per machine ------------===//
//
// Prints, for every topology given (or the project's own), the time of paths
// plus search (all graphs) for 1 and 64 identical nodes, best and mean over
// repeated runs, and whether every run printed the same graphs; then the best
// time to connect the searched ring and tree across those nodes.
//
//===----------------------------------------------------------------------===//

#include "compiler/topology/Connect.h"
#include "compiler/topology/Search.h"

#include <chrono>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

using namespace cclc;
using namespace cclc::topo;

namespace {

constexpr int Repeats = 10;

std::string searchText(const System &Sys, int Nodes) {
  std::ostringstream OS;
  for (const TopoGraph &G : searchAll(Sys, Nodes))
    printGraph(G, OS);
  return OS.str();
}

/// Milliseconds one call of F takes.
template <typename Fn> double timeMs(Fn &&F) {
  auto Start = std::chrono::steady_clock::now();
  F();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - Start)
      .count();
}

/// Best time over Repeats runs of connecting the ring and tree graphs.
double connectMs(const System &Sys, int Nodes) {
  std::vector<TopoGraph> Graphs = searchAll(Sys, Nodes);
  ConnectOptions Options{Nodes, Sys.minSm()};
  double Best = 1e30;
  for (int R = 0; R < Repeats; ++R)
    Best = std::min(Best, timeMs([&] { connectNodes(Graphs[0], Graphs[1], Options); }));
  return Best;
}

} // namespace

int main(int Argc, char **Argv) {
  std::vector<std::string> Files(Argv + 1, Argv + Argc);
  if (Files.empty())
    for (const char *Name : {"azure-ncv4", "dgx1-v100", "mesh8", "mesh8-broken-0-1",
                             "simai-hgx-8xa100", "yccl-4xa6000", "yccl-h800"})
      Files.push_back(std::string(CCLC_SOURCE_DIR) + "/test/topologies/" + Name + ".xml");
  std::printf("%-20s %5s %5s %10s %10s %10s %11s\n", "topology", "gpus", "nodes", "best ms",
              "mean ms", "identical", "connect ms");
  int Status = 0;
  for (const std::string &File : Files) {
    SourceManager SM;
    DiagnosticEngine Diags(SM);
    std::optional<System> Sys = loadSystem(File, SM, Diags);
    if (!Sys) {
      Status = 1;
      continue;
    }
    std::string Name = File.substr(File.find_last_of('/') + 1);
    for (int Nodes : {1, 64}) {
      std::string First = searchText(*Sys, Nodes);
      bool Identical = true;
      double Best = 1e30, Total = 0;
      for (int R = 0; R < Repeats; ++R) {
        std::string Text;
        double Ms = timeMs([&] { Text = searchText(*Sys, Nodes); });
        Best = std::min(Best, Ms);
        Total += Ms;
        Identical &= Text == First;
      }
      std::printf("%-20s %5d %5d %10.2f %10.2f %10s %11.3f\n", Name.c_str(),
                  Sys->count(NodeType::Gpu), Nodes, Best, Total / Repeats, Identical ? "yes" : "NO",
                  connectMs(*Sys, Nodes));
      if (!Identical)
        Status = 1;
    }
  }
  return Status;
}
