//===- ASTPrinter.h - Textual dump of the AST -------------------*- C++ -*-===//
//
// `cclc parse --emit=ast`: one node per line, indented by depth, with its
// location, its type and its folded value where sema computed one. Stable, so
// lit tests can check it with FileCheck.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "dsl/AST.h"
#include "dsl/Token.h"

#include <iosfwd>
#include <vector>

namespace cclc::dsl {

void printAST(const Algorithm &Algo, std::ostream &OS);
/// `cclc parse --emit=tokens`: "LINE:COL kind 'text'" per token.
void printTokens(const std::vector<Token> &Tokens, std::ostream &OS);

} // namespace cclc::dsl
