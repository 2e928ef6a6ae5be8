//===- ASTPrinter.cpp - Textual dump of the AST ---------------------------===//

#include "dsl/ASTPrinter.h"
#include "plan/Assert.h"

#include <ostream>

namespace cclc::dsl {

namespace {

class Printer {
public:
  explicit Printer(std::ostream &OS) : OS(OS) {}

  void print(const Algorithm &A) {
    line("Algorithm '" + A.Name + "' " + std::string(collectiveName(A.Collective)) + " on " +
             std::string(topologyName(A.Topology)),
         A.NameRange.Begin);
    ++Depth;
    for (const ExprPtr &R : A.Requires) {
      line("Requires", R->Range.Begin);
      child(*R);
    }
    if (A.Body)
      print(*A.Body);
    --Depth;
  }

private:
  void line(const std::string &Text, SourceLoc Loc, const Expr *E = nullptr) {
    OS << std::string(2 * Depth, ' ') << Text << " <" << Loc.Line << ':' << Loc.Col << '>';
    if (E) {
      OS << " : " << typeName(E->Ty);
      if (E->ConstValue)
        OS << " = " << (E->Ty == Type::Bool ? (*E->ConstValue ? "true" : "false")
                                             : std::to_string(*E->ConstValue));
    }
    OS << '\n';
  }

  void child(const Expr &E) {
    ++Depth;
    print(E);
    --Depth;
  }

  void child(const Stmt &S) {
    ++Depth;
    print(S);
    --Depth;
  }

  void print(const Expr &E) {
    SourceLoc L = E.Range.Begin;
    switch (E.getKind()) {
    case Expr::Kind::IntLiteral:
      return line("IntLiteral " + std::to_string(static_cast<const IntLiteralExpr &>(E).Value), L,
                  &E);
    case Expr::Kind::BoolLiteral:
      return line(std::string("BoolLiteral ") +
                      (static_cast<const BoolLiteralExpr &>(E).Value ? "true" : "false"),
                  L, &E);
    case Expr::Kind::Name: {
      const auto &N = static_cast<const NameExpr &>(E);
      std::string Bound = N.Target ? " (" + std::string(N.Target->kindName()) + ")" : "";
      return line("Name '" + N.Name + "'" + Bound, L, &E);
    }
    case Expr::Kind::Unary: {
      const auto &U = static_cast<const UnaryExpr &>(E);
      line("Unary '" + std::string(unaryOpSpelling(U.Op)) + "'", L, &E);
      return child(*U.Operand);
    }
    case Expr::Kind::Binary: {
      const auto &B = static_cast<const BinaryExpr &>(E);
      line("Binary '" + std::string(binaryOpSpelling(B.Op)) + "'", L, &E);
      child(*B.Lhs);
      return child(*B.Rhs);
    }
    case Expr::Kind::Call: {
      const auto &C = static_cast<const CallExpr &>(E);
      line("Call '" + C.Callee + "'", L, &E);
      for (const ExprPtr &Arg : C.Args)
        child(*Arg);
      return;
    }
    case Expr::Kind::Member: {
      const auto &M = static_cast<const MemberExpr &>(E);
      line("Member '." + M.Member + "'", L, &E);
      return child(*M.Base);
    }
    case Expr::Kind::Index: {
      const auto &I = static_cast<const IndexExpr &>(E);
      line(I.End ? "Slice" : "Index", L, &E);
      child(*I.Base);
      child(*I.Index);
      if (I.End)
        child(*I.End);
      return;
    }
    }
    CCLC_UNREACHABLE("unknown expression kind");
  }

  void print(const Stmt &S) {
    SourceLoc L = S.Range.Begin;
    switch (S.getKind()) {
    case Stmt::Kind::Block:
      line("Block", L);
      for (const StmtPtr &Child : static_cast<const BlockStmt &>(S).Body)
        child(*Child);
      return;
    case Stmt::Kind::Let: {
      const auto &Let = static_cast<const LetStmt &>(S);
      line(std::string(Let.Var->K == Decl::Kind::Var ? "Var '" : "Let '") + Let.Var->Name +
               "' : " + std::string(typeName(Let.Var->Ty)),
           L);
      return child(*Let.Init);
    }
    case Stmt::Kind::Assign: {
      const auto &A = static_cast<const AssignStmt &>(S);
      line("Assign '" + A.Target->Name + "'", L);
      return child(*A.Value);
    }
    case Stmt::Kind::For: {
      const auto &F = static_cast<const ForStmt &>(S);
      line("For '" + F.Var->Name + "'", L);
      child(*F.Lo);
      child(*F.Hi);
      return child(*F.Body);
    }
    case Stmt::Kind::If: {
      const auto &I = static_cast<const IfStmt &>(S);
      line("If", L);
      child(*I.Cond);
      child(*I.Then);
      if (I.Else) {
        ++Depth;
        line("Else", I.Else->Range.Begin);
        child(*I.Else);
        --Depth;
      }
      return;
    }
    case Stmt::Kind::Chunks:
      line("Chunks", L);
      return child(*static_cast<const ChunksStmt &>(S).Count);
    case Stmt::Kind::Remap: {
      const auto &R = static_cast<const RemapStmt &>(S);
      switch (R.TheForm) {
      case RemapStmt::Form::Auto:
        return line("Remap auto", L);
      case RemapStmt::Form::Expression:
        line("Remap '" + R.Param->Name + "' ->", L);
        return child(*R.Mapping);
      case RemapStmt::Form::Table:
        line("Remap table", L);
        for (const ExprPtr &E : R.Table)
          child(*E);
        return;
      }
      return;
    }
    case Stmt::Kind::Op: {
      const auto &Op = static_cast<const OpStmt &>(S);
      line("Op '" + Op.Name + "'", L);
      for (const ExprPtr &Arg : Op.Args)
        child(*Arg);
      return;
    }
    }
    CCLC_UNREACHABLE("unknown statement kind");
  }

  std::ostream &OS;
  unsigned Depth = 0;
};

} // namespace

void printAST(const Algorithm &Algo, std::ostream &OS) { Printer(OS).print(Algo); }

void printTokens(const std::vector<Token> &Tokens, std::ostream &OS) {
  for (const Token &T : Tokens) {
    OS << T.Loc.Line << ':' << T.Loc.Col << ' ' << tokenKindName(T.Kind);
    if (!T.Text.empty())
      OS << " '" << T.Text << "'";
    OS << '\n';
  }
}

} // namespace cclc::dsl
