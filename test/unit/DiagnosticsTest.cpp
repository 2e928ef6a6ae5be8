//===- DiagnosticsTest.cpp - The diagnostic format ------------------------===//

#include "plan/Diagnostics.h"

#include <gtest/gtest.h>
#include <sstream>

using namespace cclc;

TEST(Diagnostics, ErrorQuotesLineWithCaretAndRange) {
  SourceManager SM;
  uint32_t Id = SM.addBuffer("a.ccl", "let x = 1;\nsend(peer, output);\n");
  std::ostringstream OS;
  DiagnosticEngine Diags(SM, OS);
  Diags.error(SourceRange{{Id, 2, 6}, {Id, 2, 10}}, "unknown name 'peer'");
  EXPECT_EQ(OS.str(), "a.ccl:2:6: error: unknown name 'peer'\n"
                      "send(peer, output);\n"
                      "     ^~~~\n");
  EXPECT_EQ(Diags.errorCount(), 1u);
  EXPECT_TRUE(Diags.hasErrors());
}

TEST(Diagnostics, NotesFollowAndWarningsCount) {
  SourceManager SM;
  uint32_t Id = SM.addBuffer("b.ccl", "\tlet y = 2;\n");
  std::ostringstream OS;
  DiagnosticEngine Diags(SM, OS);
  Diags.warning(SourceLoc{Id, 1, 6}, "unused 'y'");
  Diags.note(SourceLoc{Id, 1, 2}, "declared here", 3);
  EXPECT_EQ(OS.str(), "b.ccl:1:6: warning: unused 'y'\n\tlet y = 2;\n\t    ^\n"
                      "b.ccl:1:2: note: declared here\n\tlet y = 2;\n\t^~~\n");
  EXPECT_EQ(Diags.warningCount(), 1u);
  EXPECT_FALSE(Diags.hasErrors());
}

TEST(Diagnostics, WerrorAndLocationlessErrors) {
  SourceManager SM;
  std::ostringstream OS;
  DiagnosticEngine Diags(SM, OS);
  Diags.setWarningsAsErrors(true);
  Diags.warning(SourceLoc{}, "no algorithms given");
  EXPECT_EQ(OS.str(), "cclc: error: no algorithms given\n");
  EXPECT_EQ(Diags.errorCount(), 1u);
}

TEST(Diagnostics, ErrorLimitStopsOutputButKeepsCounting) {
  SourceManager SM;
  uint32_t Id = SM.addBuffer("c.ccl", "x\n");
  std::ostringstream OS;
  DiagnosticEngine Diags(SM, OS);
  Diags.setErrorLimit(2);
  for (int I = 0; I < 5; ++I) {
    Diags.error(SourceLoc{Id, 1, 1}, "bad");
    Diags.note(SourceLoc{Id, 1, 1}, "because");
  }
  EXPECT_EQ(Diags.errorCount(), 5u);
  std::string Out = OS.str();
  size_t Count = 0;
  for (size_t Pos = Out.find("error: bad"); Pos != std::string::npos;
       Pos = Out.find("error: bad", Pos + 1))
    ++Count;
  EXPECT_EQ(Count, 2u);
  EXPECT_NE(Out.find("too many errors"), std::string::npos);
  EXPECT_EQ(Out.find("because", Out.find("too many errors")), std::string::npos);
}

TEST(SourceManager, OffsetsBecomeLinesAndColumns) {
  SourceManager SM;
  uint32_t Id = SM.addBuffer("d.xml", "<a>\n  <b/>\n</a>");
  SourceLoc Loc = SM.locForOffset(Id, 6);
  EXPECT_EQ(Loc.Line, 2u);
  EXPECT_EQ(Loc.Col, 3u);
  EXPECT_EQ(SM.getLine(Id, 3), "</a>");
  EXPECT_EQ(SM.getLine(Id, 4), "");
  std::string Error;
  EXPECT_FALSE(SM.loadFile("/nonexistent/file.ccl", Error).has_value());
  EXPECT_NE(Error.find("no such file"), std::string::npos);
}
