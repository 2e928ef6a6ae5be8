//===- Search.h - Channel search over a System -----------------*- C++ -*-===//
//
// NCCL's ncclTopoCompute: for one pattern (ring, tree, split tree, balanced
// tree, NVLS) find as many channels as possible at the highest speed of the
// speed table, relaxing path types, channel sameness and cross-NIC use in a
// first pass and raising the speed in a second. The search is a backtracking
// walk bounded by iteration budgets (NCCL's "timeouts" are step counters
// too), so it is deterministic: the same System always gives the same graphs.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "compiler/topology/System.h"
#include "compiler/topology/TopoGraph.h"

#include <iosfwd>
#include <string>
#include <vector>

namespace cclc::topo {

/// NCCL's MAXCHANNELS.
constexpr int MaxChannels = 32;

/// What NCCL's init does before searching, for NumNodes identical nodes:
/// paths, trim (NETs go away with one node), paths again, then maxBw/totalBw.
void prepareSystem(System &Sys, int NumNodes);

/// NCCL's ncclTopoSearchInit: sets Sys.MaxBw and Sys.TotalBw from the paths.
void searchInit(System &Sys);

/// Runs the search for one graph on a prepared System. Sys is used as scratch
/// (bandwidth is reserved and released) and is unchanged afterwards.
/// Graph.Id, Pat, MinChannels and MaxChannels are the inputs.
void computeGraph(System &Sys, TopoGraph &Graph);

/// The graphs NCCL's init searches, on a copy of Sys prepared for NumNodes
/// nodes: ring (id 0), balanced tree (id 1, as many channels as the ring) and
/// NVLS (id 3) when the node has an NVSwitch and every GPU is sm90 or newer.
std::vector<TopoGraph> searchAll(const System &Sys, int NumNodes);

/// NCCL's one-line summary of a graph:
/// "Pattern 4, crossNic 0, nChannels 2, bw 10.000000/10.000000, type SYS/PIX, sameChannels 1".
std::string graphSummary(const TopoGraph &Graph);

/// NCCL's ncclTopoPrintGraph: the summary, then one line per channel,
/// "  0 : NET/0-0 GPU/0 GPU/1 NET/0-0" (NETs only when the graph has them).
void printGraph(const TopoGraph &Graph, std::ostream &OS);

} // namespace cclc::topo
