//===- Frontend.cpp - Lex, parse and check one .ccl file ------------------===//

#include "dsl/Frontend.h"
#include "dsl/Parser.h"
#include "dsl/Sema.h"

#include <algorithm>

namespace cclc::dsl {

std::unique_ptr<Algorithm> parse(uint32_t FileId, DiagnosticEngine &Diags) {
  unsigned ErrorsBefore = Diags.errorCount();
  Parser P(Diags.getSourceManager(), FileId, Diags);
  std::unique_ptr<Algorithm> Algo = P.parseAlgorithm();
  if (!Algo || Diags.errorCount() != ErrorsBefore)
    return nullptr;
  return Algo;
}

std::unique_ptr<Algorithm> parseAndCheck(uint32_t FileId, const OperationCatalog &Ops,
                                         DiagnosticEngine &Diags) {
  // Sema on a tree with syntax errors would mostly repeat them.
  std::unique_ptr<Algorithm> Algo = parse(FileId, Diags);
  if (!Algo)
    return nullptr;
  Sema S(Diags, Ops);
  if (!S.check(*Algo))
    return nullptr;
  return Algo;
}

namespace {

void collectUnknown(const Stmt &S, const OperationCatalog &Ops, std::vector<std::string> &Out) {
  switch (S.getKind()) {
  case Stmt::Kind::Block:
    for (const StmtPtr &Child : static_cast<const BlockStmt &>(S).Body)
      collectUnknown(*Child, Ops, Out);
    return;
  case Stmt::Kind::For:
    collectUnknown(*static_cast<const ForStmt &>(S).Body, Ops, Out);
    return;
  case Stmt::Kind::If: {
    const auto &I = static_cast<const IfStmt &>(S);
    collectUnknown(*I.Then, Ops, Out);
    if (I.Else)
      collectUnknown(*I.Else, Ops, Out);
    return;
  }
  case Stmt::Kind::Op: {
    const std::string &Name = static_cast<const OpStmt &>(S).Name;
    if (!Ops.lookup(Name) && std::find(Out.begin(), Out.end(), Name) == Out.end())
      Out.push_back(Name);
    return;
  }
  case Stmt::Kind::Let:
  case Stmt::Kind::Assign:
  case Stmt::Kind::Chunks:
  case Stmt::Kind::Remap:
    return;
  }
}

} // namespace

std::vector<std::string> unknownOperations(const Algorithm &Algo, const OperationCatalog &Ops) {
  std::vector<std::string> Names;
  if (Algo.Body)
    collectUnknown(*Algo.Body, Ops, Names);
  return Names;
}

} // namespace cclc::dsl
