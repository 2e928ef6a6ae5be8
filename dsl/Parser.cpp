//===- Parser.cpp - Recursive-descent parser for .ccl ---------------------===//

#include "dsl/Parser.h"

namespace cclc::dsl {

/// Leaves the levels of nesting it entered when the parse function returns.
struct NestingScope {
  explicit NestingScope(Parser &P) : P(P), Ok(enter()) {}
  ~NestingScope() { P.Depth -= Levels; }
  /// Enters one more level. Left-nested chains (a + b + c, x[i][j], r.a.b)
  /// deepen the tree without recursing in the parser, but sema, the printer
  /// and the destructors recurse over them, so each link counts as nesting.
  bool enter() {
    ++Levels;
    return P.enterNesting();
  }
  Parser &P;
  unsigned Levels = 0;
  bool Ok;
};

Parser::Parser(const SourceManager &SM, uint32_t FileId, DiagnosticEngine &Diags)
    : Diags(Diags), Lex(SM, FileId, Diags) {
  Tok = Lex.next();
  PrevEnd = Tok.Loc;
}

Token Parser::consume() {
  Token Current = Tok;
  PrevEnd = Current.range().End;
  if (!Tok.is(TokenKind::Eof))
    Tok = Lex.next();
  return Current;
}

bool Parser::consumeIf(TokenKind Kind) {
  if (!Tok.is(Kind))
    return false;
  consume();
  return true;
}

void Parser::errorAtCurrent(const std::string &Msg) {
  // The lexer already diagnosed invalid tokens; a second error adds nothing.
  if (Tok.is(TokenKind::Error))
    return;
  Diags.error(Tok.range(), Msg);
}

bool Parser::expect(TokenKind Kind, const char *What) {
  if (consumeIf(Kind))
    return true;
  errorAtCurrent(std::string("expected ") + What + ", found " +
                 (Tok.is(TokenKind::Eof) ? std::string("end of file")
                                         : "'" + std::string(Tok.Text) + "'"));
  return false;
}

SourceRange Parser::rangeFrom(SourceLoc Begin) const { return {Begin, PrevEnd}; }

bool Parser::enterNesting() {
  ++Depth;
  if (Depth <= MaxDepth)
    return true;
  if (!TooDeep)
    Diags.error(Tok.range(), "nesting is deeper than " + std::to_string(MaxDepth) + " levels");
  TooDeep = true;
  return false;
}

void Parser::synchronize() {
  while (!Tok.is(TokenKind::Eof)) {
    if (consumeIf(TokenKind::Semicolon))
      return;
    switch (Tok.Kind) {
    case TokenKind::RBrace:
    case TokenKind::LBrace:
    case TokenKind::KwLet:
    case TokenKind::KwVar:
    case TokenKind::KwFor:
    case TokenKind::KwIf:
    case TokenKind::KwChunks:
    case TokenKind::KwRemap:
      return;
    default:
      consume();
    }
  }
}

std::unique_ptr<Algorithm> Parser::parseAlgorithm() {
  auto Algo = std::make_unique<Algorithm>();
  if (!Tok.is(TokenKind::Identifier)) {
    errorAtCurrent("expected a collective (allreduce, allgather, reduce_scatter, broadcast, "
                   "reduce, alltoall) to start the algorithm");
    return nullptr;
  }
  Token Kind = consume();
  Algo->CollectiveRange = Kind.range();
  if (auto Collective = plan::parseCollective(Kind.Text)) {
    Algo->Collective = *Collective;
  } else {
    Diags.error(Kind.range(), "unknown collective '" + std::string(Kind.Text) + "'");
    Diags.note(Kind.range(), "expected one of allreduce, allgather, reduce_scatter, broadcast, "
                             "reduce, alltoall");
  }

  if (!Tok.is(TokenKind::Identifier)) {
    errorAtCurrent("expected the algorithm's name after '" + std::string(Kind.Text) + "'");
    return nullptr;
  }
  Token Name = consume();
  Algo->Name = std::string(Name.Text);
  Algo->NameRange = Name.range();

  if (consumeIf(TokenKind::KwOn)) {
    if (Tok.is(TokenKind::Identifier) && (Tok.Text == "ring" || Tok.Text == "tree")) {
      Algo->Topology = Tok.Text == "ring" ? TopologyKind::Ring : TopologyKind::Tree;
      Algo->TopologyRange = consume().range();
    } else {
      errorAtCurrent("expected 'ring' or 'tree' after 'on'");
      synchronize();
    }
  }

  if (consumeIf(TokenKind::KwRequires)) {
    do
      if (ExprPtr E = parseExpr())
        Algo->Requires.push_back(std::move(E));
    while (consumeIf(TokenKind::Comma));
  }

  if (!Tok.is(TokenKind::LBrace)) {
    errorAtCurrent("expected '{' to begin the body of '" + Algo->Name + "'");
    return Algo;
  }
  Algo->Body = parseBlock();
  // Input nested too deep was cut short: what follows is its tail, not a second algorithm.
  if (!Tok.is(TokenKind::Eof) && !TooDeep)
    errorAtCurrent("unexpected '" + std::string(Tok.Text) +
                   "' after the algorithm's body (one algorithm per file)");
  return Algo;
}

std::unique_ptr<BlockStmt> Parser::parseBlock() {
  SourceLoc Begin = Tok.Loc;
  auto Block = std::make_unique<BlockStmt>(SourceRange{Begin, Begin});
  NestingScope Scope(*this);
  if (!Scope.Ok || !expect(TokenKind::LBrace, "'{'")) {
    synchronize();
    return Block;
  }
  while (!Tok.is(TokenKind::RBrace) && !Tok.is(TokenKind::Eof)) {
    if (StmtPtr S = parseStatement())
      Block->Body.push_back(std::move(S));
    if (TooDeep)
      break;
  }
  if (Tok.is(TokenKind::Eof))
    Diags.error(Begin, "missing '}' to close this block");
  consumeIf(TokenKind::RBrace);
  Block->Range = rangeFrom(Begin);
  return Block;
}

StmtPtr Parser::parseStatement() {
  switch (Tok.Kind) {
  case TokenKind::KwLet:
  case TokenKind::KwVar:
    return parseLet();
  case TokenKind::KwFor:
    return parseFor();
  case TokenKind::KwIf:
    return parseIf();
  case TokenKind::KwChunks:
    return parseChunks();
  case TokenKind::KwRemap:
    return parseRemap();
  case TokenKind::LBrace:
    return parseBlock();
  case TokenKind::Identifier:
    return parseIdentifierStatement();
  case TokenKind::Semicolon:
    Diags.warning(Tok.range(), "empty statement");
    consume();
    return nullptr;
  default:
    errorAtCurrent("expected a statement, found '" + std::string(Tok.Text) + "'");
    consume();
    synchronize();
    return nullptr;
  }
}

StmtPtr Parser::parseLet() {
  SourceLoc Begin = Tok.Loc;
  bool Mutable = consume().is(TokenKind::KwVar);
  if (!Tok.is(TokenKind::Identifier)) {
    errorAtCurrent(std::string("expected a name after '") + (Mutable ? "var" : "let") + "'");
    synchronize();
    return nullptr;
  }
  Token Name = consume();
  auto Var = std::make_unique<Decl>(Mutable ? Decl::Kind::Var : Decl::Kind::Let,
                                    std::string(Name.Text), Name.range(), Type::Unknown);
  if (!expect(TokenKind::Assign, "'='")) {
    synchronize();
    return nullptr;
  }
  ExprPtr Init = parseExpr();
  if (!Init || !expect(TokenKind::Semicolon, "';'")) {
    synchronize();
    return nullptr;
  }
  return std::make_unique<LetStmt>(rangeFrom(Begin), std::move(Var), std::move(Init));
}

StmtPtr Parser::parseFor() {
  SourceLoc Begin = consume().Loc;
  if (!Tok.is(TokenKind::Identifier)) {
    errorAtCurrent("expected a loop variable after 'for'");
    synchronize();
    return nullptr;
  }
  Token Name = consume();
  auto Var = std::make_unique<Decl>(Decl::Kind::LoopVar, std::string(Name.Text), Name.range(),
                                    Type::Int);
  if (!expect(TokenKind::KwIn, "'in'")) {
    synchronize();
    return nullptr;
  }
  ExprPtr Lo = parseExpr();
  if (!Lo || !expect(TokenKind::DotDot, "'..' between the loop bounds")) {
    synchronize();
    return nullptr;
  }
  ExprPtr Hi = parseExpr();
  if (!Hi) {
    synchronize();
    return nullptr;
  }
  auto Body = parseBlock();
  return std::make_unique<ForStmt>(rangeFrom(Begin), std::move(Var), std::move(Lo),
                                   std::move(Hi), std::move(Body));
}

StmtPtr Parser::parseIf() {
  NestingScope Scope(*this);
  if (!Scope.Ok)
    return nullptr;
  SourceLoc Begin = consume().Loc;
  ExprPtr Cond = parseExpr();
  if (!Cond) {
    synchronize();
    if (!Tok.is(TokenKind::LBrace))
      return nullptr;
  }
  auto Then = parseBlock();
  StmtPtr Else;
  if (consumeIf(TokenKind::KwElse)) {
    if (Tok.is(TokenKind::KwIf))
      Else = parseIf();
    else
      Else = parseBlock();
  }
  if (!Cond)
    return nullptr;
  return std::make_unique<IfStmt>(rangeFrom(Begin), std::move(Cond), std::move(Then),
                                  std::move(Else));
}

StmtPtr Parser::parseChunks() {
  SourceLoc Begin = consume().Loc;
  ExprPtr Count = parseExpr();
  if (!Count || !expect(TokenKind::Semicolon, "';'")) {
    synchronize();
    return nullptr;
  }
  return std::make_unique<ChunksStmt>(rangeFrom(Begin), std::move(Count));
}

StmtPtr Parser::parseRemap() {
  SourceLoc Begin = consume().Loc;
  std::unique_ptr<RemapStmt> Remap;
  if (consumeIf(TokenKind::KwAuto)) {
    Remap = std::make_unique<RemapStmt>(SourceRange{}, RemapStmt::Form::Auto);
  } else if (consumeIf(TokenKind::LBracket)) {
    Remap = std::make_unique<RemapStmt>(SourceRange{}, RemapStmt::Form::Table);
    while (!Tok.is(TokenKind::RBracket)) {
      ExprPtr E = parseExpr();
      if (!E) {
        synchronize();
        return nullptr;
      }
      Remap->Table.push_back(std::move(E));
      if (!consumeIf(TokenKind::Comma))
        break;
    }
    if (!expect(TokenKind::RBracket, "']' to close the remap table")) {
      synchronize();
      return nullptr;
    }
  } else if (Tok.is(TokenKind::Identifier)) {
    Token Param = consume();
    Remap = std::make_unique<RemapStmt>(SourceRange{}, RemapStmt::Form::Expression);
    Remap->Param = std::make_unique<Decl>(Decl::Kind::RemapParam, std::string(Param.Text),
                                          Param.range(), Type::Int);
    if (!expect(TokenKind::Arrow, "'->' after the logical-rank name")) {
      synchronize();
      return nullptr;
    }
    Remap->Mapping = parseExpr();
    if (!Remap->Mapping) {
      synchronize();
      return nullptr;
    }
  } else {
    errorAtCurrent("expected 'auto', a table '[...]' or 'l -> expression' after 'remap'");
    synchronize();
    return nullptr;
  }
  if (!expect(TokenKind::Semicolon, "';'")) {
    synchronize();
    return nullptr;
  }
  Remap->Range = rangeFrom(Begin);
  return Remap;
}

StmtPtr Parser::parseIdentifierStatement() {
  Token Name = consume();
  SourceLoc Begin = Name.Loc;
  if (consumeIf(TokenKind::Assign)) {
    auto Target = std::make_unique<NameExpr>(Name.range(), std::string(Name.Text));
    ExprPtr Value = parseExpr();
    if (!Value || !expect(TokenKind::Semicolon, "';'")) {
      synchronize();
      return nullptr;
    }
    return std::make_unique<AssignStmt>(rangeFrom(Begin), std::move(Target), std::move(Value));
  }
  if (!Tok.is(TokenKind::LParen)) {
    errorAtCurrent("expected '(' to call operation '" + std::string(Name.Text) +
                   "' or '=' to assign to it");
    synchronize();
    return nullptr;
  }
  std::vector<ExprPtr> Args;
  if (!parseCallArgs(Args) || !expect(TokenKind::Semicolon, "';' after the operation")) {
    synchronize();
    return nullptr;
  }
  return std::make_unique<OpStmt>(rangeFrom(Begin), std::string(Name.Text), Name.range(),
                                  std::move(Args));
}

bool Parser::parseCallArgs(std::vector<ExprPtr> &Args) {
  consume(); // '('
  if (consumeIf(TokenKind::RParen))
    return true;
  do {
    ExprPtr Arg = parseExpr();
    if (!Arg)
      return false;
    Args.push_back(std::move(Arg));
  } while (consumeIf(TokenKind::Comma));
  return expect(TokenKind::RParen, "')' to close the argument list");
}

ExprPtr Parser::parseExpr() { return parseBinary(0); }

namespace {
struct BinaryOpInfo {
  BinaryOp Op;
  int Precedence;
};
} // namespace

/// Bitwise operators bind tighter than comparisons (unlike C), so that
/// `rank & 1 == 0` means what it says.
static std::optional<BinaryOpInfo> binaryOpFor(TokenKind Kind) {
  switch (Kind) {
  case TokenKind::PipePipe: return BinaryOpInfo{BinaryOp::LogOr, 1};
  case TokenKind::AmpAmp: return BinaryOpInfo{BinaryOp::LogAnd, 2};
  case TokenKind::EqEq: return BinaryOpInfo{BinaryOp::Eq, 3};
  case TokenKind::NotEq: return BinaryOpInfo{BinaryOp::Ne, 3};
  case TokenKind::Less: return BinaryOpInfo{BinaryOp::Lt, 3};
  case TokenKind::LessEq: return BinaryOpInfo{BinaryOp::Le, 3};
  case TokenKind::Greater: return BinaryOpInfo{BinaryOp::Gt, 3};
  case TokenKind::GreaterEq: return BinaryOpInfo{BinaryOp::Ge, 3};
  case TokenKind::Pipe: return BinaryOpInfo{BinaryOp::BitOr, 4};
  case TokenKind::Caret: return BinaryOpInfo{BinaryOp::BitXor, 5};
  case TokenKind::Amp: return BinaryOpInfo{BinaryOp::BitAnd, 6};
  case TokenKind::Shl: return BinaryOpInfo{BinaryOp::Shl, 7};
  case TokenKind::Shr: return BinaryOpInfo{BinaryOp::Shr, 7};
  case TokenKind::Plus: return BinaryOpInfo{BinaryOp::Add, 8};
  case TokenKind::Minus: return BinaryOpInfo{BinaryOp::Sub, 8};
  case TokenKind::Star: return BinaryOpInfo{BinaryOp::Mul, 9};
  case TokenKind::Slash: return BinaryOpInfo{BinaryOp::Div, 9};
  case TokenKind::Percent: return BinaryOpInfo{BinaryOp::Rem, 9};
  default: return std::nullopt;
  }
}

static bool isComparison(BinaryOp Op) {
  return Op == BinaryOp::Eq || Op == BinaryOp::Ne || Op == BinaryOp::Lt || Op == BinaryOp::Le ||
         Op == BinaryOp::Gt || Op == BinaryOp::Ge;
}

ExprPtr Parser::parseBinary(int MinPrecedence) {
  NestingScope Scope(*this);
  if (!Scope.Ok)
    return nullptr;
  ExprPtr Lhs = parseUnary();
  if (!Lhs)
    return nullptr;
  while (auto Info = binaryOpFor(Tok.Kind)) {
    if (Info->Precedence <= MinPrecedence)
      break;
    if (!Scope.enter())
      return nullptr;
    Token OpTok = consume();
    ExprPtr Rhs = parseBinary(Info->Precedence);
    if (!Rhs)
      return nullptr;
    // `(-2) ^ s` is XOR, however much it looks like a power.
    if (Info->Op == BinaryOp::BitXor)
      if (auto *Neg = dyn_cast<UnaryExpr>(Lhs.get());
          Neg && Neg->Op == UnaryOp::Neg && isa<IntLiteralExpr>(Neg->Operand.get()))
        Diags.warning(OpTok.range(), "'^' is bitwise XOR, not a power; write '**' for a power, "
                                     "as in (-2) ** s");
    // Comparisons do not chain: `a < b < c` is almost always a mistake.
    if (isComparison(Info->Op))
      if (auto *Inner = dyn_cast<BinaryExpr>(Lhs.get()); Inner && isComparison(Inner->Op))
        Diags.error(OpTok.range(), "comparisons cannot be chained; use '&&'");
    SourceRange R{Lhs->Range.Begin, Rhs->Range.End};
    Lhs = std::make_unique<BinaryExpr>(R, Info->Op, OpTok.Loc, std::move(Lhs), std::move(Rhs));
  }
  return Lhs;
}

ExprPtr Parser::parseUnary() {
  NestingScope Scope(*this);
  if (!Scope.Ok)
    return nullptr;
  std::optional<UnaryOp> Op;
  if (Tok.is(TokenKind::Minus))
    Op = UnaryOp::Neg;
  else if (Tok.is(TokenKind::Bang))
    Op = UnaryOp::Not;
  else if (Tok.is(TokenKind::Tilde))
    Op = UnaryOp::BitNot;
  if (!Op)
    return parsePower(Scope);
  SourceLoc Begin = consume().Loc;
  ExprPtr Operand = parseUnary();
  if (!Operand)
    return nullptr;
  return std::make_unique<UnaryExpr>(rangeFrom(Begin), *Op, std::move(Operand));
}

/// "**" binds tighter than the unary operators on its left and takes a
/// unary expression on its right, as in Python: -2 ** 2 is -(2 ** 2), and
/// 2 ** 3 ** 2 is 2 ** (3 ** 2).
ExprPtr Parser::parsePower(NestingScope &Scope) {
  ExprPtr Base = parsePostfix(Scope);
  if (!Base || !Tok.is(TokenKind::StarStar))
    return Base;
  if (!Scope.enter())
    return nullptr;
  Token OpTok = consume();
  ExprPtr Exponent = parseUnary();
  if (!Exponent)
    return nullptr;
  SourceRange R{Base->Range.Begin, Exponent->Range.End};
  return std::make_unique<BinaryExpr>(R, BinaryOp::Pow, OpTok.Loc, std::move(Base),
                                      std::move(Exponent));
}

ExprPtr Parser::parsePostfix(NestingScope &Scope) {
  ExprPtr E = parsePrimary();
  while (E) {
    if ((Tok.is(TokenKind::Dot) || Tok.is(TokenKind::LBracket)) && !Scope.enter())
      return nullptr;
    if (consumeIf(TokenKind::Dot)) {
      if (!Tok.is(TokenKind::Identifier)) {
        errorAtCurrent("expected a member name after '.'");
        return nullptr;
      }
      Token Member = consume();
      SourceRange R{E->Range.Begin, Member.range().End};
      E = std::make_unique<MemberExpr>(R, std::move(E), std::string(Member.Text),
                                       Member.range());
    } else if (consumeIf(TokenKind::LBracket)) {
      ExprPtr Index = parseExpr();
      if (!Index)
        return nullptr;
      ExprPtr End;
      if (consumeIf(TokenKind::DotDot)) {
        End = parseExpr();
        if (!End)
          return nullptr;
      }
      if (!expect(TokenKind::RBracket, "']'"))
        return nullptr;
      SourceRange R{E->Range.Begin, PrevEnd};
      E = std::make_unique<IndexExpr>(R, std::move(E), std::move(Index), std::move(End));
    } else {
      break;
    }
  }
  return E;
}

ExprPtr Parser::parsePrimary() {
  switch (Tok.Kind) {
  case TokenKind::Integer: {
    Token T = consume();
    return std::make_unique<IntLiteralExpr>(T.range(), T.IntValue);
  }
  case TokenKind::KwTrue:
  case TokenKind::KwFalse: {
    Token T = consume();
    return std::make_unique<BoolLiteralExpr>(T.range(), T.is(TokenKind::KwTrue));
  }
  case TokenKind::Identifier: {
    Token T = consume();
    if (Tok.is(TokenKind::LParen)) {
      std::vector<ExprPtr> Args;
      if (!parseCallArgs(Args))
        return nullptr;
      return std::make_unique<CallExpr>(rangeFrom(T.Loc), std::string(T.Text), T.range(),
                                        std::move(Args));
    }
    return std::make_unique<NameExpr>(T.range(), std::string(T.Text));
  }
  case TokenKind::LParen: {
    consume();
    ExprPtr E = parseExpr();
    if (!E || !expect(TokenKind::RParen, "')'"))
      return nullptr;
    return E;
  }
  default:
    errorAtCurrent(Tok.is(TokenKind::Eof)
                       ? std::string("expected an expression, found end of file")
                       : "expected an expression, found '" + std::string(Tok.Text) + "'");
    return nullptr;
  }
}

} // namespace cclc::dsl
