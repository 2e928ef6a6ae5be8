//===- PlanLimitsTest.cpp - Plans that ask for too much are refused -------===//
//
// A plan comes from anywhere, and the runtime sizes buffers and shared memory
// from it: the reader holds every size and count to plan/Limits.h, refuses
// JSON nested deeper than a plan is while it parses (in time and memory
// proportional to the file), and never opens the file a plan's "source" names.
// The same reader serves `cclc plan-check` and the runtime's plan loading;
// both are checked here, with the rolled steps that keep a plan linear in its
// ranks and the reading of one rank's program that the runtime does for
// plans too large to prove at load.
//
//===----------------------------------------------------------------------===//

#include "RuntimeTestSupport.h"

#include "plan/JsonReader.h"
#include "plan/Limits.h"
#include "plan/PlanJson.h"
#include "plan/Verifier.h"

#include <chrono>
#include <fcntl.h>
#include <cstdio>
#include <fstream>
#include <future>
#include <malloc.h>
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

//===----------------------------------------------------------------------===//
// Rolled steps and one rank's program
//===----------------------------------------------------------------------===//

/// Every step object of every rank in plan J, with its rank.
std::vector<std::pair<int, json *>> stepObjects(json &J) {
  std::vector<std::pair<int, json *>> Steps;
  for (json &Rank : J["ranks"])
    for (json &Channel : Rank["channels"])
      for (json &Step : Channel["steps"])
        Steps.emplace_back(Rank["rank"].get<int>(), &Step);
  return Steps;
}

/// The first step object of J that repeats, and its rank.
std::pair<int, json *> firstRolled(json &J) {
  for (auto [Rank, Step] : stepObjects(J))
    if (Step->contains("repeat"))
      return {Rank, Step};
  ADD_FAILURE() << "the plan has no rolled step";
  return {-1, nullptr};
}

/// J with every rolled step written out, as version 1 wrote every plan;
/// independent of the reader, so that it checks the reader's expansion.
json unrolled(json J) {
  J["version"] = 1;
  for (json &Rank : J["ranks"])
    for (json &Channel : Rank["channels"]) {
      json Steps = json::array();
      for (const json &Step : Channel["steps"]) {
        json Base = Step;
        Base.erase("repeat");
        Base.erase("stride");
        int64_t Repeat = Step.value("repeat", int64_t(1));
        json Move = Step.value("stride", json::object());
        for (int64_t I = 0; I < Repeat; ++I) {
          json One = Base;
          for (auto It = Move.begin(); It != Move.end(); ++It) {
            json &Field = It.key() == "src" || It.key() == "dst" ? One[It.key()]["chunk"]
                                                                 : One[It.key()];
            Field = Field.get<int64_t>() + I * It.value().get<int64_t>();
          }
          Steps.push_back(One);
        }
      }
      Channel["steps"] = Steps;
    }
  return J;
}

TEST(PlanRolling, ARingIsWrittenInSpaceLinearInItsRanks) {
  for (int NRanks : {8, 64}) {
    json J = json::parse(compilePlan("ring-allreduce", NRanks));
    EXPECT_EQ(J["version"], plan::RolledPlanFormatVersion);
    // Each rank's 2 (n - 1) + 1 steps take a handful of objects, whatever n.
    EXPECT_LE(stepObjects(J).size(), size_t(8 * NRanks)) << NRanks << " ranks";
    ReadResult R = readPlan(J.dump(), /*Verify=*/true);
    ASSERT_TRUE(R.Plan && R.Verified) << R.Errors;
    EXPECT_EQ(R.Plan->Steps, int64_t(NRanks) * (2 * (NRanks - 1) + 2));
    EXPECT_EQ(plan::scheduleToPlan(R.Plan->Sched, R.Plan->Info), J);
  }
}

TEST(PlanRolling, VersionOnePlansReadAsTheyAlwaysDid) {
  PlanOptions Options;
  Options.RingChannels = 2;
  Options.ChunksFactor = 2;
  json J = json::parse(compilePlan("ring-allreduce", 5, Options));
  ReadResult Rolled = readPlan(J.dump());
  ReadResult Flat = readPlan(unrolled(J).dump(), /*Verify=*/true);
  ASSERT_TRUE(Rolled.Plan && Flat.Plan && Flat.Verified) << Rolled.Errors << Flat.Errors;
  EXPECT_EQ(plan::scheduleToPlan(Flat.Plan->Sched, Flat.Plan->Info),
            plan::scheduleToPlan(Rolled.Plan->Sched, Rolled.Plan->Info));
}

TEST(PlanRolling, OneRankReadsItsOwnProgramAndWhatAllRanksShare) {
  PlanOptions Options;
  Options.RingChannels = 2;
  for (const char *Algorithm : {"ring-allreduce", "butterfly-allreduce", "tree-allreduce"}) {
    json J = json::parse(compilePlan(Algorithm, 8, Options));
    ReadResult Whole = readPlan(J.dump());
    ASSERT_TRUE(Whole.Plan) << Whole.Errors;
    const sched::Schedule &All = Whole.Plan->Sched;
    for (int32_t Rank : {0, 3, 7}) {
      SourceManager SM;
      std::ostringstream Log;
      DiagnosticEngine Diags(SM, Log);
      std::optional<plan::Plan> Mine = plan::readPlanFile(
          SM.addBuffer("plan.json", J.dump()), SM, Diags, plan::ReadOptions{Rank, 0});
      ASSERT_TRUE(Mine) << Log.str();
      EXPECT_FALSE(Mine->Complete);
      EXPECT_EQ(Mine->Steps, int64_t(All.stepCount()));
      EXPECT_EQ(Mine->Links, plan::linksOf(All)) << Algorithm;
      kern::ProgramShape Shape = plan::scheduleShape(All);
      EXPECT_EQ(Mine->Shape.Grid.MaxSliceChunks, Shape.Grid.MaxSliceChunks);
      EXPECT_EQ(Mine->Shape.ScratchUnits, Shape.ScratchUnits);
      for (int32_t Other = 0; Other < All.NRanks; ++Other) {
        // Rank's program is the whole plan's, step for step; the others
        // have their channels and nothing in them.
        const sched::RankProgram &Read = Mine->Sched.Ranks[size_t(Other)];
        ASSERT_EQ(Read.Channels.size(), size_t(All.NChannels));
        for (int32_t C = 0; C < All.NChannels; ++C) {
          sched::Schedule One = All, Got = All;
          One.Ranks = {All.Ranks[size_t(Other)]};
          Got.Ranks = {Read};
          if (Other != Rank)
            EXPECT_TRUE(Read.Channels[size_t(C)].Steps.empty());
          else
            EXPECT_EQ(plan::scheduleToPlan(Got, {})["ranks"], plan::scheduleToPlan(One, {})["ranks"]);
        }
      }
    }
  }
}

TEST(PlanRolling, RunsThatLeaveTheirBoundsAreRefused) {
  struct Case {
    const char *Why;
    std::function<void(json &Step, int Rank)> Edit;
    std::string Expected;
  };
  const std::vector<Case> Cases = {
      {"a chunk past the buffer", [](json &St, int) { St["stride"]["dst"] = 1; },
       "repetitions starts at chunk"},
      {"a peer past the ranks", [](json &St, int) { St["stride"]["peer"] = 3; },
       "which is not a rank (plan has 4 ranks)"},
      {"the step's own rank",
       [](json &St, int Rank) {
         St["peer"] = Rank == 0 ? 1 : 0;
         St["stride"]["peer"] = Rank == 0 ? -1 : Rank;
         St["repeat"] = 2;
       },
       "the step's own rank"},
      {"a field the step lacks", [](json &St, int) { St["stride"]["src"] = 1; },
       "step has no src to move"},
      {"a stride without a count", [](json &St, int) { St.erase("repeat"); },
       "a stride needs a repeat count"},
      {"no repetition", [](json &St, int) { St["repeat"] = 0; }, "is not in [1, 16777216]"},
      {"too many repetitions", [](json &St, int) { St["repeat"] = int64_t(1) << 40; },
       "is not in [1, 16777216]"},
      {"an exchange repeated", [](json &St, int) { St["with_next"] = true; },
       "a step that runs with the next one is not repeated"},
      {"a rolled step in version 1", [](json &J, int) { J["repeat"] = 2; }, ""},
  };
  for (const Case &C : Cases) {
    json J = json::parse(compilePlan("ring-allreduce", 4));
    auto [Rank, Step] = firstRolled(J);
    ASSERT_TRUE(Step);
    C.Edit(*Step, Rank);
    if (C.Expected.empty()) {
      J["version"] = 1;
      ReadResult R = readPlan(J.dump());
      EXPECT_FALSE(R.Plan);
      EXPECT_TRUE(contains(R.Errors, "unknown field (steps are rolled from plan format version 2)"))
          << R.Errors;
      continue;
    }
    ReadResult R = readPlan(J.dump());
    EXPECT_FALSE(R.Plan) << C.Why;
    EXPECT_TRUE(contains(R.Errors, "plan.json:")) << C.Why << ": " << R.Errors;
    EXPECT_TRUE(contains(R.Errors, C.Expected)) << C.Why << ": " << R.Errors;
  }
}

TEST(PlanRolling, UnknownVersionsAreRefusedSayingWhichAreRead) {
  json J = json::parse(compilePlan("ring-allreduce", 2));
  J["version"] = 4;
  ReadResult R = readPlan(J.dump());
  EXPECT_FALSE(R.Plan);
  EXPECT_TRUE(contains(R.Errors, "plan format version 4 is not supported (this cclc reads "
                                 "versions 1 to 3); recompile the plan with this cclc"))
      << R.Errors;
}

TEST(PlanRolling, RotationsAreRefusedWhereTheyDoNotFit) {
  PlanOptions Rotated;
  Rotated.RankZeroOnly = true;
  const json Good = json::parse(compilePlan("ring-allreduce", 4, Rotated));
  ASSERT_EQ(Good["version"], plan::PlanFormatVersion);
  ASSERT_EQ(Good["ranks"].size(), 1u);
  ASSERT_TRUE(readPlan(Good.dump(), /*Verify=*/true).Verified);
  const json Plain = json::parse(compilePlan("ring-allreduce", 4));
  struct Case {
    const char *Why;
    std::function<void(json &)> Edit;
    std::string Expected;
  };
  const std::vector<Case> Cases = {
      {"an older version", [](json &J) { J["version"] = 2; },
       "rotation: needs plan format version 3 (this plan is version 2)"},
      {"a step past the region", [](json &J) { J["rotation"]["chunk_step"] = 4; },
       "rotation.chunk_step: 4 is not a chunk of a channel's region (4 chunks)"},
      {"a negative step", [](json &J) { J["rotation"]["chunk_step"] = -1; },
       "rotation.chunk_step: -1 is not a chunk"},
      {"an unknown field", [](json &J) { J["rotation"]["axis"] = 1; },
       "rotation.axis: unknown field"},
      {"not an object", [](json &J) { J["rotation"] = 1; },
       "rotation: expected an object, found the number 1"},
      {"a remap", [](json &J) { J["remap"] = {1, 0, 2, 3}; },
       "rotation: a rotated plan needs the identity remap"},
      {"every rank written",
       [&](json &J) { J["ranks"] = Plain["ranks"]; },
       "ranks: has 4 entries (a rotated plan holds rank 0's alone)"},
      {"a slice of two chunks",
       [](json &J) { J["ranks"][0]["channels"][0]["steps"][1]["src"]["count"] = 2; },
       "steps[1].src: a rotated plan's slices are single chunks or a channel's whole region, "
       "not 2 chunks"},
  };
  for (const Case &C : Cases) {
    json J = Good;
    C.Edit(J);
    ReadResult R = readPlan(J.dump());
    EXPECT_FALSE(R.Plan) << C.Why;
    EXPECT_TRUE(contains(R.Errors, C.Expected)) << C.Why << ": " << R.Errors;
  }
}

/// Bytes the allocator holds now.
size_t heldBytes() { return mallinfo2().uordblks; }

TEST(PlanRolling, OneRankOfThousandsOfRanksLoadsInTimeAndMemoryOfItsOwn) {
  // As `cclc compile --emit=json` writes them: rank 0's program and the
  // rotation that makes every other rank's.
  PlanOptions Rotated;
  Rotated.RankZeroOnly = true;
  for (auto [NRanks, Rank] : {std::pair{1024, 517}, std::pair{8192, 4133}}) {
    std::string Text = compilePlan("ring-allreduce", NRanks, Rotated);
    ASSERT_FALSE(Text.empty());
    std::string Path = ::testing::TempDir() + "ring" + std::to_string(NRanks) + ".json";
    std::ofstream(Path) << Text;
    // As the runtime reads a plan (Communicator::loadPlan): from its file,
    // for its own rank, beyond the steps it proves.
    size_t Before = heldBytes();
    auto Start = std::chrono::steady_clock::now();
    SourceManager SM;
    std::ostringstream Log;
    DiagnosticEngine Diags(SM, Log);
    std::string Error;
    std::optional<uint32_t> Id = SM.loadFile(Path, Error);
    ASSERT_TRUE(Id) << Error;
    std::optional<plan::Plan> Mine =
        plan::readPlanFile(*Id, SM, Diags, plan::ReadOptions{Rank, plan::RuntimeProofSteps});
    double Ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - Start)
            .count();
    ASSERT_TRUE(Mine) << Log.str();
    size_t Held = heldBytes() - Before;
    std::printf("loading rank %d of a %d-rank ring allreduce plan (%zu bytes, %lld steps): "
                "%.1f ms, %.2f MiB held\n",
                Rank, NRanks, Text.size(), static_cast<long long>(Mine->Steps), Ms,
                double(Held) / (1 << 20));
    EXPECT_FALSE(Mine->Complete);
    EXPECT_EQ(Mine->Steps, int64_t(NRanks) * (2 * (NRanks - 1) + 2));
    const std::vector<sched::Step> &Steps = Mine->Sched.Ranks[Rank].Channels[0].Steps;
    ASSERT_EQ(Steps.size(), size_t(2 * (NRanks - 1) + 2));
    // Its ring: it sends to the next rank and receives from the one before.
    EXPECT_EQ(Mine->Links.size(), size_t(NRanks));
    for (const sched::Step &St : Steps) {
      if (sched::opReceives(St.Op)) {
        EXPECT_EQ(St.Peer, Rank - 1);
      }
      if (sched::opSends(St.Op)) {
        EXPECT_EQ(St.sendTarget(), Rank + 1);
      }
    }
    // What it holds is its own program, the plan's text and a link per
    // rank, not every rank's steps (134 million of them at 8192 ranks).
    EXPECT_LT(Held, Text.size() + (size_t(16) << 20));
    // The plan is rank 0's program and the remap's n entries.
    EXPECT_LT(Text.size(), size_t(16) * NRanks + (size_t(16) << 10));
    ::unlink(Path.c_str());
  }
}

} // namespace
} // namespace cclc::test
