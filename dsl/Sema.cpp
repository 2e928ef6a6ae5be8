//===- Sema.cpp - Semantic analysis of a .ccl algorithm -------------------===//

#include "dsl/Sema.h"
#include "dsl/Arith.h"
#include "plan/Assert.h"

#include <set>

namespace cclc::dsl {

/// Builtins are declared once for the whole process: ASTs refer to them and
/// may outlive the Sema that checked them.
static const std::vector<std::unique_ptr<Decl>> &builtinDecls() {
  static const std::vector<std::unique_ptr<Decl>> Decls = [] {
    std::vector<std::unique_ptr<Decl>> Result;
    for (const BuiltinValue &V : builtinValues()) {
      Result.push_back(std::make_unique<Decl>(Decl::Kind::Builtin, std::string(V.Name),
                                              SourceRange{}, V.Ty));
      // A builtin's slot is its index in builtinValues().
      Result.back()->Slot = static_cast<int32_t>(Result.size() - 1);
    }
    return Result;
  }();
  return Decls;
}

Sema::Sema(DiagnosticEngine &Diags, const OperationCatalog &Ops) : Diags(Diags), Ops(Ops) {}

bool Sema::check(Algorithm &A) {
  Algo = &A;
  unsigned ErrorsBefore = Diags.errorCount();
  Scopes.clear();
  pushScope();
  for (const auto &B : builtinDecls())
    Scopes.back().Names[B->Name] = B.get();

  for (ExprPtr &Req : A.Requires) {
    if (!expectType(*Req, Type::Bool, Context::Target, "a requirement"))
      continue;
    if (Req->ConstValue) {
      if (*Req->ConstValue)
        Diags.warning(Req->Range, "requirement always holds");
      else
        Diags.error(Req->Range, "requirement can never be met");
    }
  }
  if (A.Body) {
    checkBlock(*A.Body, /*TopLevel=*/true);
    if (NumOps == 0)
      Diags.warning(A.NameRange, "algorithm '" + A.Name + "' performs no operation");
  }
  popScope();
  return Diags.errorCount() == ErrorsBefore;
}

//===----------------------------------------------------------------------===//
// Scopes
//===----------------------------------------------------------------------===//

void Sema::pushScope() { Scopes.emplace_back(); }

void Sema::popScope() {
  for (const Decl *D : Scopes.back().Declared)
    if (!Used.count(D) && (D->K == Decl::Kind::Let || D->K == Decl::Kind::Var) &&
        D->Name[0] != '_')
      Diags.warning(D->Range, "unused " + std::string(D->kindName()) + " '" + D->Name + "'");
  Scopes.pop_back();
}

const Decl *Sema::lookup(const std::string &Name) const {
  for (auto It = Scopes.rbegin(); It != Scopes.rend(); ++It)
    if (auto Found = It->Names.find(Name); Found != It->Names.end())
      return Found->second;
  return nullptr;
}

std::vector<std::string_view> Sema::namesInScope() const {
  std::vector<std::string_view> Names;
  for (const auto &Scope : Scopes)
    for (const auto &Entry : Scope.Names)
      Names.push_back(Entry.first);
  return Names;
}

void Sema::declare(Decl &D) {
  D.Slot = Algo->NumSlots++;
  if (const Decl *Previous = lookup(D.Name)) {
    if (Previous->K == Decl::Kind::Builtin) {
      Diags.error(D.Range, "cannot redeclare builtin '" + D.Name + "'");
      return;
    }
    if (Scopes.back().Names.count(D.Name)) {
      Diags.error(D.Range, "redeclaration of '" + D.Name + "'");
      Diags.note(Previous->Range, "previous declaration is here");
      return;
    }
    Diags.warning(D.Range, "declaration of '" + D.Name + "' shadows an outer " +
                               std::string(Previous->kindName()));
    Diags.note(Previous->Range, "shadowed declaration is here");
  }
  Scopes.back().Names[D.Name] = &D;
  Scopes.back().Declared.push_back(&D);
}

//===----------------------------------------------------------------------===//
// Statements
//===----------------------------------------------------------------------===//

void Sema::checkBlock(BlockStmt &Block, bool TopLevel) {
  if (!TopLevel)
    pushScope();
  for (StmtPtr &S : Block.Body)
    checkStmt(*S, TopLevel);
  if (!TopLevel)
    popScope();
}

void Sema::checkStmt(Stmt &S, bool TopLevel) {
  switch (S.getKind()) {
  case Stmt::Kind::Block: return checkBlock(static_cast<BlockStmt &>(S), false);
  case Stmt::Kind::Let: return checkLet(static_cast<LetStmt &>(S));
  case Stmt::Kind::Assign: return checkAssign(static_cast<AssignStmt &>(S));
  case Stmt::Kind::For: return checkFor(static_cast<ForStmt &>(S));
  case Stmt::Kind::If: return checkIf(static_cast<IfStmt &>(S));
  case Stmt::Kind::Chunks: return checkChunks(static_cast<ChunksStmt &>(S), TopLevel);
  case Stmt::Kind::Remap: return checkRemap(static_cast<RemapStmt &>(S), TopLevel);
  case Stmt::Kind::Op: return checkOp(static_cast<OpStmt &>(S));
  }
  CCLC_UNREACHABLE("unknown statement kind");
}

void Sema::checkLet(LetStmt &S) {
  Type Ty = checkExpr(*S.Init, Context::Rank);
  if (Ty == Type::Namespace || Ty == Type::Void) {
    Diags.error(S.Init->Range, "cannot bind a " + std::string(typeName(Ty)) + " to '" +
                                   S.Var->Name + "'");
    Ty = Type::Unknown;
  }
  S.Var->Ty = Ty;
  if (S.Var->K == Decl::Kind::Let)
    S.Var->ConstValue = S.Init->ConstValue;
  declare(*S.Var);
}

void Sema::checkAssign(AssignStmt &S) {
  Type ValueTy = checkExpr(*S.Value, Context::Rank);
  const Decl *D = lookup(S.Target->Name);
  if (!D) {
    Diags.error(S.Target->Range, "assignment to undeclared name '" + S.Target->Name + "'");
    return;
  }
  S.Target->Target = D;
  S.Target->Ty = D->Ty;
  if (!D->isMutable()) {
    Diags.error(S.Target->Range, "cannot assign to " + std::string(D->kindName()) + " '" +
                                     D->Name + "'");
    if (D->Range.Begin.isValid())
      Diags.note(D->Range, "declared here; use 'var' for a value that changes");
    return;
  }
  if (ValueTy != Type::Unknown && D->Ty != Type::Unknown && ValueTy != D->Ty)
    Diags.error(S.Value->Range, "cannot assign a " + std::string(typeName(ValueTy)) +
                                    " to '" + D->Name + "' of type " +
                                    std::string(typeName(D->Ty)));
}

void Sema::checkFor(ForStmt &S) {
  bool LoOk = expectType(*S.Lo, Type::Int, Context::Rank, "a loop bound");
  bool HiOk = expectType(*S.Hi, Type::Int, Context::Rank, "a loop bound");
  if (LoOk && HiOk && S.Lo->ConstValue && S.Hi->ConstValue &&
      *S.Lo->ConstValue >= *S.Hi->ConstValue)
    Diags.warning(SourceRange{S.Lo->Range.Begin, S.Hi->Range.End},
                  "loop never runs: range " + std::to_string(*S.Lo->ConstValue) + " .. " +
                      std::to_string(*S.Hi->ConstValue) + " is empty");
  pushScope();
  declare(*S.Var);
  Used.insert(S.Var.get());
  checkBlock(*S.Body, false);
  popScope();
}

void Sema::checkIf(IfStmt &S) {
  expectType(*S.Cond, Type::Bool, Context::Rank, "a condition");
  checkBlock(*S.Then, false);
  if (S.Else)
    checkStmt(*S.Else, false);
}

void Sema::checkChunks(ChunksStmt &S, bool TopLevel) {
  if (!TopLevel) {
    Diags.error(S.Range, "'chunks' must be at the top level of the algorithm's body");
    return;
  }
  if (Algo->Chunks) {
    Diags.error(S.Range, "'chunks' is given twice");
    Diags.note(Algo->Chunks->Range, "first given here");
    return;
  }
  Algo->Chunks = &S;
  if (expectType(*S.Count, Type::Int, Context::Target, "the chunk count") && S.Count->ConstValue &&
      *S.Count->ConstValue <= 0)
    Diags.error(S.Count->Range, "chunk count must be positive, not " +
                                    std::to_string(*S.Count->ConstValue));
}

void Sema::checkRemap(RemapStmt &S, bool TopLevel) {
  if (!TopLevel) {
    Diags.error(S.Range, "'remap' must be at the top level of the algorithm's body");
    return;
  }
  if (Algo->Remap) {
    Diags.error(S.Range, "'remap' is given twice");
    Diags.note(Algo->Remap->Range, "first given here");
    return;
  }
  Algo->Remap = &S;
  if (Algo->Topology != TopologyKind::None && S.TheForm != RemapStmt::Form::Auto) {
    Diags.error(S.Range, "a ring or tree algorithm follows the ranks the topology search "
                         "ordered; it cannot also remap them");
    Diags.note(Algo->TopologyRange, "algorithm runs on the " +
                                        std::string(topologyName(Algo->Topology)) +
                                        " channels here");
    return;
  }
  switch (S.TheForm) {
  case RemapStmt::Form::Auto:
    if (Algo->Topology != TopologyKind::None) {
      Diags.error(S.Range, "'remap auto' places the ranks of a flat algorithm; ring and tree "
                           "algorithms already follow the search's order");
      Diags.note(Algo->TopologyRange, "algorithm runs on these channels");
    }
    return;
  case RemapStmt::Form::Expression:
    pushScope();
    declare(*S.Param);
    Used.insert(S.Param.get());
    RemapParam = S.Param.get();
    expectType(*S.Mapping, Type::Int, Context::Remap, "a remap expression");
    RemapParam = nullptr;
    popScope();
    return;
  case RemapStmt::Form::Table: {
    std::set<int64_t> Seen;
    for (ExprPtr &Entry : S.Table) {
      if (!expectType(*Entry, Type::Int, Context::Target, "a remap table entry"))
        continue;
      if (!Entry->ConstValue) {
        Diags.error(Entry->Range, "remap table entries must be constant physical ranks");
      } else if (*Entry->ConstValue < 0) {
        Diags.error(Entry->Range, "physical rank " + std::to_string(*Entry->ConstValue) +
                                      " is negative");
      } else if (*Entry->ConstValue >= static_cast<int64_t>(S.Table.size())) {
        Diags.error(Entry->Range, "physical rank " + std::to_string(*Entry->ConstValue) +
                                      " is out of range for a table of " +
                                      std::to_string(S.Table.size()) + " ranks");
      } else if (!Seen.insert(*Entry->ConstValue).second) {
        Diags.error(Entry->Range, "physical rank " + std::to_string(*Entry->ConstValue) +
                                      " appears twice; a remap must be a permutation");
      }
    }
    if (S.Table.empty())
      Diags.error(S.Range, "remap table is empty");
    return;
  }
  }
}

void Sema::checkOp(OpStmt &S) {
  ++NumOps;
  const OperationInfo *Info = Ops.lookup(S.Name);
  if (!Info) {
    if (lookupFunction(S.Name)) {
      Diags.error(S.NameRange, "'" + S.Name + "' computes a value; it is not an operation");
    } else {
      Diags.error(S.NameRange, "unknown operation '" + S.Name + "'");
      std::vector<std::string_view> Names;
      for (const OperationInfo &Op : Ops.all())
        Names.push_back(Op.Name);
      if (std::string Guess = closestName(S.Name, Names); !Guess.empty())
        Diags.note(S.NameRange, "did you mean '" + Guess + "'?");
    }
    for (ExprPtr &Arg : S.Args)
      checkExpr(*Arg, Context::Rank);
    return;
  }
  S.Info = Info;
  S.EffectKind = plan::parseOp(Info->Effect);
  S.ByPrimitive = Info->Name != Info->Effect;
  if (S.Args.size() != Info->Params.size()) {
    Diags.error(S.NameRange, "'" + S.Name + "' takes " + std::to_string(Info->Params.size()) +
                                 " argument" + (Info->Params.size() == 1 ? "" : "s") + ", not " +
                                 std::to_string(S.Args.size()));
    Diags.note(S.NameRange, "expected " + Info->signature());
    for (ExprPtr &Arg : S.Args)
      checkExpr(*Arg, Context::Rank);
    return;
  }
  for (size_t I = 0; I < S.Args.size(); ++I) {
    Expr &Arg = *S.Args[I];
    const OperationParam &P = Info->Params[I];
    Type Ty = checkExpr(Arg, Context::Rank);
    if (Ty == Type::Unknown)
      continue;
    if (P.Role == ParamRole::Peer) {
      if (Ty != Type::Int)
        Diags.error(Arg.Range, "argument '" + P.Name + "' of '" + S.Name +
                                   "' must be a rank (int), not a " +
                                   std::string(typeName(Ty)));
      continue;
    }
    if (Ty != Type::Slice && Ty != Type::Buffer) {
      Diags.error(Arg.Range, "argument '" + P.Name + "' of '" + S.Name +
                                 "' must be a buffer or slice, not a " +
                                 std::string(typeName(Ty)));
      continue;
    }
    // The user's input buffer is never written: out-of-place callers expect it intact.
    const Expr *Base = &Arg;
    while (auto *Index = dyn_cast<IndexExpr>(Base))
      Base = Index->Base.get();
    auto *Name = dyn_cast<NameExpr>(Base);
    if (P.Role != ParamRole::Source && Name && Name->Target &&
        Name->Target->K == Decl::Kind::Builtin && Name->Name == "input")
      Diags.error(Arg.Range, "'" + S.Name + "' would write to 'input', which is read-only; "
                                            "write to 'output' or 'scratch'");
  }
}

//===----------------------------------------------------------------------===//
// Expressions
//===----------------------------------------------------------------------===//

bool Sema::expectType(Expr &E, Type Want, Context Ctx, const char *What) {
  Type Ty = checkExpr(E, Ctx);
  if (Ty == Want)
    return true;
  if (Ty != Type::Unknown)
    Diags.error(E.Range, std::string(What) + " must be " + std::string(typeName(Want)) +
                             ", not " + std::string(typeName(Ty)));
  return false;
}

void Sema::foldResult(Expr &E, const EvalResult &R) {
  if (R.Value)
    E.ConstValue = R.Value;
  else
    Diags.error(E.Range, R.Error);
}

Type Sema::checkExpr(Expr &E, Context Ctx) {
  Type Ty = Type::Unknown;
  switch (E.getKind()) {
  case Expr::Kind::IntLiteral:
    Ty = Type::Int;
    E.ConstValue = static_cast<IntLiteralExpr &>(E).Value;
    break;
  case Expr::Kind::BoolLiteral:
    Ty = Type::Bool;
    E.ConstValue = static_cast<BoolLiteralExpr &>(E).Value;
    break;
  case Expr::Kind::Name: Ty = checkName(static_cast<NameExpr &>(E), Ctx); break;
  case Expr::Kind::Unary: Ty = checkUnary(static_cast<UnaryExpr &>(E), Ctx); break;
  case Expr::Kind::Binary: Ty = checkBinary(static_cast<BinaryExpr &>(E), Ctx); break;
  case Expr::Kind::Call: Ty = checkCall(static_cast<CallExpr &>(E), Ctx); break;
  case Expr::Kind::Member: Ty = checkMember(static_cast<MemberExpr &>(E), Ctx); break;
  case Expr::Kind::Index: Ty = checkIndex(static_cast<IndexExpr &>(E), Ctx); break;
  }
  E.Ty = Ty;
  return Ty;
}

Type Sema::checkName(NameExpr &E, Context Ctx) {
  const Decl *D = lookup(E.Name);
  if (!D) {
    if (lookupFunction(E.Name) || Ops.lookup(E.Name)) {
      Diags.error(E.Range, "'" + E.Name + "' must be called with arguments");
      return Type::Unknown;
    }
    Diags.error(E.Range, "use of undeclared name '" + E.Name + "'");
    if (std::string Guess = closestName(E.Name, namesInScope()); !Guess.empty())
      Diags.note(E.Range, "did you mean '" + Guess + "'?");
    return Type::Unknown;
  }
  E.Target = D;
  Used.insert(D);
  if (Ctx != Context::Rank) {
    bool Allowed = D == RemapParam;
    if (D->K == Decl::Kind::Builtin)
      for (const BuiltinValue &V : builtinValues())
        Allowed |= V.Name == D->Name && V.TargetFact;
    if (!Allowed && !D->ConstValue) {
      Diags.error(E.Range, "'" + E.Name + "' can differ between ranks; " +
                               (Ctx == Context::Remap
                                    ? "a remap may use only its logical rank and target facts"
                                    : "only target facts (nranks, nnodes, local_nranks, "
                                      "nchannels, root) and constants may appear here"));
      return Type::Unknown;
    }
  }
  if (D->Ty == Type::Namespace && (E.Name == "ring" || E.Name == "tree"))
    return Type::Namespace;
  E.ConstValue = D->ConstValue;
  return D->Ty;
}

Type Sema::checkUnary(UnaryExpr &E, Context Ctx) {
  Type Want = E.Op == UnaryOp::Not ? Type::Bool : Type::Int;
  std::string What = "operand of '" + std::string(unaryOpSpelling(E.Op)) + "'";
  if (!expectType(*E.Operand, Want, Ctx, What.c_str()))
    return Type::Unknown;
  if (E.Operand->ConstValue)
    foldResult(E, evalUnary(E.Op, *E.Operand->ConstValue));
  return Want;
}

Type Sema::checkBinary(BinaryExpr &E, Context Ctx) {
  Type L = checkExpr(*E.Lhs, Ctx);
  Type R = checkExpr(*E.Rhs, Ctx);
  if (L == Type::Unknown || R == Type::Unknown)
    return Type::Unknown;
  std::string Op(binaryOpSpelling(E.Op));
  Type Result;
  switch (E.Op) {
  case BinaryOp::LogAnd:
  case BinaryOp::LogOr:
    if (L != Type::Bool || R != Type::Bool) {
      Diags.error(E.Range, "operands of '" + Op + "' must be bool, not " +
                               std::string(typeName(L != Type::Bool ? L : R)));
      return Type::Unknown;
    }
    Result = Type::Bool;
    break;
  case BinaryOp::Eq:
  case BinaryOp::Ne:
    if (L != R || (L != Type::Int && L != Type::Bool)) {
      Diags.error(E.Range, "cannot compare " + std::string(typeName(L)) + " with " +
                               std::string(typeName(R)));
      return Type::Unknown;
    }
    Result = Type::Bool;
    break;
  default:
    if (L != Type::Int || R != Type::Int) {
      Diags.error(E.Range, "operands of '" + Op + "' must be int, not " +
                               std::string(typeName(L != Type::Int ? L : R)));
      return Type::Unknown;
    }
    Result = (E.Op == BinaryOp::Lt || E.Op == BinaryOp::Le || E.Op == BinaryOp::Gt ||
              E.Op == BinaryOp::Ge)
                 ? Type::Bool
                 : Type::Int;
  }
  if (E.Lhs->ConstValue && E.Rhs->ConstValue)
    foldResult(E, evalBinary(E.Op, *E.Lhs->ConstValue, *E.Rhs->ConstValue));
  else if ((E.Op == BinaryOp::Div || E.Op == BinaryOp::Rem) && E.Rhs->ConstValue &&
           *E.Rhs->ConstValue == 0)
    Diags.error(E.Rhs->Range, "division by zero");
  else if (E.Op == BinaryOp::Pow && E.Rhs->ConstValue && *E.Rhs->ConstValue < 0)
    Diags.error(E.Rhs->Range, "negative exponent " + std::to_string(*E.Rhs->ConstValue) +
                                  " (integers have no fractions)");
  else if ((E.Op == BinaryOp::Shl || E.Op == BinaryOp::Shr) && E.Rhs->ConstValue &&
           (*E.Rhs->ConstValue < 0 || *E.Rhs->ConstValue > 62))
    Diags.error(E.Rhs->Range,
                "shift amount " + std::to_string(*E.Rhs->ConstValue) + " is outside 0..62");
  return Result;
}

Type Sema::checkCall(CallExpr &E, Context Ctx) {
  const BuiltinFunction *F = lookupFunction(E.Callee);
  if (!F) {
    if (Ops.lookup(E.Callee))
      Diags.error(E.CalleeRange,
                  "'" + E.Callee + "' is an operation; it cannot be used inside an expression");
    else
      Diags.error(E.CalleeRange, "unknown function '" + E.Callee + "'");
    std::vector<std::string_view> Names;
    for (const BuiltinFunction &B : builtinFunctions())
      Names.push_back(B.Name);
    if (!Ops.lookup(E.Callee))
      if (std::string Guess = closestName(E.Callee, Names); !Guess.empty())
        Diags.note(E.CalleeRange, "did you mean '" + Guess + "'?");
    for (ExprPtr &Arg : E.Args)
      checkExpr(*Arg, Ctx);
    return Type::Unknown;
  }
  if (E.Args.size() != F->Params.size()) {
    Diags.error(E.CalleeRange, "'" + E.Callee + "' takes " + std::to_string(F->Params.size()) +
                                   " argument" + (F->Params.size() == 1 ? "" : "s") + ", not " +
                                   std::to_string(E.Args.size()));
    return Type::Unknown;
  }
  bool AllConst = true;
  std::vector<int64_t> Values;
  for (size_t I = 0; I < E.Args.size(); ++I) {
    std::string What = "argument of '" + E.Callee + "'";
    if (!expectType(*E.Args[I], F->Params[I], Ctx, What.c_str()))
      return Type::Unknown;
    AllConst &= E.Args[I]->ConstValue.has_value();
    if (E.Args[I]->ConstValue)
      Values.push_back(*E.Args[I]->ConstValue);
  }
  if (AllConst) {
    foldResult(E, evalFunction(E.Callee, Values));
    if (E.Callee == "log2" && Values[0] > 0 && (Values[0] & (Values[0] - 1)) != 0)
      Diags.warning(E.Range, "log2(" + std::to_string(Values[0]) + ") rounds down to " +
                                 std::to_string(*E.ConstValue));
  }
  return F->Result;
}

Type Sema::checkMember(MemberExpr &E, Context Ctx) {
  auto *Base = dyn_cast<NameExpr>(E.Base.get());
  if (!Base || (Base->Name != "ring" && Base->Name != "tree")) {
    Type BaseTy = checkExpr(*E.Base, Ctx);
    if (BaseTy != Type::Unknown)
      Diags.error(E.MemberRange, "a " + std::string(typeName(BaseTy)) + " has no member '" +
                                     E.Member + "'; only 'ring' and 'tree' have members");
    return Type::Unknown;
  }
  if (checkExpr(*Base, Ctx) != Type::Namespace)
    return Type::Unknown;
  TopologyKind Ns = Base->Name == "ring" ? TopologyKind::Ring : TopologyKind::Tree;
  const BuiltinMember *M = lookupMember(Ns, E.Member);
  if (!M) {
    std::string Known;
    for (const BuiltinMember &Candidate : builtinMembers())
      if (Candidate.Namespace == Ns)
        Known += (Known.empty() ? "" : ", ") + std::string(Candidate.Name);
    Diags.error(E.MemberRange, "'" + Base->Name + "' has no member '" + E.Member + "'");
    Diags.note(E.MemberRange, "members of '" + Base->Name + "': " + Known);
    return Type::Unknown;
  }
  if (Algo->Topology != Ns) {
    Diags.error(E.Range, "'" + Base->Name + "." + E.Member + "' needs the algorithm to run 'on " +
                             Base->Name + "'");
    Diags.note(Algo->NameRange, "add 'on " + Base->Name + "' after the algorithm's name");
    return Type::Unknown;
  }
  E.Info = M;
  return M->Ty;
}

Type Sema::checkIndex(IndexExpr &E, Context Ctx) {
  Type BaseTy = checkExpr(*E.Base, Ctx);
  if (BaseTy == Type::Unknown)
    return Type::Unknown;
  if (BaseTy != Type::Buffer && BaseTy != Type::IntList) {
    Diags.error(E.Base->Range, "cannot index a " + std::string(typeName(BaseTy)) +
                                   "; only buffers and lists can be indexed");
    return Type::Unknown;
  }
  bool IndexOk = expectType(*E.Index, Type::Int, Ctx, "an index");
  if (IndexOk && E.Index->ConstValue && *E.Index->ConstValue < 0) {
    Diags.error(E.Index->Range, "index " + std::to_string(*E.Index->ConstValue) +
                                    " is negative");
    IndexOk = false;
  }
  if (BaseTy == Type::IntList) {
    if (E.End) {
      Diags.error(E.End->Range, "a list can only be indexed by one position, not a range");
      return Type::Unknown;
    }
    return IndexOk ? Type::Int : Type::Unknown;
  }
  if (E.End) {
    if (!expectType(*E.End, Type::Int, Ctx, "a slice end"))
      return Type::Unknown;
    if (IndexOk && E.Index->ConstValue && E.End->ConstValue &&
        *E.End->ConstValue <= *E.Index->ConstValue) {
      Diags.error(E.Range, "slice " + std::to_string(*E.Index->ConstValue) + " .. " +
                               std::to_string(*E.End->ConstValue) + " is empty");
      return Type::Unknown;
    }
  }
  return IndexOk ? Type::Slice : Type::Unknown;
}

} // namespace cclc::dsl
