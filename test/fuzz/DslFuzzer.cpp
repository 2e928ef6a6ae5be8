//===- DslFuzzer.cpp - libFuzzer target for the .ccl front end ------------===//
//
// Feeds arbitrary bytes through the whole front end, as `cclc check` does.
// Besides the sanitizers' findings it enforces the front end's contract: a
// tree comes back exactly when no error was reported, and the tree can be
// printed. See docs/language.md for how to build and run it.
//
//===----------------------------------------------------------------------===//

#include "dsl/ASTPrinter.h"
#include "dsl/Frontend.h"

#include <cstdint>
#include <cstdlib>
#include <sstream>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  cclc::SourceManager SM;
  uint32_t Id = SM.addBuffer("fuzz.ccl", std::string(reinterpret_cast<const char *>(Data), Size));
  cclc::DiagnosticEngine Diags(SM);
  Diags.setSilent(true);
  cclc::dsl::OperationCatalog Ops;
  std::unique_ptr<cclc::dsl::Algorithm> Algo = cclc::dsl::parseAndCheck(Id, Ops, Diags);
  if ((Algo != nullptr) != (Diags.errorCount() == 0))
    std::abort();
  if (Algo) {
    std::ostringstream Dump;
    cclc::dsl::printAST(*Algo, Dump);
  }
  return 0;
}
