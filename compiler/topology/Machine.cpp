//===- Machine.cpp - A topology file, searched and connected --------------===//

#include "compiler/topology/Machine.h"
#include "compiler/topology/Paths.h"
#include "compiler/topology/Search.h"
#include "plan/Assert.h"

#include <algorithm>

namespace cclc::topo {

const TopoGraph &graphWithId(const std::vector<TopoGraph> &Graphs, int Id) {
  auto It = std::find_if(Graphs.begin(), Graphs.end(),
                         [Id](const TopoGraph &G) { return G.Id == Id; });
  CCLC_ASSERT(It != Graphs.end(), "searchAll always produces ring and tree graphs");
  return *It;
}

const TopoGraph &Machine::ringGraph() const { return graphWithId(Graphs, 0); }
const TopoGraph &Machine::treeGraph() const { return graphWithId(Graphs, 1); }

bool checkGpuRanks(const System &Sys, DiagnosticEngine &Diags) {
  int NumGpus = Sys.count(NodeType::Gpu);
  bool Ok = true;
  for (const Node &Gpu : Sys.nodes(NodeType::Gpu))
    if (Gpu.Gpu.Rank < 0 || Gpu.Gpu.Rank >= NumGpus) {
      Diags.error(Gpu.Loc, "GPU rank " + std::to_string(Gpu.Gpu.Rank) + " is out of range: the " +
                               std::to_string(NumGpus) + " GPUs of a node need ranks 0 to " +
                               std::to_string(NumGpus - 1));
      Ok = false;
    }
  return Ok;
}

std::optional<System> loadSearchableSystem(const std::string &Path, const NcclEnv &Env,
                                           SourceManager &SM, DiagnosticEngine &Diags) {
  std::optional<System> Sys = loadSystem(Path, SM, Diags);
  if (!Sys || !checkGpuRanks(*Sys, Diags))
    return std::nullopt;
  Sys->Env = Env;
  if (!checkPeerAccess(*Sys, Diags))
    return std::nullopt;
  return Sys;
}

ConnectOptions connectOptions(const System &Prepared, int NumNodes) {
  return ConnectOptions{NumNodes, Prepared.minSm(), Prepared.Env.MinChannels.Value,
                        Prepared.Env.MaxChannels.Value};
}

std::optional<Machine> loadMachine(const std::string &Path, int NumNodes, const NcclEnv &Env,
                                   SourceManager &SM, DiagnosticEngine &Diags) {
  std::optional<System> Sys = loadSearchableSystem(Path, Env, SM, Diags);
  if (!Sys)
    return std::nullopt;
  Machine M;
  M.NumNodes = NumNodes;
  M.Graphs = searchAll(*Sys, NumNodes);
  M.Sys = std::move(*Sys);
  prepareSystem(M.Sys, NumNodes);
  M.Conn = connectNodes(M.ringGraph(), M.treeGraph(), connectOptions(M.Sys, NumNodes));
  return M;
}

} // namespace cclc::topo
