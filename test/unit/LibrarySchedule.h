//===- LibrarySchedule.h - Schedules of the algorithm library for tests ---===//
//
// Unit tests of the passes and emitters start from the real algorithms, so
// they share one way to instantiate algorithms/<Name>.ccl for --nranks N.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "compiler/instantiate/Instantiate.h"
#include "dsl/Frontend.h"

#include <gtest/gtest.h>
#include <memory>
#include <sstream>
#include <string>

namespace cclc::test {

/// Parses and checks algorithms/<Name>.ccl; a file that cannot be read is a
/// test failure, other problems are left in Diags. The language's operation
/// catalog outlives the algorithm, which points into it.
inline std::unique_ptr<dsl::Algorithm> libraryAlgorithm(const std::string &Name, SourceManager &SM,
                                                        DiagnosticEngine &Diags) {
  static const dsl::OperationCatalog Ops;
  std::string Error;
  std::optional<uint32_t> Id =
      SM.loadFile(std::string(CCLC_SOURCE_DIR) + "/algorithms/" + Name + ".ccl", Error);
  EXPECT_TRUE(Id) << Error;
  return Id ? dsl::parseAndCheck(*Id, Ops, Diags) : nullptr;
}

/// Instantiates algorithms/<Name>.ccl for NRanks ranks without a topology;
/// failures are test failures carrying the diagnostics.
inline sched::Schedule librarySchedule(const std::string &Name, int32_t NRanks) {
  SourceManager SM;
  std::ostringstream Errors;
  DiagnosticEngine Diags(SM, Errors);
  std::unique_ptr<dsl::Algorithm> Algo = libraryAlgorithm(Name, SM, Diags);
  EXPECT_TRUE(Algo) << Errors.str();
  if (!Algo)
    return {};
  std::optional<sched::Schedule> S =
      inst::instantiate(*Algo, target::flatTarget(NRanks), inst::InstantiateOptions{}, Diags);
  EXPECT_TRUE(S) << Errors.str();
  return S ? *S : sched::Schedule{};
}

} // namespace cclc::test
