//===- Machine.h - A topology file, searched and connected ------*- C++ -*-===//
//
// The whole topology pipeline for one machine description: read the XML,
// build the system graph, compute paths, search the ring and tree graphs and
// connect them across identical nodes. The compiler and `cclc topo` both
// start from here.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "compiler/topology/Connect.h"
#include "compiler/topology/System.h"
#include "compiler/topology/TopoGraph.h"

#include <optional>
#include <string>
#include <vector>

namespace cclc::topo {

/// The most identical nodes a machine is connected across (--nodes).
inline constexpr int MaxNodes = 4096;

struct Machine {
  System Sys;                    ///< Prepared for NumNodes (paths computed).
  std::vector<TopoGraph> Graphs; ///< Ring (id 0), tree (id 1), NVLS when found.
  Connection Conn;
  int NumNodes = 1;
  const TopoGraph &ringGraph() const;
  const TopoGraph &treeGraph() const;
};

/// The graph of Graphs with id Id (0 ring, 1 tree), which every search
/// produces.
const TopoGraph &graphWithId(const std::vector<TopoGraph> &Graphs, int Id);

/// True when the GPUs' ranks are 0 to n-1, as connecting nodes needs them
/// (duplicates are refused when the system is built); else false after an
/// error at each GPU out of range.
bool checkGpuRanks(const System &Sys, DiagnosticEngine &Diags);

/// Loads Path for a search under Env: the system with ranked GPUs, that NCCL
/// would not refuse and would keep as one node (checkPeerAccess); nullopt
/// after any error (reported through Diags).
std::optional<System> loadSearchableSystem(const std::string &Path, const NcclEnv &Env,
                                           SourceManager &SM, DiagnosticEngine &Diags);

/// The connect options NCCL's init takes from a prepared system.
ConnectOptions connectOptions(const System &Prepared, int NumNodes);

/// Loads Path and searches it for NumNodes nodes under Env; nullopt after
/// any error (reported through Diags).
std::optional<Machine> loadMachine(const std::string &Path, int NumNodes, const NcclEnv &Env,
                                   SourceManager &SM, DiagnosticEngine &Diags);

} // namespace cclc::topo
