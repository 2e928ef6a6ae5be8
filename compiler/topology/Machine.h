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

struct Machine {
  System Sys;                    ///< Prepared for NumNodes (paths computed).
  std::vector<TopoGraph> Graphs; ///< Ring (id 0), tree (id 1), NVLS when found.
  Connection Conn;
  int NumNodes = 1;
  const TopoGraph &ringGraph() const;
  const TopoGraph &treeGraph() const;
};

/// Loads Path and searches it for NumNodes nodes; nullopt after any error
/// (reported through Diags).
std::optional<Machine> loadMachine(const std::string &Path, int NumNodes, SourceManager &SM,
                                   DiagnosticEngine &Diags);

} // namespace cclc::topo
