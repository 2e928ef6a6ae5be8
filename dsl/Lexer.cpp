//===- Lexer.cpp - Tokenizer for .ccl files -------------------------------===//

#include "dsl/Lexer.h"

#include <algorithm>
#include <cctype>
#include <unordered_map>

namespace cclc::dsl {

std::string_view tokenKindName(TokenKind Kind) {
  switch (Kind) {
  case TokenKind::Eof: return "end of file";
  case TokenKind::Error: return "invalid token";
  case TokenKind::Identifier: return "identifier";
  case TokenKind::Integer: return "integer";
  case TokenKind::KwLet: return "'let'";
  case TokenKind::KwVar: return "'var'";
  case TokenKind::KwFor: return "'for'";
  case TokenKind::KwIn: return "'in'";
  case TokenKind::KwIf: return "'if'";
  case TokenKind::KwElse: return "'else'";
  case TokenKind::KwRequires: return "'requires'";
  case TokenKind::KwOn: return "'on'";
  case TokenKind::KwRemap: return "'remap'";
  case TokenKind::KwAuto: return "'auto'";
  case TokenKind::KwChunks: return "'chunks'";
  case TokenKind::KwTrue: return "'true'";
  case TokenKind::KwFalse: return "'false'";
  case TokenKind::LBrace: return "'{'";
  case TokenKind::RBrace: return "'}'";
  case TokenKind::LParen: return "'('";
  case TokenKind::RParen: return "')'";
  case TokenKind::LBracket: return "'['";
  case TokenKind::RBracket: return "']'";
  case TokenKind::Comma: return "','";
  case TokenKind::Semicolon: return "';'";
  case TokenKind::Dot: return "'.'";
  case TokenKind::DotDot: return "'..'";
  case TokenKind::Arrow: return "'->'";
  case TokenKind::Assign: return "'='";
  case TokenKind::EqEq: return "'=='";
  case TokenKind::NotEq: return "'!='";
  case TokenKind::Less: return "'<'";
  case TokenKind::LessEq: return "'<='";
  case TokenKind::Greater: return "'>'";
  case TokenKind::GreaterEq: return "'>='";
  case TokenKind::Shl: return "'<<'";
  case TokenKind::Shr: return "'>>'";
  case TokenKind::Plus: return "'+'";
  case TokenKind::Minus: return "'-'";
  case TokenKind::Star: return "'*'";
  case TokenKind::StarStar: return "'**'";
  case TokenKind::Slash: return "'/'";
  case TokenKind::Percent: return "'%'";
  case TokenKind::Amp: return "'&'";
  case TokenKind::Pipe: return "'|'";
  case TokenKind::Caret: return "'^'";
  case TokenKind::Tilde: return "'~'";
  case TokenKind::Bang: return "'!'";
  case TokenKind::AmpAmp: return "'&&'";
  case TokenKind::PipePipe: return "'||'";
  }
  return "token";
}

Lexer::Lexer(const SourceManager &SM, uint32_t FileId, DiagnosticEngine &Diags)
    : Text(SM.getText(FileId)), FileId(FileId), Diags(Diags) {}

char Lexer::peek(size_t Ahead) const {
  return Pos + Ahead < Text.size() ? Text[Pos + Ahead] : '\0';
}

void Lexer::advance() {
  if (Pos >= Text.size())
    return;
  if (Text[Pos] == '\n') {
    ++Line;
    Col = 1;
  } else {
    ++Col;
  }
  ++Pos;
}

void Lexer::skipWhitespaceAndComments() {
  while (Pos < Text.size()) {
    char C = Text[Pos];
    if (C == '#') {
      while (Pos < Text.size() && Text[Pos] != '\n')
        advance();
    } else if (C == ' ' || C == '\t' || C == '\n' || C == '\r') {
      advance();
    } else {
      return;
    }
  }
}

Token Lexer::make(TokenKind Kind, size_t Begin, SourceLoc Loc) const {
  Token T;
  T.Kind = Kind;
  T.Text = Text.substr(Begin, Pos - Begin);
  T.Loc = Loc;
  return T;
}

Token Lexer::lexNumber(size_t Begin, SourceLoc Loc) {
  int Base = 10;
  if (peek() == '0' && (peek(1) == 'x' || peek(1) == 'X')) {
    Base = 16;
    advance();
    advance();
  } else if (peek() == '0' && (peek(1) == 'b' || peek(1) == 'B')) {
    Base = 2;
    advance();
    advance();
  }
  size_t DigitsBegin = Pos;
  while (std::isalnum(static_cast<unsigned char>(peek())) || peek() == '_')
    advance();
  Token T = make(TokenKind::Integer, Begin, Loc);
  uint64_t Value = 0;
  bool Overflow = false;
  size_t NumDigits = 0;
  for (size_t I = DigitsBegin; I < Pos; ++I) {
    char C = Text[I];
    if (C == '_')
      continue;
    int Digit = std::isdigit(static_cast<unsigned char>(C))   ? C - '0'
                : std::isxdigit(static_cast<unsigned char>(C)) ? std::tolower(C) - 'a' + 10
                                                                : 99;
    if (Digit >= Base) {
      Diags.error(SourceLoc{FileId, Loc.Line, Loc.Col + static_cast<uint32_t>(I - Begin)},
                  std::string("invalid digit '") + C + "' in " +
                      (Base == 16 ? "hexadecimal" : Base == 2 ? "binary" : "decimal") +
                      " literal");
      T.Kind = TokenKind::Error;
      return T;
    }
    ++NumDigits;
    if (Value > (static_cast<uint64_t>(INT64_MAX) - Digit) / Base)
      Overflow = true;
    else
      Value = Value * Base + Digit;
  }
  if (NumDigits == 0) {
    Diags.error(T.range(), "integer literal has no digits");
    T.Kind = TokenKind::Error;
  } else if (Overflow) {
    Diags.error(T.range(), "integer literal '" + std::string(T.Text) +
                               "' does not fit in 64 bits");
    T.Kind = TokenKind::Error;
  }
  T.IntValue = static_cast<int64_t>(Value);
  return T;
}

static const std::unordered_map<std::string_view, TokenKind> &keywords() {
  static const std::unordered_map<std::string_view, TokenKind> Keywords = {
      {"let", TokenKind::KwLet},       {"var", TokenKind::KwVar},
      {"for", TokenKind::KwFor},       {"in", TokenKind::KwIn},
      {"if", TokenKind::KwIf},         {"else", TokenKind::KwElse},
      {"requires", TokenKind::KwRequires}, {"on", TokenKind::KwOn},
      {"remap", TokenKind::KwRemap},   {"auto", TokenKind::KwAuto},
      {"chunks", TokenKind::KwChunks}, {"true", TokenKind::KwTrue},
      {"false", TokenKind::KwFalse},
  };
  return Keywords;
}

static bool isIdentifierChar(char C) {
  return std::isalnum(static_cast<unsigned char>(C)) || C == '_';
}

bool isIdentifier(std::string_view Name) {
  return !Name.empty() && !std::isdigit(static_cast<unsigned char>(Name[0])) &&
         std::all_of(Name.begin(), Name.end(), isIdentifierChar) && !keywords().count(Name);
}

Token Lexer::lexIdentifier(size_t Begin, SourceLoc Loc) {
  while (isIdentifierChar(peek()))
    advance();
  Token T = make(TokenKind::Identifier, Begin, Loc);
  if (auto It = keywords().find(T.Text); It != keywords().end())
    T.Kind = It->second;
  return T;
}

Token Lexer::next() {
  skipWhitespaceAndComments();
  SourceLoc Loc{FileId, Line, Col};
  size_t Begin = Pos;
  if (Pos >= Text.size())
    return make(TokenKind::Eof, Begin, Loc);

  char C = peek();
  if (std::isdigit(static_cast<unsigned char>(C)))
    return lexNumber(Begin, Loc);
  if (std::isalpha(static_cast<unsigned char>(C)) || C == '_')
    return lexIdentifier(Begin, Loc);

  auto Single = [&](TokenKind Kind) {
    advance();
    return make(Kind, Begin, Loc);
  };
  auto Double = [&](TokenKind Kind) {
    advance();
    advance();
    return make(Kind, Begin, Loc);
  };
  char N = peek(1);
  switch (C) {
  case '{': return Single(TokenKind::LBrace);
  case '}': return Single(TokenKind::RBrace);
  case '(': return Single(TokenKind::LParen);
  case ')': return Single(TokenKind::RParen);
  case '[': return Single(TokenKind::LBracket);
  case ']': return Single(TokenKind::RBracket);
  case ',': return Single(TokenKind::Comma);
  case ';': return Single(TokenKind::Semicolon);
  case '.': return N == '.' ? Double(TokenKind::DotDot) : Single(TokenKind::Dot);
  case '-': return N == '>' ? Double(TokenKind::Arrow) : Single(TokenKind::Minus);
  case '=': return N == '=' ? Double(TokenKind::EqEq) : Single(TokenKind::Assign);
  case '!': return N == '=' ? Double(TokenKind::NotEq) : Single(TokenKind::Bang);
  case '<':
    if (N == '<') return Double(TokenKind::Shl);
    return N == '=' ? Double(TokenKind::LessEq) : Single(TokenKind::Less);
  case '>':
    if (N == '>') return Double(TokenKind::Shr);
    return N == '=' ? Double(TokenKind::GreaterEq) : Single(TokenKind::Greater);
  case '+': return Single(TokenKind::Plus);
  case '*': return N == '*' ? Double(TokenKind::StarStar) : Single(TokenKind::Star);
  case '/': return Single(TokenKind::Slash);
  case '%': return Single(TokenKind::Percent);
  case '&': return N == '&' ? Double(TokenKind::AmpAmp) : Single(TokenKind::Amp);
  case '|': return N == '|' ? Double(TokenKind::PipePipe) : Single(TokenKind::Pipe);
  case '^': return Single(TokenKind::Caret);
  case '~': return Single(TokenKind::Tilde);
  default:
    break;
  }
  advance();
  Token T = make(TokenKind::Error, Begin, Loc);
  unsigned char U = static_cast<unsigned char>(C);
  if (std::isprint(U)) {
    Diags.error(Loc, std::string("unexpected character '") + C + "'");
  } else {
    static const char Hex[] = "0123456789abcdef";
    Diags.error(Loc, std::string("unexpected byte 0x") + Hex[U >> 4] + Hex[U & 15] +
                         " (.ccl files are ASCII outside comments)");
  }
  return T;
}

std::vector<Token> Lexer::lexAll() {
  std::vector<Token> Tokens;
  do
    Tokens.push_back(next());
  while (!Tokens.back().is(TokenKind::Eof));
  return Tokens;
}

} // namespace cclc::dsl
