//===- PlanLimitsTest.cpp - Plans that ask for too much are refused -------===//
//
// A plan comes from anywhere, and the runtime sizes buffers and shared memory
// from it: the reader holds every size and count to plan/Limits.h, refuses
// JSON nested deeper than a plan is while it parses (in time and memory
// proportional to the file), and never opens the file a plan's "source" names.
// The same reader serves `cclc plan-check` and the runtime's plan loading;
// both are checked here.
//
//===----------------------------------------------------------------------===//

#include "RuntimeTestSupport.h"

#include "plan/JsonReader.h"
#include "plan/Limits.h"
#include "plan/PlanJson.h"
#include "plan/Verifier.h"

#include <chrono>
#include <fcntl.h>
#include <fstream>
#include <future>
#include <sys/stat.h>
#include <thread>

namespace cclc::test {
namespace {

using nlohmann::json;

/// What reading plan Text says: the plan, or nothing and the diagnostics.
struct ReadResult {
  std::optional<plan::Plan> Plan;
  bool Verified = false;
  std::string Errors;
};

ReadResult readPlan(const std::string &Text, bool Verify = false) {
  SourceManager SM;
  std::ostringstream Log;
  DiagnosticEngine Diags(SM, Log);
  ReadResult R;
  R.Plan = plan::readPlanFile(SM.addBuffer("plan.json", Text), SM, Diags);
  if (R.Plan && Verify)
    R.Verified = verify::verifySchedule(R.Plan->Sched, Diags);
  R.Errors = Log.str();
  return R;
}

/// The ring allreduce plan for NRanks ranks, with Edit applied to its JSON.
std::string editedPlan(int NRanks, const std::function<void(json &)> &Edit) {
  json J = json::parse(compilePlan("ring-allreduce", NRanks));
  Edit(J);
  return J.dump(1);
}

bool contains(const std::string &Text, const std::string &Part) {
  return Text.find(Part) != std::string::npos;
}

TEST(PlanLimits, BufferSlotsAreBoundedAsTheCompilerBoundsThem) {
  for (int Slots : {1, plan::MaxBufferSlots}) {
    ReadResult R = readPlan(editedPlan(2, [&](json &J) { J["buffer_slots"] = Slots; }), true);
    EXPECT_TRUE(R.Plan && R.Verified) << Slots << ": " << R.Errors;
  }
  for (int Slots : {plan::MaxBufferSlots + 1, 65536, 1 << 30}) {
    ReadResult R = readPlan(editedPlan(2, [&](json &J) { J["buffer_slots"] = Slots; }));
    EXPECT_FALSE(R.Plan) << Slots;
    EXPECT_TRUE(contains(R.Errors, "buffer_slots: " + std::to_string(Slots) + " is not in [1, 64]"))
        << R.Errors;
  }
}

TEST(PlanLimits, ChannelCountsAreBounded) {
  ReadResult R = readPlan(editedPlan(2, [](json &J) { J["nchannels"] = plan::MaxChannels + 1; }));
  EXPECT_FALSE(R.Plan);
  EXPECT_TRUE(contains(R.Errors, "nchannels: 1025 is not in [1, 1024]")) << R.Errors;
}

TEST(PlanLimits, BufferSizesThatOverflowTheChunkGridAreRefused) {
  // An alltoall's buffers are nranks units: 65536 units of 65536 chunks do
  // not fit an int32 chunk index. The reader refuses before reading ranks.
  ReadResult R = readPlan(editedPlan(2, [](json &J) {
    J["collective"] = "alltoall";
    J["nranks"] = plan::MaxRanks;
    J["nchannels"] = 1;
    J["chunks_per_channel"] = plan::MaxGrid;
    J["remap"] = json::array();
  }));
  EXPECT_FALSE(R.Plan);
  EXPECT_TRUE(contains(R.Errors, "more chunks than a buffer can have")) << R.Errors;
}

TEST(PlanLimits, TheRuntimeRefusesTooManyBufferSlotsBeforeReservingThem) {
  cclcUniqueId Id;
  ASSERT_EQ(cclcGetUniqueId(&Id), cclcSuccess) << cclcGetLastError(nullptr);
  cclcComm_t Comm = nullptr;
  ASSERT_EQ(cclcCommInitRank(&Comm, 1, Id, 0), cclcSuccess) << cclcGetLastError(nullptr);
  std::string Plan = editedPlan(1, [](json &J) { J["buffer_slots"] = 65536; });
  EXPECT_EQ(cclcCommLoadPlanText(Comm, Plan.data(), Plan.size()), cclcInvalidArgument);
  EXPECT_TRUE(contains(cclcGetLastError(Comm), "buffer_slots: 65536 is not in [1, 64]"))
      << cclcGetLastError(Comm);
  std::string Fine = editedPlan(1, [](json &J) { J["buffer_slots"] = plan::MaxBufferSlots; });
  EXPECT_EQ(cclcCommLoadPlanText(Comm, Fine.data(), Fine.size()), cclcSuccess)
      << cclcGetLastError(Comm);
  EXPECT_EQ(cclcCommDestroy(Comm), cclcSuccess) << cclcGetLastError(nullptr);
}

TEST(PlanJsonNesting, DeepNestingStopsTheParserWhereItStarts) {
  // 100,000 levels: the parser stops at level 65, long before the
  // document's memory would grow with its depth.
  for (const auto &[Open, Close] : {std::pair<std::string, std::string>{"[", "]"},
                                    std::pair<std::string, std::string>{"{\"a\":", "}"}}) {
    std::string Text;
    for (int I = 0; I < 100000; ++I)
      Text += Open;
    Text += "1";
    for (int I = 0; I < 100000; ++I)
      Text += Close;
    auto Start = std::chrono::steady_clock::now();
    ReadResult R = readPlan(Text);
    EXPECT_LT(std::chrono::steady_clock::now() - Start, std::chrono::seconds(5));
    EXPECT_FALSE(R.Plan);
    size_t Column = 1 + 64 * Open.size();
    EXPECT_TRUE(contains(R.Errors, "plan.json:1:" + std::to_string(Column) +
                                       ": error: invalid JSON: arrays and objects nest more "
                                       "than 64 deep here"))
        << R.Errors.substr(0, 300);
  }
}

TEST(PlanJsonNesting, AsDeepAsAllowedStillParses) {
  SourceManager SM;
  std::ostringstream Log;
  DiagnosticEngine Diags(SM, Log);
  std::string Text = std::string(64, '[') + std::string(64, ']');
  EXPECT_TRUE(plan::parseJsonFile(SM.addBuffer("deep.json", Text), SM, Diags, 64)) << Log.str();
  Text = "[" + Text + "]";
  EXPECT_FALSE(plan::parseJsonFile(SM.addBuffer("deeper.json", Text), SM, Diags, 64));
}

TEST(PlanJsonNesting, LongKeysAtDepthCostTheirLengthOnce) {
  // Every value used to be keyed by its whole JSON pointer: 60 keys of 3000
  // characters over 100,000 values made 18 GB. Each value now costs its own
  // key, and the pointers still find every value.
  std::string Key(3000, 'k');
  std::string Text;
  for (int I = 0; I < 60; ++I)
    Text += "{\"" + Key + "\":";
  Text += "[";
  for (int I = 0; I < 100000; ++I)
    Text += I ? ",1" : "1";
  Text += "]";
  for (int I = 0; I < 60; ++I)
    Text += "}";
  SourceManager SM;
  std::ostringstream Log;
  DiagnosticEngine Diags(SM, Log);
  uint32_t File = SM.addBuffer("wide.json", Text);
  std::optional<plan::LocatedJson> Doc = plan::parseJsonFile(File, SM, Diags, 64);
  ASSERT_TRUE(Doc) << Log.str();
  std::string Pointer;
  for (int I = 0; I < 60; ++I)
    Pointer += "/" + Key;
  SourceLoc Last = Doc->locate(SM, Pointer + "/99999");
  EXPECT_EQ(Last.Col, Text.size() - 61);
  // A missing member is located at its nearest enclosing value.
  EXPECT_EQ(Doc->locate(SM, Pointer + "/100000").Col, 60 * (Key.size() + 4) + 1);
}

TEST(PlanJsonNesting, PointersUnescapeTildeAndSlash) {
  SourceManager SM;
  std::ostringstream Log;
  DiagnosticEngine Diags(SM, Log);
  std::string Text = R"({"a/b": {"c~d": [10, 20]}, "x": 1})";
  std::optional<plan::LocatedJson> Doc =
      plan::parseJsonFile(SM.addBuffer("keys.json", Text), SM, Diags, 64);
  ASSERT_TRUE(Doc) << Log.str();
  EXPECT_EQ(Doc->locate(SM, "/a~1b/c~0d/1").Col, Text.find("20") + 1);
  EXPECT_EQ(Doc->locate(SM, "/x").Col, Text.find("1}") + 1);
  EXPECT_EQ(Doc->locate(SM, "").Col, 1u);
  EXPECT_EQ(Doc->locate(SM, "/a~1b/nothing").Col, Text.find("{\"c~d") + 1);
}

/// A plan whose verification fails at a step compiled from line 10 of the
/// ring allreduce, with "source" set to Source and "source_text" kept or not.
std::string wrongPlan(const std::string &Source, bool KeepText) {
  return editedPlan(4, [&](json &J) {
    J["source"] = Source;
    if (!KeepText)
      J.erase("source_text");
    // Rank 0's first send goes to rank 3, which never receives it.
    for (json &St : J["ranks"][0]["channels"][0]["steps"])
      if (St["op"] == "send") {
        St["peer"] = 3;
        break;
      }
  });
}

TEST(PlanSource, DiagnosticsQuoteTheTextThePlanCarries) {
  ReadResult R = readPlan(wrongPlan("ring-allreduce.ccl", true), true);
  ASSERT_TRUE(R.Plan) << R.Errors;
  EXPECT_FALSE(R.Verified);
  size_t At = R.Errors.find("ring-allreduce.ccl:10:5: error: rank 0 channel 0 step 1: send to "
                            "rank 3 is never received");
  ASSERT_NE(At, std::string::npos) << R.Errors;
  EXPECT_EQ(R.Errors.find("\n    send(ring.next, output[(ring.pos - s) % n]);\n", At),
            R.Errors.find('\n', At))
      << R.Errors;
}

TEST(PlanSource, TheFileAPlanNamesIsNeverOpened) {
  // A file with a secret: an old plan naming it gets its line numbers, not
  // its lines.
  std::string Secret = ::testing::TempDir() + "plan-source-secret.txt";
  {
    std::ofstream Out(Secret);
    for (int I = 1; I <= 20; ++I)
      Out << "SECRET LINE " << I << "\n";
  }
  ReadResult R = readPlan(wrongPlan(Secret, false), true);
  ASSERT_TRUE(R.Plan) << R.Errors;
  EXPECT_FALSE(R.Verified);
  EXPECT_TRUE(contains(R.Errors, Secret + ":10:5: error:")) << R.Errors;
  EXPECT_FALSE(contains(R.Errors, "SECRET")) << R.Errors;

  // A FIFO nobody writes: opening it would block forever. Loading runs on a
  // thread, so that a regression fails the test instead of hanging it.
  std::string Fifo = ::testing::TempDir() + "plan-source-fifo";
  ::unlink(Fifo.c_str());
  ASSERT_EQ(::mkfifo(Fifo.c_str(), 0600), 0);
  auto Done = std::make_shared<std::promise<ReadResult>>();
  std::future<ReadResult> Result = Done->get_future();
  std::string Text = wrongPlan(Fifo, false);
  std::thread([Done, Text] { Done->set_value(readPlan(Text, true)); }).detach();
  if (Result.wait_for(std::chrono::seconds(10)) != std::future_status::ready) {
    ADD_FAILURE() << "loading a plan whose source is a FIFO blocks";
    // Let the blocked reader go: a writer that closes at once gives it EOF.
    int Fd = ::open(Fifo.c_str(), O_WRONLY | O_NONBLOCK);
    if (Fd >= 0)
      ::close(Fd);
    Result.wait();
  } else {
    ReadResult F = Result.get();
    EXPECT_TRUE(contains(F.Errors, Fifo + ":10:5: error:")) << F.Errors;
  }
  ::unlink(Fifo.c_str());
}

TEST(PlanSource, TheCompiledPlanCarriesItsSourceAndReadsItBack) {
  json J = json::parse(compilePlan("ring-allreduce", 2));
  ASSERT_TRUE(J.contains("source_text"));
  std::ifstream In(std::string(CCLC_SOURCE_DIR) + "/algorithms/ring-allreduce.ccl");
  std::string Source((std::istreambuf_iterator<char>(In)), std::istreambuf_iterator<char>());
  EXPECT_EQ(J["source_text"], Source);
  ReadResult R = readPlan(J.dump());
  ASSERT_TRUE(R.Plan) << R.Errors;
  EXPECT_EQ(R.Plan->Info.SourceText, Source);
  EXPECT_EQ(plan::scheduleToPlan(R.Plan->Sched, R.Plan->Info), J);
}

} // namespace
} // namespace cclc::test
