//===- Token.h - Tokens of the .ccl language --------------------*- C++ -*-===//
#pragma once

#include "plan/SourceManager.h"

#include <cstdint>
#include <string>
#include <string_view>

namespace cclc::dsl {

enum class TokenKind {
  Eof,
  Error, ///< A character or literal the lexer could not read; already diagnosed.
  Identifier,
  Integer,
  // Keywords.
  KwLet,
  KwVar,
  KwFor,
  KwIn,
  KwIf,
  KwElse,
  KwRequires,
  KwOn,
  KwRemap,
  KwAuto,
  KwChunks,
  KwTrue,
  KwFalse,
  // Punctuation and operators.
  LBrace,
  RBrace,
  LParen,
  RParen,
  LBracket,
  RBracket,
  Comma,
  Semicolon,
  Dot,
  DotDot,
  Arrow,
  Assign,
  EqEq,
  NotEq,
  Less,
  LessEq,
  Greater,
  GreaterEq,
  Shl,
  Shr,
  Plus,
  Minus,
  Star,
  StarStar,
  Slash,
  Percent,
  Amp,
  Pipe,
  Caret,
  Tilde,
  Bang,
  AmpAmp,
  PipePipe,
};

/// The spelling used in diagnostics and --emit=tokens ("identifier", "'{'").
std::string_view tokenKindName(TokenKind Kind);

struct Token {
  TokenKind Kind = TokenKind::Eof;
  std::string_view Text; ///< Points into the SourceManager's buffer.
  SourceLoc Loc;
  int64_t IntValue = 0; ///< For Integer tokens.

  bool is(TokenKind K) const { return Kind == K; }
  SourceRange range() const {
    SourceLoc End = Loc;
    End.Col += static_cast<uint32_t>(Text.size());
    return {Loc, End};
  }
};

} // namespace cclc::dsl
