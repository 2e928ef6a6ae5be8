//===- EmitTest.cpp - Plan JSON, MSCCL-IR XML and dot emitters ------------===//
//
// The plan reader and the MSCCL-IR importer must give back exactly the
// schedule that was written, for every algorithm of the library (before and
// after the passes, on one and on several channels), and must refuse broken
// input with an error that names the field or element at fault.
//
//===----------------------------------------------------------------------===//

#include "compiler/import/MscclImport.h"
#include "compiler/emit/MscclXml.h"
#include "plan/PlanJson.h"
#include "compiler/emit/ScheduleDot.h"
#include "compiler/passes/Pipeline.h"
#include "compiler/instantiate/Instantiate.h"
#include "compiler/emit/ScheduleText.h"
#include "plan/Verifier.h"
#include "dsl/Frontend.h"

#include "LibrarySchedule.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <sstream>

using namespace cclc;
using namespace cclc::sched;
using namespace cclc::emit;
using namespace cclc::plan;
using nlohmann::json;

namespace {

/// Instantiates algorithms/<Name>.ccl for NRanks ranks; with Channels > 0,
/// also runs the pass pipeline (fusion, channel parallelism) on it.
Schedule library(const std::string &Name, int32_t NRanks, int32_t Channels = 0) {
  Schedule S = test::librarySchedule(Name, NRanks);
  if (Channels > 0) {
    SourceManager SM;
    std::ostringstream Errors;
    DiagnosticEngine Diags(SM, Errors);
    passes::PipelineOptions Options;
    Options.Channels = Channels;
    std::ostringstream Log;
    EXPECT_TRUE(passes::runPipeline(S, Options, Log, Diags)) << Errors.str();
  }
  return S;
}

std::string text(const Schedule &S) {
  std::ostringstream OS;
  printSchedule(S, OS);
  return OS.str();
}

const char *const Algorithms[] = {"ring-allreduce",      "ring-allgather",
                                  "ring-reduce-scatter", "ring-broadcast",
                                  "tree-allreduce",      "butterfly-allreduce",
                                  "halving-doubling-allreduce"};

/// The schedule text covers every field but step columns and file ids.
void expectSameSchedule(const Schedule &A, const Schedule &B) {
  EXPECT_EQ(text(A), text(B));
  EXPECT_EQ(A.Topology, B.Topology);
  ASSERT_EQ(A.Ranks.size(), B.Ranks.size());
  for (size_t R = 0; R < A.Ranks.size(); ++R)
    for (size_t C = 0; C < A.Ranks[R].Channels.size(); ++C)
      for (size_t I = 0; I < A.Ranks[R].Channels[C].Steps.size(); ++I)
        EXPECT_EQ(A.Ranks[R].Channels[C].Steps[I].Loc.Col,
                  B.Ranks[R].Channels[C].Steps[I].Loc.Col);
}

/// A reader's result and everything it reported.
struct ReadResult {
  std::optional<Plan> P;
  std::string Errors;
};

ReadResult readPlanText(const std::string &Text) {
  SourceManager SM;
  std::ostringstream Errors;
  DiagnosticEngine Diags(SM, Errors);
  uint32_t Id = SM.addBuffer("plan.json", Text);
  std::optional<Plan> P = readPlanFile(Id, SM, Diags);
  EXPECT_EQ(P.has_value(), !Diags.hasErrors());
  return {std::move(P), Errors.str()};
}

ReadResult readXmlText(const std::string &Text) {
  SourceManager SM;
  std::ostringstream Errors;
  DiagnosticEngine Diags(SM, Errors);
  uint32_t Id = SM.addBuffer("algo.xml", Text);
  std::optional<Plan> P = importer::readMscclXml(Id, SM, Diags);
  EXPECT_EQ(P.has_value(), !Diags.hasErrors());
  return {std::move(P), Errors.str()};
}

std::string toXml(const Schedule &S) {
  SourceManager SM;
  std::ostringstream Errors, OS;
  DiagnosticEngine Diags(SM, Errors);
  EXPECT_TRUE(writeMscclXml(S, PlanInfo{}, OS, Diags)) << Errors.str();
  return OS.str();
}

//===----------------------------------------------------------------------===//
// Round trips
//===----------------------------------------------------------------------===//

TEST(PlanJson, RoundTripsEveryAlgorithm) {
  for (const char *Name : Algorithms)
    for (int32_t Channels : {0, 2}) {
      SCOPED_TRACE(std::string(Name) + " channels " + std::to_string(Channels));
      Schedule S = library(Name, 8, Channels);
      PlanInfo Info;
      Info.Source = Name;
      Info.MinBytes = 4096;
      Info.MaxBytes = 1 << 20;
      // Through text, as the runtime reads it.
      ReadResult Back = readPlanText(scheduleToPlan(S, Info).dump(1));
      ASSERT_TRUE(Back.P) << Back.Errors;
      expectSameSchedule(S, Back.P->Sched);
      EXPECT_EQ(Back.P->Info.MinBytes, 4096u);
      EXPECT_EQ(Back.P->Info.MaxBytes, std::optional<uint64_t>(1 << 20));
      EXPECT_EQ(Back.P->Info.Source, Name);
    }
}

TEST(PlanJson, UnboundedMaxBytesIsNull) {
  json J = scheduleToPlan(library("ring-allreduce", 4), PlanInfo{});
  EXPECT_TRUE(J["max_bytes"].is_null());
  EXPECT_EQ(J["format"], "cclc-plan");
  EXPECT_EQ(J["version"], plan::RolledPlanFormatVersion);
  ReadResult Back = readPlanText(J.dump());
  ASSERT_TRUE(Back.P) << Back.Errors;
  EXPECT_FALSE(Back.P->Info.MaxBytes);
}

TEST(MscclXml, RoundTripsEveryAlgorithm) {
  for (const char *Name : Algorithms)
    for (int32_t NRanks : {4, 8})
      for (int32_t Channels : {0, 3}) {
        SCOPED_TRACE(std::string(Name) + " nranks " + std::to_string(NRanks) + " channels " +
                     std::to_string(Channels));
        Schedule S = library(Name, NRanks, Channels);
        ReadResult Back = readXmlText(toXml(S));
        ASSERT_TRUE(Back.P) << Back.Errors;
        expectSameSchedule(S, Back.P->Sched);
      }
}

TEST(MscclXml, ExchangesStayConcurrent) {
  // Butterfly exchanges: the send must not wait for the receive beside it,
  // so no dependency links them and the import restores WithNext.
  Schedule S = library("butterfly-allreduce", 4);
  std::string Xml = toXml(S);
  ReadResult Back = readXmlText(Xml);
  ASSERT_TRUE(Back.P) << Back.Errors;
  size_t Exchanges = 0;
  for (const RankProgram &R : Back.P->Sched.Ranks)
    for (const Step &St : R.Channels[0].Steps)
      Exchanges += St.WithNext;
  EXPECT_EQ(Exchanges, 4u * 2u); // 4 ranks, log2(4) exchanges each
  EXPECT_NE(Xml.find("type=\"rrc\""), std::string::npos);
}

TEST(MscclXml, ExportsMscclShapes) {
  Schedule S = library("ring-allreduce", 4, 1);
  std::string Xml = toXml(S);
  EXPECT_EQ(Xml.rfind("<algo name=\"ring_allreduce\" proto=\"Simple\" nchannels=\"1\" "
                      "nchunksperloop=\"4\" ngpus=\"4\" coll=\"allreduce\" inplace=\"0\" "
                      "outofplace=\"1\"",
                      0),
            0u);
  // Fusion turned the ring into MSCCL's fused forms, all on one tb per gpu
  // talking to (next, prev).
  EXPECT_NE(Xml.find("<tb id=\"1\" send=\"1\" recv=\"3\" chan=\"0\">"), std::string::npos);
  EXPECT_NE(Xml.find("type=\"rrcs\""), std::string::npos);
  EXPECT_NE(Xml.find("type=\"rcs\""), std::string::npos);
  EXPECT_EQ(Xml.find("<?xml"), std::string::npos);
}

TEST(MscclXml, ReducescatterIsSpelledTheMscclWay) {
  std::string Xml = toXml(library("ring-reduce-scatter", 4));
  EXPECT_NE(Xml.find("coll=\"reducescatter\""), std::string::npos);
  EXPECT_NE(Xml.find("i_chunks=\"4\" o_chunks=\"1\""), std::string::npos) << Xml;
}

//===----------------------------------------------------------------------===//
// A hand-written MSCCL algorithm
//===----------------------------------------------------------------------===//

/// Two gpus swap their inputs and add: tb 0 sends, tb 1 receives and
/// reduces, tb 2 copies first; deps order the copy before both.
std::string swapAllreduce(const std::string &RecvType = "rrc", const std::string &RecvDeps =
                                                                   "depid=\"2\" deps=\"0\"") {
  std::string Xml = "<algo name=\"swap\" proto=\"Simple\" nchannels=\"1\" nchunksperloop=\"1\" "
                    "ngpus=\"2\" coll=\"allreduce\" inplace=\"0\" outofplace=\"1\" "
                    "minBytes=\"0\" maxBytes=\"4096\">\n";
  for (int G = 0; G < 2; ++G) {
    std::string Peer = std::to_string(1 - G);
    Xml += "<gpu id=\"" + std::to_string(G) + "\" i_chunks=\"1\" o_chunks=\"1\" s_chunks=\"0\">\n"
           " <tb id=\"0\" send=\"" + Peer + "\" recv=\"-1\" chan=\"0\">\n"
           "  <step s=\"0\" type=\"s\" srcbuf=\"i\" srcoff=\"0\" dstbuf=\"o\" dstoff=\"0\" "
           "cnt=\"1\" depid=\"-1\" deps=\"-1\" hasdep=\"0\"/>\n </tb>\n"
           " <tb id=\"1\" send=\"-1\" recv=\"" + Peer + "\" chan=\"0\">\n"
           "  <step s=\"0\" type=\"" + RecvType + "\" srcbuf=\"o\" srcoff=\"0\" dstbuf=\"o\" "
           "dstoff=\"0\" cnt=\"1\" " + RecvDeps + " hasdep=\"0\"/>\n </tb>\n"
           " <tb id=\"2\" send=\"-1\" recv=\"-1\" chan=\"0\">\n"
           "  <step s=\"0\" type=\"cpy\" srcbuf=\"i\" srcoff=\"0\" dstbuf=\"o\" dstoff=\"0\" "
           "cnt=\"1\" depid=\"-1\" deps=\"-1\" hasdep=\"1\"/>\n </tb>\n</gpu>\n";
  }
  return Xml + "</algo>\n";
}

TEST(MscclImport, LinearizesThreadblocksAndVerifies) {
  ReadResult R = readXmlText(swapAllreduce());
  ASSERT_TRUE(R.P) << R.Errors;
  const Schedule &S = R.P->Sched;
  EXPECT_EQ(S.Algorithm, "swap");
  EXPECT_EQ(R.P->Info.MaxBytes, std::optional<uint64_t>(4096));
  // Sends go first; the copy must precede the receive-reduce that waits for it.
  const std::vector<Step> &Steps = S.Ranks[0].Channels[0].Steps;
  ASSERT_EQ(Steps.size(), 3u);
  EXPECT_EQ(Steps[0].Op, OpKind::Send);
  EXPECT_EQ(Steps[1].Op, OpKind::Copy);
  EXPECT_EQ(Steps[2].Op, OpKind::RecvReduce);
  EXPECT_EQ(Steps[2].Loc.Line, 7u) << "the <step> element of gpu 0's tb 1";
  SourceManager SM;
  std::ostringstream Errors;
  DiagnosticEngine Diags(SM, Errors);
  EXPECT_TRUE(verify::verifySchedule(S, Diags)) << Errors.str();
}

TEST(MscclImport, RecvReduceCopyIntoAnotherSliceIsOneStep) {
  std::string Xml = swapAllreduce();
  // rrc from the input into the output: dst = input + received.
  size_t At = Xml.find("type=\"rrc\" srcbuf=\"o\"");
  Xml.replace(At, 21, "type=\"rrc\" srcbuf=\"i\"");
  ReadResult R = readXmlText(Xml);
  ASSERT_TRUE(R.P) << R.Errors;
  const std::vector<Step> &Steps = R.P->Sched.Ranks[0].Channels[0].Steps;
  ASSERT_EQ(Steps.size(), 3u);
  EXPECT_EQ(Steps[2].Op, OpKind::RecvReduceCopy);
  EXPECT_EQ(Steps[2].Src.Buffer, BufferKind::Input);
  EXPECT_EQ(Steps[2].Dst.Buffer, BufferKind::Output);
}

//===----------------------------------------------------------------------===//
// Broken input
//===----------------------------------------------------------------------===//

/// Reads Plan after Edit and expects one error containing Expected.
void expectPlanError(const std::function<void(json &)> &Edit, const std::string &Expected) {
  SCOPED_TRACE(Expected);
  json J = scheduleToPlan(library("ring-allreduce", 4), PlanInfo{});
  Edit(J);
  ReadResult R = readPlanText(J.dump(2));
  EXPECT_FALSE(R.P);
  EXPECT_NE(R.Errors.find(Expected), std::string::npos) << R.Errors;
}

TEST(PlanJsonErrors, NameTheField) {
  expectPlanError([](json &J) { J["ranks"][3]["channels"][0]["steps"][2]["peer"] = 9; },
                  "plan.json:");
  expectPlanError([](json &J) { J["ranks"][3]["channels"][0]["steps"][2]["peer"] = 9; },
                  "error: ranks[3].channels[0].steps[2].peer: 9 is not a rank (plan has 4 "
                  "ranks)");
  expectPlanError([](json &J) { J["ranks"][1]["channels"][0]["steps"][1]["peer"] = 1; },
                  "ranks[1].channels[0].steps[1].peer: 1 is the step's own rank");
  expectPlanError([](json &J) { J["nranks"] = "4"; },
                  "nranks: expected an integer, found the string \"4\"");
  expectPlanError([](json &J) { J["version"] = 4; },
                  "version: plan format version 4 is not supported");
  expectPlanError([](json &J) { J["format"] = "nccl-graph"; }, "format: \"nccl-graph\" is not");
  expectPlanError([](json &J) { J.erase("remap"); }, "error: missing field 'remap'");
  expectPlanError([](json &J) { J["remap"] = {0, 1, 1, 3}; },
                  "remap[2]: physical rank 1 is already logical rank 1");
  expectPlanError([](json &J) { J["ranks"][0]["channels"][0]["steps"][0]["op"] = "fly"; },
                  "ranks[0].channels[0].steps[0].op: unknown value \"fly\"");
  expectPlanError([](json &J) { J["ranks"][0]["channels"][0]["steps"][1]["src"]["chunk"] = 3.5; },
                  "steps[1].src.chunk: expected an integer, found the number 3.5");
  expectPlanError([](json &J) { J["ranks"][0]["channels"][0]["steps"][1]["src"]["count"] = 5; },
                  "steps[1].src.count: 5 chunks from chunk 0 run past the end of output (output "
                  "has 4 chunks)");
  expectPlanError([](json &J) { J["ranks"][0]["channels"][0]["steps"][1]["dst"] = json::object(); },
                  "steps[1].dst: a send step has no dst");
  expectPlanError([](json &J) { J["ranks"][0]["channels"][0]["steps"][1].erase("src"); },
                  "steps[1]: missing field 'src'");
  expectPlanError([](json &J) { J["ranks"][0]["channels"][0]["steps"][1]["speed"] = 1; },
                  "steps[1].speed: unknown field");
  expectPlanError([](json &J) { J["ranks"][2]["logical_rank"] = 0; },
                  "ranks[2].logical_rank: 0 disagrees with remap");
  expectPlanError([](json &J) { J["ranks"][2]["channels"].push_back(json::object()); },
                  "ranks[2].channels: has 2 entries (plan has 1 channels)");
  expectPlanError([](json &J) { J["buffer_units"]["output"] = 4; },
                  "buffer_units.output: 4 does not match allreduce on 4 ranks");
  expectPlanError([](json &J) { J["max_bytes"] = -1; }, "max_bytes: -1 is less than min_bytes");
  expectPlanError([](json &J) { J["root"] = 18446744073709551615ull; }, "root: 18446744073709551615");
}

TEST(PlanJsonErrors, PointAtTheFieldsLine) {
  json J = scheduleToPlan(library("ring-allreduce", 4), PlanInfo{});
  J["ranks"][3]["channels"][0]["steps"][2]["peer"] = 9;
  std::string Text = J.dump(2);
  size_t At = Text.find("\"peer\": 9");
  ASSERT_NE(At, std::string::npos);
  uint32_t Line = 1 + uint32_t(std::count(Text.begin(), Text.begin() + At, '\n'));
  ReadResult R = readPlanText(Text);
  EXPECT_NE(R.Errors.find("plan.json:" + std::to_string(Line) + ":"), std::string::npos)
      << R.Errors;
  EXPECT_NE(R.Errors.find("\"peer\": 9"), std::string::npos) << "the line is quoted";
}

TEST(PlanJsonErrors, TruncatedAndCorruptedText) {
  std::string Text = scheduleToPlan(library("ring-allreduce", 4), PlanInfo{}).dump(2);
  for (size_t Cut : {size_t(0), size_t(1), Text.size() / 3, Text.size() / 2, Text.size() - 2}) {
    ReadResult R = readPlanText(Text.substr(0, Cut));
    EXPECT_FALSE(R.P);
    EXPECT_NE(R.Errors.find("error: invalid JSON: "), std::string::npos) << R.Errors;
  }
  std::string Corrupt = Text;
  Corrupt[Corrupt.find(':', Text.size() / 2)] = '#';
  EXPECT_NE(readPlanText(Corrupt).Errors.find("error: invalid JSON"), std::string::npos);
  ReadResult Cut = readPlanText("{\n  \"format\": \"cclc-plan\",\n  \"version\": 1,\n  \"ra");
  EXPECT_NE(Cut.Errors.find("plan.json:4:"), std::string::npos) << Cut.Errors;
  EXPECT_NE(readPlanText("[1, 2]").Errors.find("error: expected an object, found an array"),
            std::string::npos);
}

TEST(MscclImportErrors, NameTheElement) {
  auto Expect = [](const std::string &Xml, const std::string &Expected) {
    ReadResult R = readXmlText(Xml);
    EXPECT_FALSE(R.P);
    EXPECT_NE(R.Errors.find(Expected), std::string::npos) << R.Errors;
  };
  std::string Good = swapAllreduce();
  auto Replace = [&](const std::string &From, const std::string &To) {
    std::string Xml = Good;
    Xml.replace(Xml.find(From), From.size(), To);
    return Xml;
  };
  Expect(swapAllreduce("put"), "<step>: type=\"put\" is not a step type cclc runs");
  Expect(Replace("ngpus=\"2\"", "ngpus=\"two\""), "algo.xml:1:2: error: <algo>: ngpus=\"two\" "
                                                   "is not an integer");
  Expect(Replace("recv=\"1\"", "recv=\"7\""), "<tb>: recv=\"7\": 7 is not another gpu");
  Expect(Replace("recv=\"1\"", "recv=\"0\""), "<tb>: a tb of gpu 0 cannot talk to gpu 0");
  Expect(Replace("srcoff=\"0\" dstbuf=\"o\" dstoff=\"0\" cnt=\"1\" depid=\"-1\"",
                 "srcoff=\"1\" dstbuf=\"o\" dstoff=\"0\" cnt=\"1\" depid=\"-1\""),
         "<step>: srcoff=\"1\": 1 with cnt=1 runs past the end of input (1 chunks)");
  Expect(Replace("coll=\"allreduce\"", "coll=\"allpairs\""), "coll=\"allpairs\" is not a "
                                                             "collective cclc runs");
  Expect(Replace("outofplace=\"1\"", "outofplace=\"0\""), "in-place-only algorithms are not "
                                                          "supported");
  Expect(swapAllreduce("rrc", "depid=\"5\" deps=\"0\""), "<step>: depid=\"5\" is not a tb of "
                                                         "gpu 0");
  Expect(swapAllreduce("rrc", "depid=\"2\" deps=\"3\""), "deps=\"3\": 3 is not a step of tb 2");
  Expect(Replace("<step s=\"0\" type=\"s\"", "<step s=\"1\" type=\"s\""), "s=\"1\": 1 is out of "
                                                                          "order");
  Expect(Good.substr(0, Good.size() / 2), "algo.xml:");
  Expect(Good.substr(0, Good.size() / 2), "error: invalid XML: ");
  Expect("<graphs/>", "not an MSCCL-IR algorithm");
  // gpu 1's receive never gets a message when gpu 0 does not send.
  Expect(Replace("type=\"s\"", "type=\"nop\""), "the algorithm deadlocks at gpu 1 tb 1 step 0: "
                                                "it waits for a message from gpu 0");
  Expect(Replace("type=\"r", "type=\"cpy\" x=\"").substr(0), "no step receives it");
}

TEST(MscclXmlErrors, FusedStepsThatSplitAConnection) {
  // Rank 0 receives from 1 and forwards to 2, then receives from 1 and
  // forwards to 3: MSCCL would need the connection from 1 in two tbs.
  Schedule S;
  S.Algorithm = "split";
  S.NRanks = 4;
  S.Remap = {0, 1, 2, 3};
  S.Ranks.resize(4);
  for (int32_t R = 0; R < 4; ++R) {
    S.Ranks[R].LogicalRank = R;
    S.Ranks[R].Channels.resize(1);
  }
  for (int32_t To : {2, 3}) {
    Step St;
    St.Op = OpKind::RecvCopySend;
    St.Peer = 1;
    St.SendPeer = To;
    St.Dst = Slice{BufferKind::Output, 0, 1};
    S.Ranks[0].Channels[0].Steps.push_back(St);
  }
  SourceManager SM;
  std::ostringstream Errors, OS;
  DiagnosticEngine Diags(SM, Errors);
  EXPECT_FALSE(writeMscclXml(S, PlanInfo{}, OS, Diags));
  EXPECT_NE(Errors.str().find("MSCCL-IR cannot express rank 0 channel 0"), std::string::npos)
      << Errors.str();
}

//===----------------------------------------------------------------------===//
// Dot
//===----------------------------------------------------------------------===//

TEST(ScheduleDot, OneEdgePerMessage) {
  Schedule S = library("ring-allreduce", 4);
  std::ostringstream OS;
  printScheduleDot(S, OS);
  std::string Dot = OS.str();
  size_t Messages = 0, Edges = 0, Clusters = 0;
  for (const RankProgram &R : S.Ranks)
    for (const Step &St : R.Channels[0].Steps)
      Messages += opSends(St.Op);
  for (size_t At = Dot.find(" [label=\"output["); At != std::string::npos;
       At = Dot.find(" [label=\"output[", At + 1))
    ++Edges;
  for (size_t At = Dot.find("subgraph cluster_rank"); At != std::string::npos;
       At = Dot.find("subgraph cluster_rank", At + 1))
    ++Clusters;
  EXPECT_EQ(Messages, 4u * 6u);
  EXPECT_EQ(Edges, Messages);
  EXPECT_EQ(Clusters, 4u);
  EXPECT_NE(Dot.find("r0c0s1 -> r1c0s2 [label=\"output[0]\"]"), std::string::npos) << Dot;
}

} // namespace
