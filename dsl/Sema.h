//===- Sema.h - Semantic analysis of a .ccl algorithm -----------*- C++ -*-===//
//
// Resolves names through nested scopes, assigns types, folds expressions that
// are the same on every target, and checks the rules of the language: where
// topology facts may be used, what requirements may mention, the signatures
// of operations, one chunks and one remap per algorithm, and so on.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "dsl/AST.h"
#include "dsl/Builtins.h"
#include "plan/Diagnostics.h"

#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace cclc::dsl {

class Sema {
public:
  Sema(DiagnosticEngine &Diags, const OperationCatalog &Ops);

  /// Checks Algo in place; returns false when an error was reported.
  bool check(Algorithm &Algo);

private:
  /// What an expression may refer to where it appears.
  enum class Context {
    Rank,      ///< Ordinary code: anything in scope.
    Target,    ///< requires / chunks: only facts shared by every rank.
    Remap,     ///< A remap mapping: the logical rank and target facts.
  };

  void checkBlock(BlockStmt &Block, bool TopLevel);
  void checkStmt(Stmt &S, bool TopLevel);
  void checkLet(LetStmt &S);
  void checkAssign(AssignStmt &S);
  void checkFor(ForStmt &S);
  void checkIf(IfStmt &S);
  void checkChunks(ChunksStmt &S, bool TopLevel);
  void checkRemap(RemapStmt &S, bool TopLevel);
  void checkOp(OpStmt &S);

  Type checkExpr(Expr &E, Context Ctx);
  Type checkName(NameExpr &E, Context Ctx);
  Type checkUnary(UnaryExpr &E, Context Ctx);
  Type checkBinary(BinaryExpr &E, Context Ctx);
  Type checkCall(CallExpr &E, Context Ctx);
  Type checkMember(MemberExpr &E, Context Ctx);
  Type checkIndex(IndexExpr &E, Context Ctx);
  /// Checks E and reports when its type is not Want.
  bool expectType(Expr &E, Type Want, Context Ctx, const char *What);
  /// Records a folding failure (division by zero, ...) as an error at E.
  void foldResult(Expr &E, const struct EvalResult &R);

  void pushScope();
  void popScope();
  void declare(Decl &D);
  const Decl *lookup(const std::string &Name) const;
  std::vector<std::string_view> namesInScope() const;

  DiagnosticEngine &Diags;
  const OperationCatalog &Ops;
  Algorithm *Algo = nullptr;
  /// Names visible in each open scope, with the user declarations in source
  /// order so unused-variable warnings come out in a stable order.
  struct Scope {
    std::unordered_map<std::string, const Decl *> Names;
    std::vector<const Decl *> Declared;
  };
  std::vector<Scope> Scopes;
  std::unordered_set<const Decl *> Used;
  const Decl *RemapParam = nullptr;
  unsigned NumOps = 0;
};

} // namespace cclc::dsl
