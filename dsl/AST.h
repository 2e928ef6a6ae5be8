//===- AST.h - Syntax tree of a .ccl algorithm ------------------*- C++ -*-===//
//
// One algorithm per file. Every node carries the source range it was parsed
// from, so that sema, the verifier and the code generators can all point back
// at the line a user wrote. Sema fills in types, name bindings and the values
// of expressions that are constant for every target.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "plan/SourceManager.h"
#include "plan/Vocabulary.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cclc::dsl {

using plan::CollectiveKind;
using plan::TopologyKind;

enum class Type { Unknown, Int, Bool, Buffer, Slice, IntList, Namespace, Void };
std::string_view typeName(Type Ty);

class Decl;

//===----------------------------------------------------------------------===//
// Expressions
//===----------------------------------------------------------------------===//

class Expr {
public:
  enum class Kind { IntLiteral, BoolLiteral, Name, Unary, Binary, Call, Member, Index };
  virtual ~Expr() = default;

  Kind getKind() const { return K; }
  SourceRange Range;
  Type Ty = Type::Unknown;
  /// Set by sema when the value is the same for every target and rank.
  std::optional<int64_t> ConstValue;

protected:
  Expr(Kind K, SourceRange Range) : Range(Range), K(K) {}

private:
  Kind K;
};
using ExprPtr = std::unique_ptr<Expr>;

class IntLiteralExpr : public Expr {
public:
  IntLiteralExpr(SourceRange R, int64_t Value) : Expr(Kind::IntLiteral, R), Value(Value) {}
  static bool classof(const Expr *E) { return E->getKind() == Kind::IntLiteral; }
  int64_t Value;
};

class BoolLiteralExpr : public Expr {
public:
  BoolLiteralExpr(SourceRange R, bool Value) : Expr(Kind::BoolLiteral, R), Value(Value) {}
  static bool classof(const Expr *E) { return E->getKind() == Kind::BoolLiteral; }
  bool Value;
};

/// A use of a name: a let/var/loop variable, a remap parameter, or a builtin
/// such as `rank`, `nranks`, `output` or the namespace `ring`.
class NameExpr : public Expr {
public:
  NameExpr(SourceRange R, std::string Name) : Expr(Kind::Name, R), Name(std::move(Name)) {}
  static bool classof(const Expr *E) { return E->getKind() == Kind::Name; }
  std::string Name;
  const Decl *Target = nullptr; ///< Set by sema.
};

enum class UnaryOp { Neg, Not, BitNot };
std::string_view unaryOpSpelling(UnaryOp Op);

class UnaryExpr : public Expr {
public:
  UnaryExpr(SourceRange R, UnaryOp Op, ExprPtr Operand)
      : Expr(Kind::Unary, R), Op(Op), Operand(std::move(Operand)) {}
  static bool classof(const Expr *E) { return E->getKind() == Kind::Unary; }
  UnaryOp Op;
  ExprPtr Operand;
};

enum class BinaryOp {
  Pow, Mul, Div, Rem, Add, Sub, Shl, Shr, BitAnd, BitXor, BitOr,
  Eq, Ne, Lt, Le, Gt, Ge, LogAnd, LogOr,
};
std::string_view binaryOpSpelling(BinaryOp Op);

class BinaryExpr : public Expr {
public:
  BinaryExpr(SourceRange R, BinaryOp Op, SourceLoc OpLoc, ExprPtr Lhs, ExprPtr Rhs)
      : Expr(Kind::Binary, R), Op(Op), OpLoc(OpLoc), Lhs(std::move(Lhs)), Rhs(std::move(Rhs)) {}
  static bool classof(const Expr *E) { return E->getKind() == Kind::Binary; }
  BinaryOp Op;
  SourceLoc OpLoc;
  ExprPtr Lhs, Rhs;
};

/// A call of a builtin function inside an expression (log2, pow2, min, max).
class CallExpr : public Expr {
public:
  CallExpr(SourceRange R, std::string Callee, SourceRange CalleeRange, std::vector<ExprPtr> Args)
      : Expr(Kind::Call, R), Callee(std::move(Callee)), CalleeRange(CalleeRange),
        Args(std::move(Args)) {}
  static bool classof(const Expr *E) { return E->getKind() == Kind::Call; }
  std::string Callee;
  SourceRange CalleeRange;
  std::vector<ExprPtr> Args;
};

/// `ring.next`, `tree.down`: a topology fact of the current channel.
class MemberExpr : public Expr {
public:
  MemberExpr(SourceRange R, ExprPtr Base, std::string Member, SourceRange MemberRange)
      : Expr(Kind::Member, R), Base(std::move(Base)), Member(std::move(Member)),
        MemberRange(MemberRange) {}
  static bool classof(const Expr *E) { return E->getKind() == Kind::Member; }
  ExprPtr Base;
  std::string Member;
  SourceRange MemberRange;
  const struct BuiltinMember *Info = nullptr; ///< Set by sema.
};

/// `buf[i]` (chunk i), `buf[a .. b]` (chunks a to b-1) or `list[i]` (an element).
class IndexExpr : public Expr {
public:
  IndexExpr(SourceRange R, ExprPtr Base, ExprPtr Index, ExprPtr End)
      : Expr(Kind::Index, R), Base(std::move(Base)), Index(std::move(Index)),
        End(std::move(End)) {}
  static bool classof(const Expr *E) { return E->getKind() == Kind::Index; }
  ExprPtr Base;
  ExprPtr Index;
  ExprPtr End; ///< Null unless the index is a range.
};

//===----------------------------------------------------------------------===//
// Declarations: everything a name can refer to.
//===----------------------------------------------------------------------===//

class Decl {
public:
  enum class Kind { Let, Var, LoopVar, RemapParam, Builtin };
  Decl(Kind K, std::string Name, SourceRange Range, Type Ty)
      : K(K), Name(std::move(Name)), Range(Range), Ty(Ty) {}
  Kind getKind() const { return K; }
  bool isMutable() const { return K == Kind::Var; }
  std::string_view kindName() const;

  Kind K;
  std::string Name;
  SourceRange Range; ///< Invalid for builtins.
  Type Ty;
  std::optional<int64_t> ConstValue; ///< Known value of a let bound to a constant.
  /// Index of this variable's storage in an instantiation frame (for a
  /// builtin, its index in builtinValues()); set by sema so that evaluation
  /// needs no name lookups.
  int32_t Slot = -1;
};

//===----------------------------------------------------------------------===//
// Statements
//===----------------------------------------------------------------------===//

class Stmt {
public:
  enum class Kind { Block, Let, Assign, For, If, Chunks, Remap, Op };
  virtual ~Stmt() = default;
  Kind getKind() const { return K; }
  SourceRange Range;

protected:
  Stmt(Kind K, SourceRange Range) : Range(Range), K(K) {}

private:
  Kind K;
};
using StmtPtr = std::unique_ptr<Stmt>;

class BlockStmt : public Stmt {
public:
  explicit BlockStmt(SourceRange R) : Stmt(Kind::Block, R) {}
  static bool classof(const Stmt *S) { return S->getKind() == Kind::Block; }
  std::vector<StmtPtr> Body;
};

/// `let x = e;` (immutable) or `var x = e;` (assignable).
class LetStmt : public Stmt {
public:
  LetStmt(SourceRange R, std::unique_ptr<Decl> Var, ExprPtr Init)
      : Stmt(Kind::Let, R), Var(std::move(Var)), Init(std::move(Init)) {}
  static bool classof(const Stmt *S) { return S->getKind() == Kind::Let; }
  std::unique_ptr<Decl> Var;
  ExprPtr Init;
};

class AssignStmt : public Stmt {
public:
  AssignStmt(SourceRange R, std::unique_ptr<NameExpr> Target, ExprPtr Value)
      : Stmt(Kind::Assign, R), Target(std::move(Target)), Value(std::move(Value)) {}
  static bool classof(const Stmt *S) { return S->getKind() == Kind::Assign; }
  std::unique_ptr<NameExpr> Target;
  ExprPtr Value;
};

/// `for i in lo .. hi { }`: i takes lo, lo+1, ..., hi-1.
class ForStmt : public Stmt {
public:
  ForStmt(SourceRange R, std::unique_ptr<Decl> Var, ExprPtr Lo, ExprPtr Hi,
          std::unique_ptr<BlockStmt> Body)
      : Stmt(Kind::For, R), Var(std::move(Var)), Lo(std::move(Lo)), Hi(std::move(Hi)),
        Body(std::move(Body)) {}
  static bool classof(const Stmt *S) { return S->getKind() == Kind::For; }
  std::unique_ptr<Decl> Var;
  ExprPtr Lo, Hi;
  std::unique_ptr<BlockStmt> Body;
};

class IfStmt : public Stmt {
public:
  IfStmt(SourceRange R, ExprPtr Cond, std::unique_ptr<BlockStmt> Then, StmtPtr Else)
      : Stmt(Kind::If, R), Cond(std::move(Cond)), Then(std::move(Then)), Else(std::move(Else)) {}
  static bool classof(const Stmt *S) { return S->getKind() == Kind::If; }
  ExprPtr Cond;
  std::unique_ptr<BlockStmt> Then;
  StmtPtr Else; ///< A BlockStmt, an IfStmt (else if) or null.
};

/// `chunks e;`: every buffer unit is split into e equal chunks.
class ChunksStmt : public Stmt {
public:
  ChunksStmt(SourceRange R, ExprPtr Count) : Stmt(Kind::Chunks, R), Count(std::move(Count)) {}
  static bool classof(const Stmt *S) { return S->getKind() == Kind::Chunks; }
  ExprPtr Count;
};

/// `remap l -> e;`, `remap [p0, p1, ...];` or `remap auto;`: the physical rank
/// that runs logical rank l.
class RemapStmt : public Stmt {
public:
  enum class Form { Expression, Table, Auto };
  RemapStmt(SourceRange R, Form F) : Stmt(Kind::Remap, R), TheForm(F) {}
  static bool classof(const Stmt *S) { return S->getKind() == Kind::Remap; }
  Form TheForm;
  std::unique_ptr<Decl> Param; ///< Expression form: the logical rank.
  ExprPtr Mapping;             ///< Expression form.
  std::vector<ExprPtr> Table;  ///< Table form.
};

/// A communication or local operation: send(peer, output[c]); see Builtins.h.
class OpStmt : public Stmt {
public:
  OpStmt(SourceRange R, std::string Name, SourceRange NameRange, std::vector<ExprPtr> Args)
      : Stmt(Kind::Op, R), Name(std::move(Name)), NameRange(NameRange), Args(std::move(Args)) {}
  static bool classof(const Stmt *S) { return S->getKind() == Kind::Op; }
  std::string Name;
  SourceRange NameRange;
  std::vector<ExprPtr> Args;
  const struct OperationInfo *Info = nullptr; ///< Set by sema.
  /// Set by sema from Info, so that instantiation compares no names: the
  /// effect as an operation kind (none when it has none), and whether Info is
  /// a primitive of the template library rather than the effect itself.
  std::optional<plan::OpKind> EffectKind;
  bool ByPrimitive = false;
};

//===----------------------------------------------------------------------===//
// The algorithm
//===----------------------------------------------------------------------===//

struct Algorithm {
  std::string Name;
  SourceRange NameRange;
  CollectiveKind Collective = CollectiveKind::AllReduce;
  SourceRange CollectiveRange;
  TopologyKind Topology = TopologyKind::None;
  SourceRange TopologyRange;
  std::vector<ExprPtr> Requires;
  std::unique_ptr<BlockStmt> Body;
  /// Set by sema: the top-level statements that configure instantiation.
  const ChunksStmt *Chunks = nullptr;
  const RemapStmt *Remap = nullptr;
  /// Number of frame slots the user's declarations need (see Decl::Slot).
  int32_t NumSlots = 0;
};

/// LLVM-style casts over the Kind enums.
template <typename To, typename From> bool isa(const From *Node) { return To::classof(Node); }
template <typename To, typename From> To *dyn_cast(From *Node) {
  return Node && To::classof(Node) ? static_cast<To *>(Node) : nullptr;
}
template <typename To, typename From> const To *dyn_cast(const From *Node) {
  return Node && To::classof(Node) ? static_cast<const To *>(Node) : nullptr;
}

} // namespace cclc::dsl
