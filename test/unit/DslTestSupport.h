//===- DslTestSupport.h - Running the front end on test text ----*- C++ -*-===//
//
// The DSL tests feed text through the same entry point as `cclc check`, and
// need the tree and the diagnostics together; this keeps the engine, the
// buffer it points into and the result alive as one object.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "dsl/Frontend.h"

#include <memory>
#include <sstream>
#include <string>

namespace cclc::dsl::test {

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
