//===- GraphXmlTest.cpp - NCCL's graph XML reader and writer ---------------===//

#include "compiler/topology/GraphXml.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>

using namespace cclc;
using namespace cclc::topo;

namespace {

const std::vector<int> FourGpus = {0, 1, 2, 3};

struct ReadResult {
  std::optional<GraphXmlFile> File;
  std::string Diagnostics;
  unsigned Errors = 0;
};

ReadResult readText(const std::string &Text, const std::vector<int> &DevByRank = FourGpus) {
  SourceManager SM;
  uint32_t Id = SM.addBuffer("graph.xml", Text);
  std::ostringstream OS;
  DiagnosticEngine Diags(SM, OS);
  ReadResult Result;
  Result.File = readGraphXml(Id, SM, Diags, DevByRank);
  Result.Diagnostics = OS.str();
  Result.Errors = Diags.errorCount();
  return Result;
}

std::string writeText(const GraphXmlFile &File, const std::vector<int> &DevByRank = FourGpus) {
  std::ostringstream OS;
  writeGraphXml(File, DevByRank, OS);
  return OS.str();
}

std::optional<std::string> sharedFile(const std::string &Name) {
  std::ifstream In(std::filesystem::path(CCLC_SHARED_DIR) / "topologies" / "expected" / Name);
  if (!In)
    return std::nullopt;
  std::ostringstream Buf;
  Buf << In.rdbuf();
  return Buf.str();
}

/// A graph file with one ring channel; Channel replaces the channel body.
std::string ringFile(const std::string &Channel, const std::string &Extra = "") {
  return "<graphs version=\"1\">\n"
         "  <graph id=\"0\" pattern=\"4\" crossnic=\"0\" nchannels=\"1\" speedintra=\"10\" "
         "speedinter=\"10\" latencyinter=\"0\" typeintra=\"SYS\" typeinter=\"PIX\" "
         "samechannels=\"1\"" +
         Extra +
         ">\n"
         "    <channel>\n" +
         Channel +
         "    </channel>\n"
         "  </graph>\n"
         "</graphs>\n";
}

const std::string FourGpuChannel = "      <gpu dev=\"0\"/>\n      <gpu dev=\"1\"/>\n"
                                   "      <gpu dev=\"2\"/>\n      <gpu dev=\"3\"/>\n";

} // namespace

TEST(GraphXml, RoundTripsNcclDumps) {
  for (const char *Name : {"yccl-4xa6000-graph.xml", "azure-ncv4-graph.xml"}) {
    std::optional<std::string> Text = sharedFile(Name);
    if (!Text)
      GTEST_SKIP() << "shared topologies not available";
    ReadResult R = readText(*Text);
    ASSERT_TRUE(R.File) << R.Diagnostics;
    EXPECT_EQ(R.Diagnostics, "");
    EXPECT_EQ(writeText(*R.File), *Text) << Name;
  }
}

TEST(GraphXml, ReadsHexDumpOfNccl223) {
  std::optional<std::string> Text = sharedFile("yccl-4xa6000-graph.xml");
  if (!Text)
    GTEST_SKIP() << "shared topologies not available";
  ReadResult R = readText(*Text);
  ASSERT_TRUE(R.File);
  EXPECT_TRUE(R.File->HexDevs);
  ASSERT_EQ(R.File->Graphs.size(), 5u);
  const TopoGraph &Ring = R.File->Graphs[0];
  EXPECT_EQ(Ring.Pat, Pattern::Ring);
  EXPECT_EQ(Ring.NChannels, 1);
  EXPECT_EQ(Ring.Intra, (std::vector<std::vector<int>>{{0, 1, 2, 3}}));
  EXPECT_TRUE(Ring.Inter.empty());
  EXPECT_EQ(Ring.BwIntra, 10.0f);
  EXPECT_EQ(Ring.TypeIntra, PathType::SYS);
  EXPECT_EQ(Ring.TypeInter, PathType::PIX);
  EXPECT_EQ(R.File->Graphs[1].Pat, Pattern::BalancedTree);
  EXPECT_EQ(R.File->Graphs[2].Id, 4);
  EXPECT_EQ(R.File->Graphs[2].NChannels, 0);
}

TEST(GraphXml, MapsDevicesToRanksBothWays) {
  // GPU rank r is CUDA device 3 - r: the file's devs 3 2 1 0 are ranks 0 1 2 3.
  std::vector<int> Reversed = {3, 2, 1, 0};
  std::string Text = ringFile("      <net dev=\"0x10\"/>\n      <gpu dev=\"0x3\"/>\n"
                              "      <gpu dev=\"0x2\"/>\n      <gpu dev=\"0x1\"/>\n"
                              "      <gpu dev=\"0\"/>\n      <net dev=\"0x11\"/>\n");
  ReadResult R = readText(Text, Reversed);
  ASSERT_TRUE(R.File) << R.Diagnostics;
  EXPECT_EQ(R.File->Graphs[0].Intra[0], (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(R.File->Graphs[0].Inter[0], (std::vector<int64_t>{16, 17}));
  EXPECT_EQ(writeText(*R.File, Reversed), Text);
  // Decimal output for the same graphs.
  R.File->HexDevs = false;
  EXPECT_NE(writeText(*R.File, Reversed).find("<net dev=\"16\"/>\n      <gpu dev=\"3\"/>"),
            std::string::npos);
}

TEST(GraphXml, NvlsChannelsNameOnlyTheirHead) {
  std::string Text = "<graphs version=\"1\">\n"
                     "  <graph id=\"3\" pattern=\"5\" crossnic=\"0\" nchannels=\"2\" "
                     "speedintra=\"20.6\" speedinter=\"20.6\" latencyinter=\"0\" typeintra=\"NVL\" "
                     "typeinter=\"PIX\" samechannels=\"0\">\n"
                     "    <channel>\n      <gpu dev=\"0x2\"/>\n    </channel>\n"
                     "    <channel>\n      <gpu dev=\"0x3\"/>\n    </channel>\n"
                     "  </graph>\n"
                     "</graphs>\n";
  ReadResult R = readText(Text);
  ASSERT_TRUE(R.File) << R.Diagnostics;
  EXPECT_EQ(R.File->Graphs[0].Intra, (std::vector<std::vector<int>>{{2}, {3}}));
  EXPECT_EQ(R.File->Graphs[0].BwIntra, 20.6f);
  EXPECT_EQ(writeText(*R.File), Text);
  // A ring graph must visit every GPU.
  std::string Ring = Text;
  Ring.replace(Ring.find("id=\"3\""), 6, "id=\"0\"");
  EXPECT_FALSE(readText(Ring).File);
}

TEST(GraphXml, InvalidDevNamesElementAndLine) {
  ReadResult R = readText(ringFile("      <gpu dev=\"0\"/>\n      <gpu dev=\"zz\"/>\n"));
  EXPECT_FALSE(R.File);
  EXPECT_EQ(R.Diagnostics, "graph.xml:5:12: error: <gpu> has invalid 'dev' value 'zz'\n"
                           "      <gpu dev=\"zz\"/>\n"
                           "           ^~~~~~~~\n");
}

TEST(GraphXml, ReportsStructuralErrors) {
  struct Case {
    std::string Text;
    std::string Message;
  };
  auto edited = [](const std::string &From, const std::string &To) {
    std::string Text = ringFile(FourGpuChannel);
    return Text.replace(Text.find(From), From.size(), To);
  };
  const Case Cases[] = {
      {ringFile("      <gpu dev=\"0\"/>\n      <gpu dev=\"1\"/>\n"),
       "3:5: error: <channel> lists 2 GPUs; the system has 4"},
      {ringFile(FourGpuChannel + "      <gpu dev=\"1\"/>\n"),
       "8:12: error: <channel> lists GPU device 1 twice"},
      {ringFile("      <gpu dev=\"7\"/>\n"),
       "4:12: error: <gpu> names device 7, which is not a GPU of the system"},
      {ringFile("      <net dev=\"0\"/>\n" + FourGpuChannel),
       "3:5: error: <channel> has one <net>"},
      {ringFile("      <gpu/>\n"), "4:7: error: <gpu> is missing the 'dev' attribute"},
      {edited(" pattern=\"4\"", ""), "2:3: error: <graph> is missing the 'pattern' attribute"},
      {edited("\"SYS\"", "\"BAD\""), "error: <graph> has invalid 'typeintra' value 'BAD'"},
      {edited("nchannels=\"1\"", "nchannels=\"2\""),
       "2:42: error: <graph> says nchannels=\"2\" but has 1 <channel> elements"},
      {"<system version=\"1\"/>\n", "1:1: error: expected <graphs> as the root element"},
      {"<graphs version=\"2\"/>\n", "1:9: error: unsupported graph XML version '2'"},
      {"<graphs version=\"1\">\n  <graph id=\"0\"\n", "error: malformed XML"},
  };
  for (const Case &C : Cases) {
    ReadResult R = readText(C.Text);
    EXPECT_FALSE(R.File) << C.Text;
    EXPECT_NE(R.Diagnostics.find(C.Message), std::string::npos)
        << "expected '" << C.Message << "' in:\n"
        << R.Diagnostics;
  }
}

TEST(GraphXml, DuplicateIdPointsAtBoth) {
  std::string Graph =
      "  <graph id=\"1\" pattern=\"1\" crossnic=\"0\" nchannels=\"0\" speedintra=\"0\" "
      "speedinter=\"0\" typeintra=\"LOC\" typeinter=\"LOC\" samechannels=\"0\"/>\n";
  ReadResult R = readText("<graphs version=\"1\">\n" + Graph + Graph + "</graphs>\n");
  EXPECT_FALSE(R.File);
  EXPECT_NE(R.Diagnostics.find("graph.xml:3:10: error: duplicate <graph> id 1"), std::string::npos)
      << R.Diagnostics;
  EXPECT_NE(R.Diagnostics.find("graph.xml:2:10: note: first defined here"), std::string::npos);
}

TEST(GraphXml, UnknownElementsWarnAndLatencyIsOptional) {
  std::string Text = ringFile(FourGpuChannel + "      <cpu dev=\"0\"/>\n");
  Text.replace(Text.find(" latencyinter=\"0\""), 17, "");
  ReadResult R = readText(Text);
  ASSERT_TRUE(R.File) << R.Diagnostics;
  EXPECT_EQ(R.Errors, 0u);
  EXPECT_NE(R.Diagnostics.find("warning: unknown element <cpu> in <channel> ignored"),
            std::string::npos);
  EXPECT_EQ(R.File->Graphs[0].LatencyInter, 0.0f);
}

TEST(GraphXml, MutationsNeverCrashAndErrorsMeanNoResult) {
  // Deterministic mutations of a valid file: replace, delete or insert one
  // character, or cut the file short. The reader either accepts the result
  // (and then writes something it reads back the same) or reports an error.
  const std::string Base =
      ringFile("      <net dev=\"0\"/>\n" + FourGpuChannel + "      <net dev=\"0x1\"/>\n");
  const std::string Alphabet = "<>/=\" x0123456789abcdefgpunetchl-";
  uint64_t State = 0x9e3779b97f4a7c15ull;
  auto next = [&State](uint64_t Bound) {
    State = State * 6364136223846793005ull + 1442695040888963407ull;
    return (State >> 33) % Bound;
  };
  int Accepted = 0, Rejected = 0;
  for (int I = 0; I < 2000; ++I) {
    std::string Text = Base;
    size_t Pos = next(Text.size());
    switch (next(4)) {
    case 0:
      Text[Pos] = Alphabet[next(Alphabet.size())];
      break;
    case 1:
      Text.erase(Pos, 1);
      break;
    case 2:
      Text.insert(Pos, 1, Alphabet[next(Alphabet.size())]);
      break;
    default:
      Text.resize(Pos);
      break;
    }
    ReadResult R = readText(Text);
    EXPECT_EQ(R.File.has_value(), R.Errors == 0) << Text;
    if (!R.File) {
      ++Rejected;
      continue;
    }
    ++Accepted;
    ReadResult Again = readText(writeText(*R.File));
    ASSERT_TRUE(Again.File) << Again.Diagnostics;
    EXPECT_EQ(writeText(*Again.File), writeText(*R.File));
  }
  EXPECT_GT(Accepted, 0);
  EXPECT_GT(Rejected, 0);
}
