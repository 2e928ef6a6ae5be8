//===- DslMutationTest.cpp - The front end survives damaged input ---------===//
//
// A bounded, seeded mutation fuzzer that runs with every test run: each
// algorithm of the library is damaged in thousands of ways (tokens deleted,
// duplicated, swapped or inserted; random ASCII and non-ASCII bytes; files
// cut short; hostile nesting and literals) and fed to parseAndCheck. Whatever
// the input, the front end must return, and return a tree exactly when it
// reported no error. The libFuzzer target in test/fuzz explores further.
//
//===----------------------------------------------------------------------===//

#include "DslTestSupport.h"

#include "dsl/ASTPrinter.h"
#include "dsl/Lexer.h"

#include <gtest/gtest.h>

#include <chrono>
#include <random>

using namespace cclc;
using namespace cclc::dsl;
using cclc::dsl::test::CheckedSource;
using cclc::dsl::test::libraryFiles;
using cclc::dsl::test::readFile;

namespace {

constexpr unsigned TotalMutations = 3000;
/// Far above what any input here needs (they parse in microseconds): only a
/// hang or runaway backtracking gets near it.
constexpr std::chrono::seconds TimeLimit{5};

/// Runs the front end on Text and checks the invariants; Label names the
/// input in a failure. Returns whether Text was accepted.
bool expectSurvives(const std::string &Text, const std::string &Label) {
  auto Start = std::chrono::steady_clock::now();
  CheckedSource S(Text, /*Silent=*/true);
  if (S.Algo) {
    std::ostringstream Dump;
    printAST(*S.Algo, Dump);
  }
  EXPECT_LT(std::chrono::steady_clock::now() - Start, TimeLimit) << Label;
  EXPECT_EQ(S.Algo != nullptr, S.Diags.errorCount() == 0) << Label << "\n" << Text;
  return S.Algo != nullptr;
}

/// Token spans of Text (offset, length), for mutations that respect tokens.
std::vector<std::pair<size_t, size_t>> tokenSpans(const std::string &Text) {
  SourceManager SM;
  uint32_t Id = SM.addBuffer("t.ccl", Text);
  DiagnosticEngine Diags(SM);
  Diags.setSilent(true);
  std::string_view Buffer = SM.getText(Id);
  std::vector<std::pair<size_t, size_t>> Spans;
  for (const Token &T : Lexer(SM, Id, Diags).lexAll())
    if (!T.is(TokenKind::Eof))
      Spans.emplace_back(T.Text.data() - Buffer.data(), T.Text.size());
  return Spans;
}

class Mutator {
public:
  Mutator(const std::string &Original, uint32_t Seed)
      : Original(Original), Spans(tokenSpans(Original)), Rng(Seed) {}

  /// One mutant; Kind says which mutation, for the failure message.
  std::string mutate(std::string &Kind) {
    std::string Text = Original;
    switch (pick(8)) {
    case 0: {
      Kind = "delete token";
      auto [Off, Len] = token();
      Text.erase(Off, Len);
      break;
    }
    case 1: {
      Kind = "duplicate token";
      auto [Off, Len] = token();
      Text.insert(Off, Original.substr(Off, Len) + " ");
      break;
    }
    case 2: {
      Kind = "swap tokens";
      auto A = token(), B = token();
      if (A.first > B.first)
        std::swap(A, B);
      if (A.first + A.second <= B.first) {
        Text.replace(B.first, B.second, Original.substr(A.first, A.second));
        Text.replace(A.first, A.second, Original.substr(B.first, B.second));
      }
      break;
    }
    case 3: {
      static const char *const Vocabulary[] = {
          "{", "}", "(", ")", "[", "]", ";", ",", ".", "..", "->", "=", "==", "<", "<<",
          "-", "!", "~", "&&", "let", "var", "for", "in", "if", "else", "remap", "auto",
          "chunks", "requires", "on", "ring", "tree", "true", "rank", "input", "send",
          "log2", "0", "-1", "0x7fffffffffffffff", "1 << 63", "/ 0", "x", "#"};
      Kind = "insert token";
      Text.insert(offset(), std::string(" ") + Vocabulary[pick(std::size(Vocabulary))] + " ");
      break;
    }
    case 4:
      Kind = "insert ASCII byte";
      Text.insert(offset(), 1, static_cast<char>(pick(128)));
      break;
    case 5:
      Kind = "insert non-ASCII byte";
      Text.insert(offset(), 1, static_cast<char>(128 + pick(128)));
      break;
    case 6:
      Kind = "overwrite bytes";
      for (unsigned I = 0, N = 1 + pick(4); I < N && !Text.empty(); ++I)
        Text[pick(Text.size())] = static_cast<char>(pick(256));
      break;
    default: {
      Kind = "delete bytes";
      size_t Off = offset();
      Text.erase(Off, pick(16));
      break;
    }
    }
    return Text;
  }

private:
  size_t pick(size_t N) { return std::uniform_int_distribution<size_t>(0, N - 1)(Rng); }
  size_t offset() { return pick(Original.size() + 1); }
  std::pair<size_t, size_t> token() { return Spans[pick(Spans.size())]; }

  const std::string &Original;
  std::vector<std::pair<size_t, size_t>> Spans;
  std::mt19937 Rng;
};

} // namespace

TEST(DslMutation, LibraryIsFoundAndClean) {
  std::vector<std::filesystem::path> Files = libraryFiles();
  ASSERT_GE(Files.size(), 7u) << "no algorithms under " << CCLC_SOURCE_DIR;
  for (const auto &Path : Files) {
    CheckedSource S(readFile(Path));
    EXPECT_NE(S.Algo, nullptr) << Path << "\n" << S.output();
  }
}

TEST(DslMutation, RandomMutantsOfEveryAlgorithm) {
  std::vector<std::filesystem::path> Files = libraryFiles();
  ASSERT_FALSE(Files.empty());
  unsigned PerFile = TotalMutations / Files.size();
  unsigned Rejected = 0;
  for (size_t F = 0; F < Files.size(); ++F) {
    std::string Original = readFile(Files[F]);
    Mutator M(Original, /*Seed=*/static_cast<uint32_t>(F + 1));
    for (unsigned I = 0; I < PerFile; ++I) {
      std::string Kind;
      std::string Mutant = M.mutate(Kind);
      Rejected += !expectSurvives(Mutant, Files[F].filename().string() + " mutant " +
                                              std::to_string(I) + " (" + Kind + ")");
    }
  }
  // The mutations must mostly break the files, or they test nothing.
  EXPECT_GT(Rejected, TotalMutations / 2);
}

TEST(DslMutation, EveryTruncation) {
  for (const auto &Path : libraryFiles()) {
    std::string Original = readFile(Path);
    // Every 7th offset, and the last byte: a file cut short anywhere.
    for (size_t Len = 0; Len < Original.size(); Len += 7)
      expectSurvives(Original.substr(0, Len), Path.filename().string() + " cut at " +
                                                  std::to_string(Len));
    expectSurvives(Original.substr(0, Original.size() - 1), Path.filename().string());
  }
}

TEST(DslMutation, HostileNestingAndLiterals) {
  std::string Ring = readFile(std::filesystem::path(CCLC_SOURCE_DIR) / "algorithms" /
                              "ring-allreduce.ccl");
  size_t Body = Ring.find('{') + 1;
  std::vector<std::pair<std::string, std::string>> Inserts = {
      {"10000 '('", "let x = " + std::string(10000, '(') + ";"},
      {"10000 '{'", std::string(10000, '{')},
      {"10000 '}'", std::string(10000, '}')},
      {"10000 '['", "let x = output" + std::string(10000, '[') + ";"},
      {"500-digit literal", "let x = " + std::string(500, '9') + ";"},
      {"huge hex literal", "let x = 0x" + std::string(500, 'f') + ";"},
      {"many underscores", "let x = 1" + std::string(10000, '_') + ";"},
      {"long identifier", "let " + std::string(100000, 'a') + " = 1;"},
      {"10000 errors", std::string(10000, '@')},
      {"10000 statements", [] {
         std::string S;
         for (int I = 0; I < 10000; ++I)
           S += "let _v" + std::to_string(I) + " = " + std::to_string(I) + ";\n";
         return S;
       }()},
  };
  for (const auto &[Label, Insert] : Inserts) {
    std::string Text = Ring;
    Text.insert(Body, Insert);
    expectSurvives(Text, Label);
  }
}
