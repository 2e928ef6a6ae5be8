//===- DslTestSupport.h - Running the front end on test text ----*- C++ -*-===//
//
// The DSL tests and the benchmark feed the algorithm library and other text
// through the same entry point as `cclc check`. The tests need the tree and
// the diagnostics together; CheckedSource keeps the engine, the buffer it
// points into and the result alive as one object.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "dsl/Frontend.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace cclc::dsl::test {

/// The .ccl files of the algorithm library, in name order.
inline std::vector<std::filesystem::path> libraryFiles() {
  std::vector<std::filesystem::path> Files;
  for (const auto &Entry :
       std::filesystem::directory_iterator(std::filesystem::path(CCLC_SOURCE_DIR) / "algorithms"))
    if (Entry.path().extension() == ".ccl")
      Files.push_back(Entry.path());
  std::sort(Files.begin(), Files.end());
  return Files;
}

inline std::string readFile(const std::filesystem::path &Path) {
  std::ifstream In(Path, std::ios::binary);
  return {std::istreambuf_iterator<char>(In), std::istreambuf_iterator<char>()};
}

/// One .ccl buffer run through parseAndCheck. Diagnostics go to Output, or
/// nowhere when Silent (counts are kept either way).
struct CheckedSource {
  explicit CheckedSource(std::string Text, bool Silent = false) {
    FileId = SM.addBuffer("test.ccl", std::move(Text));
    Diags.setSilent(Silent);
    Algo = parseAndCheck(FileId, Ops, Diags);
  }

  std::string output() const { return Output.str(); }
  /// Occurrences of Text in the diagnostics.
  size_t count(const std::string &Text) const {
    std::string Out = Output.str();
    size_t N = 0;
    for (size_t Pos = Out.find(Text); Pos != std::string::npos; Pos = Out.find(Text, Pos + 1))
      ++N;
    return N;
  }

  SourceManager SM;
  std::ostringstream Output;
  DiagnosticEngine Diags{SM, Output};
  OperationCatalog Ops;
  uint32_t FileId = 0;
  std::unique_ptr<Algorithm> Algo;
};

} // namespace cclc::dsl::test
