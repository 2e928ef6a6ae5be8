//===- Frontend.cpp - Lex, parse and check one .ccl file ------------------===//

#include "dsl/Frontend.h"
#include "dsl/Parser.h"
#include "dsl/Sema.h"

namespace cclc::dsl {

std::unique_ptr<Algorithm> parseAndCheck(uint32_t FileId, const OperationCatalog &Ops,
                                         DiagnosticEngine &Diags) {
  unsigned ErrorsBefore = Diags.errorCount();
  Parser P(Diags.getSourceManager(), FileId, Diags);
  std::unique_ptr<Algorithm> Algo = P.parseAlgorithm();
  // Sema on a tree with syntax errors would mostly repeat them.
  if (!Algo || Diags.errorCount() != ErrorsBefore)
    return nullptr;
  Sema S(Diags, Ops);
  if (!S.check(*Algo))
    return nullptr;
  return Algo;
}

} // namespace cclc::dsl
