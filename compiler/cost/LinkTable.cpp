//===- LinkTable.cpp - The link between every pair of ranks ---------------===//

#include "compiler/cost/LinkTable.h"
#include "compiler/topology/Paths.h"
#include "compiler/topology/System.h"
#include "plan/Assert.h"

#include <algorithm>

namespace cclc::cost {

using topo::NodeType;
using topo::PathType;

/// The GPU index of the machine that runs a rank's local part.
static int gpuOf(const topo::System &Sys, const target::Target &T, int32_t Rank) {
  int Gpu = Sys.gpuIndexOfRank(T.localRankOf(Rank));
  CCLC_ASSERT(Gpu >= 0, "a rank of the target has no GPU in the machine");
  return Gpu;
}

/// The bandwidth from a GPU to the network: its path to the NIC it uses
/// first, or the default when the machine shows none.
static float netBw(const topo::System &Sys, int Gpu) {
  int Net = topo::localNet(Sys, Gpu, 0);
  if (Net < 0)
    return DefaultNetBwGBs;
  return Sys.path({NodeType::Gpu, Gpu}, {NodeType::Net, Net}).Bw;
}

/// The path between the GPUs of two ranks of one node.
static RankLink gpuLink(const topo::System &Sys, const target::Target &T, int32_t P, int32_t Q) {
  const topo::Path &Path =
      Sys.path({NodeType::Gpu, gpuOf(Sys, T, P)}, {NodeType::Gpu, gpuOf(Sys, T, Q)});
  return {Path.Type, Path.Bw, false};
}

LinkTable::LinkTable(const target::Target &T)
    : NRanks(T.NRanks), LocalRanks(std::max(T.LocalRanks, 1)), NNodes(T.NNodes),
      Machine(T.Machine != nullptr), Cpu(T.Cpu.has_value()),
      Links(static_cast<size_t>(T.NRanks) * T.NRanks) {
  bool HaveBest = false;
  for (int32_t P = 0; P < NRanks; ++P) {
    for (int32_t Q = 0; Q < NRanks; ++Q) {
      RankLink &L = Links[P * NRanks + Q];
      if (P == Q) {
        L = {PathType::LOC, topo::LocBw, false};
        continue;
      }
      if (T.Machine && T.nodeOf(P) != T.nodeOf(Q)) {
        const topo::System &Sys = *T.Machine;
        L = {PathType::NET, std::min(netBw(Sys, gpuOf(Sys, T, P)), netBw(Sys, gpuOf(Sys, T, Q))),
             true};
        continue;
      }
      L = T.Machine ? gpuLink(*T.Machine, T, P, Q)
          : T.Cpu   ? RankLink{PathType::SYS, float(T.Cpu->CopyGBs), false}
                    : DefaultLink;
      if (!HaveBest || L.Type < Best.Type || (L.Type == Best.Type && L.BwGBs > Best.BwGBs))
        Best = L;
      HaveBest = true;
    }
  }
}

std::string LinkTable::rankName(int32_t P) const {
  if (Cpu)
    return "rank " + std::to_string(P);
  std::string Gpu = "GPU" + std::to_string(P % LocalRanks);
  if (NNodes == 1)
    return Gpu;
  return "node " + std::to_string(P / LocalRanks) + " " + Gpu;
}

std::string linkClassName(PathType Type) {
  switch (Type) {
  case PathType::NVL: return "NVLink";
  case PathType::C2C: return "C2C link";
  default: return std::string(topo::pathTypeName(Type)) + " path";
  }
}

} // namespace cclc::cost
