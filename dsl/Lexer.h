//===- Lexer.h - Tokenizer for .ccl files -----------------------*- C++ -*-===//
//
// Turns a buffer into tokens on demand. Comments run from '#' to the end of the
// line. Bad characters and out-of-range literals are diagnosed here and become
// Error tokens so the parser can keep going.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "plan/Diagnostics.h"
#include "dsl/Token.h"

#include <string_view>
#include <vector>

namespace cclc::dsl {

class Lexer {
public:
  Lexer(const SourceManager &SM, uint32_t FileId, DiagnosticEngine &Diags);

  Token next();
  /// Tokenizes the whole buffer, ending with the Eof token.
  std::vector<Token> lexAll();

private:
  char peek(size_t Ahead = 0) const;
  void advance();
  void skipWhitespaceAndComments();
  Token make(TokenKind Kind, size_t Begin, SourceLoc Loc) const;
  Token lexNumber(size_t Begin, SourceLoc Loc);
  Token lexIdentifier(size_t Begin, SourceLoc Loc);

  std::string_view Text;
  uint32_t FileId;
  DiagnosticEngine &Diags;
  size_t Pos = 0;
  uint32_t Line = 1;
  uint32_t Col = 1;
};

/// True when Name lexes as one identifier that is not a keyword: the names a
/// .ccl file can call.
bool isIdentifier(std::string_view Name);

} // namespace cclc::dsl
