//===- TopoGraph.cpp - Channels found by the topology search --------------===//

#include "compiler/topology/TopoGraph.h"

#include <array>

namespace cclc::topo {

namespace {
constexpr std::array<std::string_view, 12> PathTypeNames = {
    "LOC", "NVL", "NVB", "C2C", "PIX", "PXB", "P2C", "PXN", "PHB", "SYS", "NET", "DIS"};
} // namespace

std::string_view pathTypeName(PathType Type) {
  return PathTypeNames[static_cast<size_t>(Type)];
}

bool parsePathType(std::string_view Name, PathType &Type) {
  for (size_t I = 0; I < PathTypeNames.size(); ++I)
    if (PathTypeNames[I] == Name) {
      Type = static_cast<PathType>(I);
      return true;
    }
  return false;
}

} // namespace cclc::topo
