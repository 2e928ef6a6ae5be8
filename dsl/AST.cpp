//===- AST.cpp - Names of AST enumerations --------------------------------===//

#include "dsl/AST.h"

namespace cclc::dsl {

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
  case BinaryOp::Pow: return "**";
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
