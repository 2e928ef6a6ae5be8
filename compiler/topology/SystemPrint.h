//===- SystemPrint.h - Text, JSON and Graphviz forms of a System -*- C++ -*-===//
//
// What `cclc topo --emit=text|json|dot` shows: NCCL's own dump of the graph
// (ncclTopoPrint: "=== System : maxBw ... ===", the link tree from each CPU,
// then the paths of every GPU and NET), a JSON document with the nodes,
// links and paths for tools, and a Graphviz picture of the machine on which
// the channels of searched graphs can be drawn.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "compiler/topology/System.h"
#include "compiler/topology/TopoGraph.h"

#include <nlohmann/json.hpp>

#include <iosfwd>
#include <string>
#include <vector>

namespace cclc::topo {

/// NCCL's printed name of a node: "GPU/0-3b000", "NET/0-2", "CPU/0-1".
std::string nodeName(const System &Sys, NodeRef Ref);

/// NCCL's ncclTopoPrint: the maxBw/totalBw line, the link tree under each
/// CPU, a separator line, then one paths line per GPU and per NET.
void printSystem(const System &Sys, std::ostream &OS);

/// The nodes (with their attributes), links and, when computed, paths of Sys.
nlohmann::json systemToJson(const System &Sys);

/// Graphviz of the machine: nodes grouped by CPU, links labelled with their
/// type and bandwidth (both directions merged when equal). Each graph in
/// Graphs adds its channels as coloured edges between consecutive GPUs.
void writeDot(const System &Sys, const std::vector<TopoGraph> &Graphs, std::ostream &OS);

} // namespace cclc::topo
