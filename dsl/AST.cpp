//===- AST.cpp - Names of AST enumerations --------------------------------===//

#include "dsl/AST.h"

namespace cclc::dsl {

namespace {
struct CollectiveName {
  CollectiveKind Kind;
  std::string_view Name;
};
constexpr CollectiveName CollectiveNames[] = {
    {CollectiveKind::AllReduce, "allreduce"},
    {CollectiveKind::AllGather, "allgather"},
    {CollectiveKind::ReduceScatter, "reduce_scatter"},
    {CollectiveKind::Broadcast, "broadcast"},
    {CollectiveKind::Reduce, "reduce"},
    {CollectiveKind::AllToAll, "alltoall"},
};
} // namespace

std::string_view collectiveName(CollectiveKind Kind) {
  for (const CollectiveName &C : CollectiveNames)
    if (C.Kind == Kind)
      return C.Name;
  return "?";
}

std::optional<CollectiveKind> parseCollective(std::string_view Name) {
  for (const CollectiveName &C : CollectiveNames)
    if (C.Name == Name)
      return C.Kind;
  return std::nullopt;
}

std::string_view topologyName(TopologyKind Kind) {
  switch (Kind) {
  case TopologyKind::None: return "none";
  case TopologyKind::Ring: return "ring";
  case TopologyKind::Tree: return "tree";
  }
  return "?";
}

std::string_view typeName(Type Ty) {
  switch (Ty) {
  case Type::Unknown: return "<error>";
  case Type::Int: return "int";
  case Type::Bool: return "bool";
  case Type::Buffer: return "buffer";
  case Type::Slice: return "slice";
  case Type::IntList: return "int list";
  case Type::Namespace: return "namespace";
  case Type::Void: return "void";
  }
  return "?";
}

std::string_view unaryOpSpelling(UnaryOp Op) {
  switch (Op) {
  case UnaryOp::Neg: return "-";
  case UnaryOp::Not: return "!";
  case UnaryOp::BitNot: return "~";
  }
  return "?";
}

std::string_view binaryOpSpelling(BinaryOp Op) {
  switch (Op) {
  case BinaryOp::Mul: return "*";
  case BinaryOp::Div: return "/";
  case BinaryOp::Rem: return "%";
  case BinaryOp::Add: return "+";
  case BinaryOp::Sub: return "-";
  case BinaryOp::Shl: return "<<";
  case BinaryOp::Shr: return ">>";
  case BinaryOp::BitAnd: return "&";
  case BinaryOp::BitXor: return "^";
  case BinaryOp::BitOr: return "|";
  case BinaryOp::Eq: return "==";
  case BinaryOp::Ne: return "!=";
  case BinaryOp::Lt: return "<";
  case BinaryOp::Le: return "<=";
  case BinaryOp::Gt: return ">";
  case BinaryOp::Ge: return ">=";
  case BinaryOp::LogAnd: return "&&";
  case BinaryOp::LogOr: return "||";
  }
  return "?";
}

std::string_view Decl::kindName() const {
  switch (K) {
  case Kind::Let: return "let";
  case Kind::Var: return "var";
  case Kind::LoopVar: return "loop variable";
  case Kind::RemapParam: return "remap parameter";
  case Kind::Builtin: return "builtin";
  }
  return "?";
}

} // namespace cclc::dsl
