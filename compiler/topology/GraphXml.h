//===- GraphXml.h - NCCL's graph XML (NCCL_GRAPH_FILE) ----------*- C++ -*-===//
//
// NCCL exchanges search results as XML: NCCL_GRAPH_DUMP_FILE writes the
// graphs it found, NCCL_GRAPH_FILE forces graphs instead of searching.
//
//   <graphs version="1">
//     <graph id="0" pattern="4" crossnic="0" nchannels="1" speedintra="10"
//            speedinter="10" latencyinter="0" typeintra="SYS" typeinter="PIX"
//            samechannels="1">
//       <channel><net dev="0"/><gpu dev="0"/><gpu dev="0x1"/><net dev="0"/></channel>
//     </graph>
//   </graphs>
//
// A channel lists the GPUs in visiting order by CUDA device number, between
// the NET it enters by and the NET it leaves by (nets only for multi-node
// graphs). NCCL up to 2.20 writes dev in decimal; 2.21 and later write
// "%#lx" (0, 0x1, 0x2, ...). The reader accepts both, telling them apart by
// the "0x" prefix, and remembers which one the file used so that a file read
// and written again comes out byte for byte as it went in.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "compiler/topology/TopoGraph.h"
#include "plan/Diagnostics.h"

#include <iosfwd>
#include <optional>
#include <vector>

namespace cclc::topo {

struct GraphXmlFile {
  /// The graphs in file order (NCCL dumps ids 0, 1, 4, 2, 3). Intra holds
  /// GPU ranks, translated from the file's device numbers.
  std::vector<TopoGraph> Graphs;
  /// Whether dev values are written in hex (NCCL >= 2.21) or decimal.
  bool HexDevs = true;
};

/// Reads the graph XML in buffer FileId. DevByRank[r] is the CUDA device
/// number of the GPU with rank r (NCCL matches channels to GPUs by it); every
/// channel must list each of them once, except NVLS channels (graph id 3),
/// which name only their head GPU. Every problem is reported with the element's location;
/// nullopt after any error.
std::optional<GraphXmlFile> readGraphXml(uint32_t FileId, const SourceManager &SM,
                                         DiagnosticEngine &Diags,
                                         const std::vector<int> &DevByRank);

/// Writes File as NCCL's dump does: two-space indentation, empty graphs as
/// self-closing elements, speeds in "%g", NVLS channels with only their head.
void writeGraphXml(const GraphXmlFile &File, const std::vector<int> &DevByRank, std::ostream &OS);

} // namespace cclc::topo
