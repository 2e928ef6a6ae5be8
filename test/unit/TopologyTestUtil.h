//===- TopologyTestUtil.h - Loading topologies in unit tests ---*- C++ -*-===//
//
// The topology tests read the project's copies in test/topologies and, when
// the shared data is present beside the checkout, the originals too.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "compiler/topology/System.h"
#include "compiler/topology/TopoXml.h"

#include <filesystem>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace cclc::topo::test {

/// The topologies shipped with the project (test/topologies).
inline const std::vector<std::string> &projectTopologies() {
  static const std::vector<std::string> Names = {
      "azure-ncv4", "azure-ndv4", "azure-ndv5", "dgx1-v100", "mesh8-broken-0-1",
      "mesh8",      "simai-hgx-8xa100", "yccl-4xa6000", "yccl-h800"};
  return Names;
}

inline std::string projectTopology(const std::string &Name) {
  return std::string(CCLC_SOURCE_DIR) + "/test/topologies/" + Name + ".xml";
}

/// The shared copy, or an empty string when the shared data is absent.
inline std::string sharedTopology(const std::string &Name) {
  std::string Path = std::string(CCLC_SHARED_DIR) + "/topologies/" + Name + ".xml";
  return std::filesystem::exists(Path) ? Path : std::string();
}

/// A load with its own source manager and captured diagnostics.
struct Load {
  SourceManager SM;
  std::ostringstream Out;
  DiagnosticEngine Diags{SM, Out};
  std::optional<System> Sys;

  std::string text() const { return Out.str(); }
};

inline std::unique_ptr<Load> loadFile(const std::string &Path) {
  auto L = std::make_unique<Load>();
  L->Sys = loadSystem(Path, L->SM, L->Diags);
  return L;
}

inline std::unique_ptr<Load> loadText(const std::string &Text) {
  auto L = std::make_unique<Load>();
  uint32_t Id = L->SM.addBuffer("topo.xml", Text);
  if (std::optional<TopoXml> Xml = readTopoXml(Id, L->SM, L->Diags))
    L->Sys = buildSystem(*Xml, L->Diags);
  return L;
}

} // namespace cclc::topo::test
