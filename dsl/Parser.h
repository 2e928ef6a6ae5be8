//===- Parser.h - Recursive-descent parser for .ccl -------------*- C++ -*-===//
//
// Builds the AST of one algorithm. On a syntax error it reports, skips to the
// next statement boundary and goes on, so one run shows every independent
// mistake. Nesting is bounded so hostile input cannot exhaust the stack.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "dsl/AST.h"
#include "plan/Diagnostics.h"
#include "dsl/Lexer.h"

#include <memory>

namespace cclc::dsl {

struct NestingScope;

class Parser {
public:
  Parser(const SourceManager &SM, uint32_t FileId, DiagnosticEngine &Diags);

  /// Parses the whole file. Returns null only when not even the algorithm
  /// header could be read; otherwise a (possibly partial) tree.
  std::unique_ptr<Algorithm> parseAlgorithm();

private:
  // Statements.
  std::unique_ptr<BlockStmt> parseBlock();
  StmtPtr parseStatement();
  StmtPtr parseLet();
  StmtPtr parseFor();
  StmtPtr parseIf();
  StmtPtr parseChunks();
  StmtPtr parseRemap();
  StmtPtr parseIdentifierStatement();

  // Expressions, lowest precedence first.
  ExprPtr parseExpr();
  ExprPtr parseBinary(int MinPrecedence);
  ExprPtr parseUnary();
  /// Member and index suffixes nest inside the caller's Scope.
  /// A postfix expression, raised to a power when "**" follows.
  ExprPtr parsePower(NestingScope &Scope);
  ExprPtr parsePostfix(NestingScope &Scope);
  ExprPtr parsePrimary();
  /// Parses '(' args ')'; false after reporting a malformed list.
  bool parseCallArgs(std::vector<ExprPtr> &Args);

  // Token handling.
  const Token &peek() const { return Tok; }
  Token consume();
  bool consumeIf(TokenKind Kind);
  /// Consumes Kind or reports "expected <What>" at the current token.
  bool expect(TokenKind Kind, const char *What);
  void errorAtCurrent(const std::string &Msg);
  /// Skips to just after the next ';' or to the next '}' or statement keyword.
  void synchronize();
  SourceRange rangeFrom(SourceLoc Begin) const;

  /// Guards recursion: returns false (after diagnosing) when too deep.
  bool enterNesting();

  DiagnosticEngine &Diags;
  Lexer Lex;
  Token Tok;
  SourceLoc PrevEnd; ///< End of the last consumed token.
  unsigned Depth = 0;
  bool TooDeep = false;
  static constexpr unsigned MaxDepth = 256;

  friend struct NestingScope;
};

} // namespace cclc::dsl
