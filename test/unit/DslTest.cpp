//===- DslTest.cpp - Lexer, parser, sema and integer semantics ------------===//
//
// The lit tests show what a user sees; these pin down the pieces underneath:
// token values and locations, the shape of the tree, recovery after errors,
// the scoping and folding of sema, and the integer arithmetic both sema and
// the compiler rely on.
//
//===----------------------------------------------------------------------===//

#include "DslTestSupport.h"

#include "dsl/Arith.h"
#include "dsl/Lexer.h"
#include "dsl/Parser.h"

#include <gtest/gtest.h>

using namespace cclc;
using namespace cclc::dsl;
using cclc::dsl::test::CheckedSource;

namespace {

/// Wraps statements in an algorithm with one operation, so that sema has
/// nothing to warn about but what the statements themselves do.
std::string algorithm(const std::string &Body) {
  return "allreduce t {\n" + Body + "\ncopy(input, output);\n}\n";
}

/// dyn_cast that fails the test instead of returning null.
template <typename To, typename From> auto *cast(From *Node) {
  auto *Result = dyn_cast<To>(Node);
  EXPECT_NE(Result, nullptr);
  return Result;
}

/// The folded value of the initializer of the first let in Body.
std::optional<int64_t> foldLet(const std::string &Body) {
  CheckedSource S(algorithm(Body), /*Silent=*/true);
  if (!S.Algo)
    return std::nullopt;
  return cast<LetStmt>(S.Algo->Body->Body.front().get())->Init->ConstValue;
}

std::vector<Token> lex(const std::string &Text, unsigned *Errors = nullptr) {
  static SourceManager SM;
  uint32_t Id = SM.addBuffer("lex.ccl", Text);
  std::ostringstream Out;
  DiagnosticEngine Diags(SM, Out);
  std::vector<Token> Tokens = Lexer(SM, Id, Diags).lexAll();
  if (Errors)
    *Errors = Diags.errorCount();
  return Tokens;
}

} // namespace

//===----------------------------------------------------------------------===//
// Lexer
//===----------------------------------------------------------------------===//

TEST(DslLexer, LiteralValuesInEveryBase) {
  std::vector<Token> T = lex("0 42 0x1F 0XfF 0b101 0B1_0 1_000 9223372036854775807");
  ASSERT_EQ(T.size(), 9u);
  std::vector<int64_t> Want = {0, 42, 31, 255, 5, 2, 1000, INT64_MAX};
  for (size_t I = 0; I < Want.size(); ++I) {
    EXPECT_EQ(T[I].Kind, TokenKind::Integer) << I;
    EXPECT_EQ(T[I].IntValue, Want[I]) << I;
  }
  EXPECT_TRUE(T.back().is(TokenKind::Eof));
}

TEST(DslLexer, BadLiteralsAreErrorTokens) {
  for (const char *Text : {"0x", "0b2", "12ab", "9223372036854775808", "0x1_0000_0000_0000_0000",
                           "99999999999999999999999999999999999999999999999999"}) {
    unsigned Errors = 0;
    std::vector<Token> T = lex(Text, &Errors);
    EXPECT_EQ(Errors, 1u) << Text;
    EXPECT_TRUE(T[0].is(TokenKind::Error)) << Text;
  }
}

TEST(DslLexer, LocationsCountLinesColumnsTabsAndCrlf) {
  std::vector<Token> T = lex("a\r\n\tb # c d\n  ..");
  ASSERT_EQ(T.size(), 4u);
  EXPECT_EQ(T[0].Loc.Line, 1u);
  EXPECT_EQ(T[0].Loc.Col, 1u);
  EXPECT_EQ(T[1].Text, "b");
  EXPECT_EQ(T[1].Loc.Line, 2u);
  EXPECT_EQ(T[1].Loc.Col, 2u);
  EXPECT_TRUE(T[2].is(TokenKind::DotDot));
  EXPECT_EQ(T[2].Loc.Line, 3u);
  EXPECT_EQ(T[2].Loc.Col, 3u);
  EXPECT_EQ(T[2].range().End.Col, 5u);
}

TEST(DslLexer, KeywordsAreCaseSensitiveAndWholeWords) {
  std::vector<Token> T = lex("let Let letter _let remap auto");
  EXPECT_TRUE(T[0].is(TokenKind::KwLet));
  EXPECT_TRUE(T[1].is(TokenKind::Identifier));
  EXPECT_TRUE(T[2].is(TokenKind::Identifier));
  EXPECT_TRUE(T[3].is(TokenKind::Identifier));
  EXPECT_TRUE(T[4].is(TokenKind::KwRemap));
  EXPECT_TRUE(T[5].is(TokenKind::KwAuto));
}

TEST(DslLexer, EveryByteIsATokenOrAnError) {
  // NUL and bytes above 0x7f outside comments are errors, one per byte.
  unsigned Errors = 0;
  std::vector<Token> T = lex(std::string("a\0b\xff", 4) + "# \xc3\xa9 ok\n", &Errors);
  EXPECT_EQ(Errors, 2u);
  ASSERT_EQ(T.size(), 5u);
  EXPECT_TRUE(T[1].is(TokenKind::Error));
  EXPECT_TRUE(T[3].is(TokenKind::Error));
}

TEST(DslLexer, NextAfterEndOfFileStaysAtEnd) {
  SourceManager SM;
  uint32_t Id = SM.addBuffer("e.ccl", "x");
  DiagnosticEngine Diags(SM);
  Lexer L(SM, Id, Diags);
  EXPECT_TRUE(L.next().is(TokenKind::Identifier));
  EXPECT_TRUE(L.next().is(TokenKind::Eof));
  EXPECT_TRUE(L.next().is(TokenKind::Eof));
}

//===----------------------------------------------------------------------===//
// Parser
//===----------------------------------------------------------------------===//

TEST(DslParser, PrecedenceFromLogicalOrDownToUnary) {
  CheckedSource S(algorithm("let _x = rank == 0 || -rank | 2 ^ 3 & 4 << 1 + 2 * 3 > 0;"));
  ASSERT_NE(S.Algo, nullptr) << S.output();
  const Expr *E = cast<LetStmt>(S.Algo->Body->Body.front().get())->Init.get();
  // ||( ==(rank, 0), >( |(-rank, ^(2, &(3, <<(4, +(1, *(2, 3)))))), 0 ) )
  auto *Or = cast<BinaryExpr>(E);
  EXPECT_EQ(Or->Op, BinaryOp::LogOr);
  EXPECT_EQ(cast<BinaryExpr>(Or->Lhs.get())->Op, BinaryOp::Eq);
  auto *Gt = cast<BinaryExpr>(Or->Rhs.get());
  EXPECT_EQ(Gt->Op, BinaryOp::Gt);
  auto *BitOr = cast<BinaryExpr>(Gt->Lhs.get());
  EXPECT_EQ(BitOr->Op, BinaryOp::BitOr);
  EXPECT_EQ(cast<UnaryExpr>(BitOr->Lhs.get())->Op, UnaryOp::Neg);
  auto *Xor = cast<BinaryExpr>(BitOr->Rhs.get());
  EXPECT_EQ(Xor->Op, BinaryOp::BitXor);
  auto *And = cast<BinaryExpr>(Xor->Rhs.get());
  EXPECT_EQ(And->Op, BinaryOp::BitAnd);
  auto *Shl = cast<BinaryExpr>(And->Rhs.get());
  EXPECT_EQ(Shl->Op, BinaryOp::Shl);
  auto *Add = cast<BinaryExpr>(Shl->Rhs.get());
  EXPECT_EQ(Add->Op, BinaryOp::Add);
  EXPECT_EQ(cast<BinaryExpr>(Add->Rhs.get())->Op, BinaryOp::Mul);
  EXPECT_EQ(Add->ConstValue, 7);
}

TEST(DslParser, RecoversAndReportsEveryStatementError) {
  CheckedSource S(algorithm("let = 1;\nlet y 2;\nsend 0;\nfor in 0 .. 2 {}\nremap 5;\n"
                            "copy(input output);\nlet z = (1;\n"));
  EXPECT_EQ(S.Algo, nullptr);
  EXPECT_EQ(S.Diags.errorCount(), 7u) << S.output();
}

TEST(DslParser, PartialTreeAfterSyntaxErrors) {
  SourceManager SM;
  uint32_t Id = SM.addBuffer("p.ccl", algorithm("let = 1;\nsend(0, output);"));
  std::ostringstream Out;
  DiagnosticEngine Diags(SM, Out);
  std::unique_ptr<Algorithm> Algo = Parser(SM, Id, Diags).parseAlgorithm();
  ASSERT_NE(Algo, nullptr);
  EXPECT_EQ(Diags.errorCount(), 1u);
  // The bad let is dropped; both operations survive.
  ASSERT_EQ(Algo->Body->Body.size(), 2u);
  EXPECT_EQ(cast<OpStmt>(Algo->Body->Body[0].get())->Name, "send");
}

TEST(DslParser, NoTreeWithoutAHeader) {
  for (const char *Text : {"", "# nothing\n", "{ }", "allreduce", "allreduce { }", "42 x { }"}) {
    CheckedSource S(Text);
    EXPECT_EQ(S.Algo, nullptr) << Text;
    EXPECT_EQ(S.Diags.errorCount(), 1u) << Text << "\n" << S.output();
  }
}

TEST(DslParser, ElseIfChainsNestInElse) {
  CheckedSource S(algorithm("if rank == 0 {} else if rank == 1 {} else {}"));
  ASSERT_NE(S.Algo, nullptr) << S.output();
  auto *If = cast<IfStmt>(S.Algo->Body->Body.front().get());
  auto *ElseIf = cast<IfStmt>(If->Else.get());
  EXPECT_NE(dyn_cast<BlockStmt>(ElseIf->Else.get()), nullptr);
}

/// Hostile nesting must end in one diagnostic, never in a stack overflow:
/// before chains counted as nesting, a 100000-term sum parsed into a tree
/// that sema and the destructors recursed over until the stack ran out.
TEST(DslParser, DeepNestingOfEveryKindIsOneError) {
  const size_t N = 100000;
  auto Repeat = [](const std::string &S, size_t Times) {
    std::string R;
    for (size_t I = 0; I < Times; ++I)
      R += S;
    return R;
  };
  std::vector<std::string> Bodies = {
      "let x = " + Repeat("(", N) + "1" + Repeat(")", N) + ";",
      Repeat("{", N) + Repeat("}", N),
      "let x = " + Repeat("-", N) + "1;",
      "let x = " + Repeat("!", N) + "true;",
      "let x = 1" + Repeat(" + 1", N) + ";",
      "let x = 1" + Repeat(" * 1 + 1", N) + ";",
      "let x = output" + Repeat("[0]", N) + ";",
      "let x = ring" + Repeat(".a", N) + ";",
      "let x = min(" + Repeat("min(", N) + ";",
      Repeat("if true {} else ", N) + "{}",
      Repeat("for i in 0 .. 1 {", N),
  };
  for (const std::string &Body : Bodies) {
    CheckedSource S(algorithm(Body));
    EXPECT_EQ(S.Algo, nullptr) << Body.substr(0, 40);
    EXPECT_EQ(S.count("nesting is deeper than 256 levels"), 1u) << Body.substr(0, 40);
    EXPECT_EQ(S.count("after the algorithm's body"), 0u) << Body.substr(0, 40);
  }
}

TEST(DslParser, ModerateChainsStillParse) {
  std::string Sum = "let _x = 0";
  for (int I = 0; I < 200; ++I)
    Sum += " + 1";
  EXPECT_EQ(foldLet(Sum + ";"), 200);
}

//===----------------------------------------------------------------------===//
// Sema
//===----------------------------------------------------------------------===//

TEST(DslSema, BindsNamesToTheInnermostDeclaration) {
  CheckedSource S(algorithm("let _a = 1;\nfor i in 0 .. 2 { let _a = i; send(_a, output); }"));
  ASSERT_NE(S.Algo, nullptr) << S.output();
  EXPECT_EQ(S.count("shadows an outer let"), 1u);
  auto *For = cast<ForStmt>(S.Algo->Body->Body[1].get());
  auto *Inner = cast<LetStmt>(For->Body->Body[0].get());
  auto *Send = cast<OpStmt>(For->Body->Body[1].get());
  EXPECT_EQ(cast<NameExpr>(Send->Args[0].get())->Target, Inner->Var.get());
  EXPECT_EQ(Send->Info->Name, "send");
}

TEST(DslSema, RecordsChunksAndRemap) {
  CheckedSource S("allreduce t { chunks 2 * 2; remap l -> (l + 1) % nranks; copy(input, output); }");
  ASSERT_NE(S.Algo, nullptr) << S.output();
  ASSERT_NE(S.Algo->Chunks, nullptr);
  EXPECT_EQ(S.Algo->Chunks->Count->ConstValue, 4);
  ASSERT_NE(S.Algo->Remap, nullptr);
  EXPECT_EQ(S.Algo->Remap->TheForm, RemapStmt::Form::Expression);
}

TEST(DslSema, FoldsThroughLetsButNotVars) {
  EXPECT_EQ(foldLet("let _x = 3; let _y = _x * _x;"), 3);
  CheckedSource S(algorithm("let k = 3; var v = 3; let _a = k * 2; let _b = v * 2;"));
  ASSERT_NE(S.Algo, nullptr) << S.output();
  EXPECT_EQ(cast<LetStmt>(S.Algo->Body->Body[2].get())->Init->ConstValue, 6);
  EXPECT_FALSE(cast<LetStmt>(S.Algo->Body->Body[3].get())->Init->ConstValue.has_value());
}

TEST(DslSema, TypesOfEveryKindOfExpression) {
  CheckedSource S("allgather t on ring { let _i = ring.ranks[0]; let _l = ring.ranks;"
                  " let _b = pow2(nranks); let _s = output[0 .. 1]; let _u = output;"
                  " copy(input, output[rank]); }");
  ASSERT_NE(S.Algo, nullptr) << S.output();
  std::vector<Type> Want = {Type::Int, Type::IntList, Type::Bool, Type::Slice, Type::Buffer};
  for (size_t I = 0; I < Want.size(); ++I)
    EXPECT_EQ(cast<LetStmt>(S.Algo->Body->Body[I].get())->Var->Ty, Want[I]) << I;
}

TEST(DslSema, UnusedWarningsComeInSourceOrder) {
  CheckedSource S(algorithm("let b = 1; let a = 2; var c = 3;"));
  ASSERT_NE(S.Algo, nullptr);
  std::string Out = S.output();
  size_t B = Out.find("unused let 'b'"), A = Out.find("unused let 'a'"),
         C = Out.find("unused var 'c'");
  ASSERT_NE(C, std::string::npos) << Out;
  EXPECT_LT(B, A);
  EXPECT_LT(A, C);
  EXPECT_EQ(S.Diags.warningCount(), 3u);
}

TEST(DslSema, ErrorsAreNotRepeatedByEnclosingExpressions) {
  CheckedSource S(algorithm("let _x = ((nope + 1) * 2 < 3) && true;"));
  EXPECT_EQ(S.Diags.errorCount(), 1u) << S.output();
}

TEST(DslSema, CatalogAdditionsAreOperations) {
  SourceManager SM;
  uint32_t Id = SM.addBuffer("c.ccl", "allreduce t { scale(output); }");
  std::ostringstream Out;
  DiagnosticEngine Diags(SM, Out);
  OperationCatalog Ops;
  EXPECT_TRUE(Ops.add({"scale", {{"acc", ParamRole::Accumulator}}, "multiply in place", ""}));
  EXPECT_FALSE(Ops.add({"send", {}, "a second send", ""}));
  EXPECT_NE(parseAndCheck(Id, Ops, Diags), nullptr) << Out.str();
}

TEST(DslSema, ClosestNameNeedsToBeClose) {
  std::vector<std::string_view> Names = {"send", "recv", "exchange"};
  EXPECT_EQ(closestName("sned", Names), "send");
  EXPECT_EQ(closestName("exchnge", Names), "exchange");
  EXPECT_EQ(closestName("teleport", Names), "");
}

//===----------------------------------------------------------------------===//
// Integer semantics
//===----------------------------------------------------------------------===//

namespace {
int64_t value(const EvalResult &R) {
  EXPECT_TRUE(R.Value.has_value()) << R.Error;
  return R.Value.value_or(0);
}
bool fails(const EvalResult &R, const std::string &Message) {
  return !R.Value && R.Error.find(Message) != std::string::npos;
}
} // namespace

TEST(DslArith, DivisionAndRemainderRoundTowardNegativeInfinity) {
  struct Case {
    int64_t Lhs, Rhs, Quot, Rem;
  };
  for (Case C : {Case{7, 2, 3, 1}, Case{-7, 2, -4, 1}, Case{7, -2, -4, -1}, Case{-7, -2, 3, -1},
                 Case{6, 3, 2, 0}, Case{-6, 3, -2, 0}, Case{0, -5, 0, 0}, Case{-1, 8, -1, 7},
                 Case{INT64_MIN, 1, INT64_MIN, 0}, Case{INT64_MAX, -1, -INT64_MAX, 0}}) {
    EXPECT_EQ(value(evalBinary(BinaryOp::Div, C.Lhs, C.Rhs)), C.Quot) << C.Lhs << "/" << C.Rhs;
    EXPECT_EQ(value(evalBinary(BinaryOp::Rem, C.Lhs, C.Rhs)), C.Rem) << C.Lhs << "%" << C.Rhs;
    // The identity every algorithm's index arithmetic relies on.
    EXPECT_EQ(C.Quot * C.Rhs + C.Rem, C.Lhs);
  }
  EXPECT_TRUE(fails(evalBinary(BinaryOp::Div, 1, 0), "division by zero"));
  EXPECT_TRUE(fails(evalBinary(BinaryOp::Rem, 1, 0), "remainder by zero"));
  EXPECT_TRUE(fails(evalBinary(BinaryOp::Div, INT64_MIN, -1), "integer overflow"));
  // C leaves INT64_MIN % -1 undefined; it is reported rather than guessed.
  EXPECT_TRUE(fails(evalBinary(BinaryOp::Rem, INT64_MIN, -1), "integer overflow"));
}

TEST(DslArith, OverflowIsAnErrorNeverWrapped) {
  EXPECT_EQ(value(evalBinary(BinaryOp::Add, INT64_MAX - 1, 1)), INT64_MAX);
  EXPECT_TRUE(fails(evalBinary(BinaryOp::Add, INT64_MAX, 1), "integer overflow in"));
  EXPECT_TRUE(fails(evalBinary(BinaryOp::Sub, INT64_MIN, 1), "integer overflow in"));
  EXPECT_EQ(value(evalBinary(BinaryOp::Sub, -1, INT64_MAX)), INT64_MIN);
  EXPECT_TRUE(fails(evalBinary(BinaryOp::Mul, INT64_MAX / 2 + 1, 2), "integer overflow in"));
  EXPECT_EQ(value(evalBinary(BinaryOp::Mul, INT64_MIN / 2, 2)), INT64_MIN);
  EXPECT_TRUE(fails(evalUnary(UnaryOp::Neg, INT64_MIN), "overflow in negation"));
  EXPECT_EQ(value(evalUnary(UnaryOp::Neg, INT64_MAX)), -INT64_MAX);
}

TEST(DslArith, PowersAreExactToTheEdgeOf64Bits) {
  EXPECT_EQ(value(evalBinary(BinaryOp::Pow, 2, 62)), int64_t(1) << 62);
  EXPECT_EQ(value(evalBinary(BinaryOp::Pow, -2, 63)), INT64_MIN);
  EXPECT_EQ(value(evalBinary(BinaryOp::Pow, -2, 5)), -32);
  EXPECT_EQ(value(evalBinary(BinaryOp::Pow, 3, 39)), 4052555153018976267);
  EXPECT_EQ(value(evalBinary(BinaryOp::Pow, -1, INT64_MAX)), -1);
  EXPECT_EQ(value(evalBinary(BinaryOp::Pow, 0, INT64_MAX)), 0);
  EXPECT_EQ(value(evalBinary(BinaryOp::Pow, 0, 0)), 1);
  EXPECT_EQ(value(evalBinary(BinaryOp::Pow, 1, INT64_MAX)), 1);
  EXPECT_TRUE(fails(evalBinary(BinaryOp::Pow, 2, 63), "integer overflow in 2 ** 63"));
  EXPECT_TRUE(fails(evalBinary(BinaryOp::Pow, 3, 40), "integer overflow"));
  EXPECT_TRUE(fails(evalBinary(BinaryOp::Pow, 2, INT64_MAX), "integer overflow"));
  EXPECT_TRUE(fails(evalBinary(BinaryOp::Pow, 2, -1), "negative exponent -1"));
}

TEST(DslArith, ShiftsStayInRangeAndKeepTheSign) {
  EXPECT_EQ(value(evalBinary(BinaryOp::Shl, 1, 62)), int64_t(1) << 62);
  EXPECT_EQ(value(evalBinary(BinaryOp::Shl, -1, 62)), INT64_MIN / 2);
  EXPECT_EQ(value(evalBinary(BinaryOp::Shl, -2, 62)), INT64_MIN);
  EXPECT_EQ(value(evalBinary(BinaryOp::Shl, 0, 62)), 0);
  EXPECT_TRUE(fails(evalBinary(BinaryOp::Shl, 2, 62), "integer overflow"));
  EXPECT_TRUE(fails(evalBinary(BinaryOp::Shl, -3, 62), "integer overflow"));
  EXPECT_EQ(value(evalBinary(BinaryOp::Shl, 3, 61)), 3 * (int64_t(1) << 61));
  EXPECT_TRUE(fails(evalBinary(BinaryOp::Shl, 4, 61), "integer overflow"));
  EXPECT_EQ(value(evalBinary(BinaryOp::Shr, -8, 1)), -4);
  EXPECT_EQ(value(evalBinary(BinaryOp::Shr, -1, 62)), -1);
  EXPECT_EQ(value(evalBinary(BinaryOp::Shr, INT64_MAX, 62)), 1);
  for (int64_t Amount : {int64_t(-1), int64_t(63), int64_t(64), INT64_MIN, INT64_MAX}) {
    EXPECT_TRUE(fails(evalBinary(BinaryOp::Shl, 1, Amount), "is outside 0..62")) << Amount;
    EXPECT_TRUE(fails(evalBinary(BinaryOp::Shr, 1, Amount), "is outside 0..62")) << Amount;
  }
}

TEST(DslArith, BitwiseComparisonAndLogicalOperators) {
  EXPECT_EQ(value(evalBinary(BinaryOp::BitAnd, 12, 10)), 8);
  EXPECT_EQ(value(evalBinary(BinaryOp::BitOr, 12, 10)), 14);
  EXPECT_EQ(value(evalBinary(BinaryOp::BitXor, 12, 10)), 6);
  EXPECT_EQ(value(evalUnary(UnaryOp::BitNot, 0)), -1);
  EXPECT_EQ(value(evalUnary(UnaryOp::Not, 0)), 1);
  EXPECT_EQ(value(evalUnary(UnaryOp::Not, 1)), 0);
  EXPECT_EQ(value(evalBinary(BinaryOp::Lt, -1, 0)), 1);
  EXPECT_EQ(value(evalBinary(BinaryOp::Ge, 0, 0)), 1);
  EXPECT_EQ(value(evalBinary(BinaryOp::Gt, 0, 0)), 0);
  EXPECT_EQ(value(evalBinary(BinaryOp::Le, 1, 0)), 0);
  EXPECT_EQ(value(evalBinary(BinaryOp::Eq, 5, 5)), 1);
  EXPECT_EQ(value(evalBinary(BinaryOp::Ne, 5, 5)), 0);
  EXPECT_EQ(value(evalBinary(BinaryOp::LogAnd, 1, 0)), 0);
  EXPECT_EQ(value(evalBinary(BinaryOp::LogOr, 1, 0)), 1);
}

TEST(DslArith, BuiltinFunctions) {
  auto Call = [](std::string_view Name, std::vector<int64_t> Args) {
    return evalFunction(Name, Args);
  };
  EXPECT_EQ(value(Call("log2", {1})), 0);
  EXPECT_EQ(value(Call("log2", {8})), 3);
  EXPECT_EQ(value(Call("log2", {9})), 3);
  EXPECT_EQ(value(Call("log2", {INT64_MAX})), 62);
  EXPECT_TRUE(fails(Call("log2", {0}), "log2 of 0 is undefined"));
  EXPECT_TRUE(fails(Call("log2", {INT64_MIN}), "is undefined"));
  EXPECT_EQ(value(Call("pow2", {1})), 1);
  EXPECT_EQ(value(Call("pow2", {int64_t(1) << 62})), 1);
  EXPECT_EQ(value(Call("pow2", {6})), 0);
  EXPECT_EQ(value(Call("pow2", {0})), 0);
  EXPECT_EQ(value(Call("pow2", {-8})), 0);
  EXPECT_EQ(value(Call("pow2", {INT64_MIN})), 0);
  EXPECT_EQ(value(Call("min", {INT64_MIN, INT64_MAX})), INT64_MIN);
  EXPECT_EQ(value(Call("max", {-3, -7})), -3);
}
