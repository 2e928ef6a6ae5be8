//===- TopoBench.cpp - Time of the topology search per machine ------------===//
//
// Prints, for every topology given (or the project's own), the time of paths
// plus search (all graphs) for 1 and 64 identical nodes, best and mean over
// repeated runs, and whether every run printed the same graphs.
//
//===----------------------------------------------------------------------===//

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

} // namespace

int main(int Argc, char **Argv) {
  std::vector<std::string> Files(Argv + 1, Argv + Argc);
  if (Files.empty())
    for (const char *Name : {"azure-ncv4", "dgx1-v100", "mesh8", "mesh8-broken-0-1",
                             "simai-hgx-8xa100", "yccl-4xa6000", "yccl-h800"})
      Files.push_back(std::string(CCLC_SOURCE_DIR) + "/test/topologies/" + Name + ".xml");
  std::printf("%-20s %5s %5s %10s %10s %10s\n", "topology", "gpus", "nodes", "best ms",
              "mean ms", "identical");
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
        auto Start = std::chrono::steady_clock::now();
        std::string Text = searchText(*Sys, Nodes);
        double Ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() -
                                                              Start)
                        .count();
        Best = std::min(Best, Ms);
        Total += Ms;
        Identical &= Text == First;
      }
      std::printf("%-20s %5d %5d %10.2f %10.2f %10s\n", Name.c_str(), Sys->count(NodeType::Gpu),
                  Nodes, Best, Total / Repeats, Identical ? "yes" : "NO");
      if (!Identical)
        Status = 1;
    }
  }
  return Status;
}
