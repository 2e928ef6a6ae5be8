// Checks the installed butterfly algorithm through the installed libraries.
#include "dsl/Builtins.h"
#include "dsl/Frontend.h"

#include <iostream>

int main() {
  cclc::SourceManager SM;
  cclc::DiagnosticEngine Diags(SM);
  std::string Error;
  auto Id = SM.loadFile(std::string(CCLC_ALGORITHMS_DIR) + "/butterfly-allreduce.ccl", Error);
  if (!Id) {
    std::cerr << Error << '\n';
    return 1;
  }
  cclc::dsl::OperationCatalog Ops;
  auto Algo = cclc::dsl::parseAndCheck(*Id, Ops, Diags);
  if (!Algo)
    return 1;
  std::cout << "checked " << Algo->Name << " (" << cclc::plan::collectiveName(Algo->Collective)
            << ")\n";
  return 0;
}
