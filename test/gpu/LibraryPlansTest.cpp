//===- LibraryPlansTest.cpp - Every library algorithm as a plan on a GPU --===//
//
// The GPU plan interpreter must run every algorithm of the library, loaded
// as a plan, at every rank count the algorithm allows. Jobs of 2 to 8 ranks
// share device 0, each rank a thread with its own communicator and stream,
// and every rank checks every element of its output against what the
// inputs must give: f32, f16 and bf16, out of place and in place, counts 0,
// 1, 1001 and one of several rounds with the sum, 1001 with the maximum.
// Plans are compiled for two ring channels with pipelined chunks, so that
// each rank's kernel runs several blocks at once on finer chunk grids; the
// rooted collectives are compiled for the last rank.
//
//===----------------------------------------------------------------------===//

#include "DeviceCollectives.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <bit>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <span>

namespace cclc::gputest {
namespace {

using plan::CollectiveKind;

/// A library algorithm compiled into a plan for one job.
struct LibraryPlan {
  std::string Stem;
  std::string Algorithm;
  std::string Text;
  CollectiveKind Collective = CollectiveKind::AllReduce;
  int Root = 0;
};

/// The algorithm of File compiled for NRanks; nullopt when it requires a
/// power of two and NRanks is not one. Any other failure to compile is a
/// test failure.
std::optional<LibraryPlan> libraryPlan(const std::filesystem::path &File, int NRanks,
                                       plan::Protocol Proto) {
  std::string Stem = File.stem().string();
  test::PlanOptions Options{NRanks - 1, /*RingChannels=*/2, /*ChunksFactor=*/2,
                            /*RankZeroOnly=*/false, Proto};
  std::string Text = test::compilePlan(Stem, NRanks, Options);
  if (Text.empty()) {
    std::ifstream In(File);
    std::string Source{std::istreambuf_iterator<char>(In), std::istreambuf_iterator<char>()};
    EXPECT_TRUE(Source.find("pow2(nranks)") != std::string::npos &&
                !std::has_single_bit(unsigned(NRanks)))
        << Stem << " does not compile for " << NRanks << " ranks";
    return std::nullopt;
  }
  nlohmann::json Plan = nlohmann::json::parse(Text);
  CollectiveKind Collective = *plan::parseCollective(Plan["collective"].get<std::string>());
  return LibraryPlan{Stem, Plan["algorithm"].get<std::string>(), std::move(Text), Collective,
                     plan::hasRoot(Collective) ? NRanks - 1 : 0};
}

/// The plans of every algorithm of algorithms/ that serves NRanks. Every
/// rank runs them in this order, whatever it is.
std::vector<LibraryPlan> libraryPlans(int NRanks, plan::Protocol Proto) {
  std::vector<LibraryPlan> Plans;
  for (const auto &Entry :
       std::filesystem::directory_iterator(std::string(CCLC_SOURCE_DIR) + "/algorithms"))
    if (Entry.path().extension() == ".ccl")
      if (std::optional<LibraryPlan> P = libraryPlan(Entry.path(), NRanks, Proto))
        Plans.push_back(std::move(*P));
  return Plans;
}

/// The sums of every count, and the maximum, in every type, for one plan.
/// Runs P's collective for three types at every count of Counts, and with
/// max for those that reduce, every element checked.
void runMatrix(cclcComm_t Comm, const LibraryPlan &P, RankThread &R, CallMemory &Mem,
               std::span<const size_t> Counts) {
  auto Run = [&](cclcDataType_t Type, cclcRedOp_t Op, size_t Count) {
    runCheckedOnDevice(Comm, {P.Collective, Type, Op, P.Root, Count}, R.rank(), R.nranks(), Mem,
                       R.stream());
  };
  for (cclcDataType_t Type : {cclcFloat32, cclcFloat16, cclcBfloat16}) {
    for (size_t Count : Counts)
      Run(Type, cclcSum, Count);
    if (plan::reduces(P.Collective))
      Run(Type, cclcMax, 1001);
  }
}

/// Ranks, and how the plans' messages travel. By a line protocol, messages
/// up to its kern::LineFormat::MaxBytes go as lines with flags and the
/// larger ones by the simple protocol, in one plan: by LL the counts up to
/// 1001 elements go as lines and 65537's as simple messages; by LL128 16411
/// elements go as lines too. The multi-round count, which such plans serve
/// as simple ones, runs under the simple protocol alone.
constexpr size_t SimpleCounts[] = {0, 1, 1001, MultiRoundCount};
constexpr size_t LLCounts[] = {0, 1, 1001, 65537};
constexpr size_t LL128Counts[] = {0, 1, 1001, 16411, 65537};

/// The counts a job of Proto runs.
std::span<const size_t> countsFor(plan::Protocol Proto) {
  switch (Proto) {
  case plan::Protocol::Simple: return SimpleCounts;
  case plan::Protocol::LL: return LLCounts;
  case plan::Protocol::LL128: return LL128Counts;
  }
  return SimpleCounts;
}

class LibraryPlans : public GpuJobTest,
                     public ::testing::WithParamInterface<std::tuple<int, plan::Protocol>> {};

TEST_P(LibraryPlans, EveryElementIsRight) {
  auto [NRanks, Proto] = GetParam();
  test::ScopedEnv Timeout("CCLC_TIMEOUT_MS", "30000");
  std::vector<LibraryPlan> Plans = libraryPlans(NRanks, Proto);
  ASSERT_FALSE(Plans.empty()) << "algorithms/ holds no algorithm";
  std::string Log = runLoggedGpuJob(NRanks, [&](RankThread &R) {
    CallMemory Mem(MultiRoundCount, NRanks);
    for (const LibraryPlan &P : Plans) {
      ScopedComm Comm = R.newComm();
      try {
        perf::check(cclcCommLoadPlanText(Comm.get(), P.Text.data(), P.Text.size()), "loading");
        runMatrix(Comm.get(), P, R, Mem, countsFor(Proto));
      } catch (const std::exception &E) {
        throw std::runtime_error(P.Stem + ": " + E.what());
      }
      Comm.destroy();
    }
  });
  for (const LibraryPlan &P : Plans)
    expectRan(Log, P.Algorithm, "plan <plan text>, GPU plan interpreter");
}

INSTANTIATE_TEST_SUITE_P(
    Jobs, LibraryPlans,
    ::testing::Combine(::testing::Range(2, 9),
                       ::testing::Values(plan::Protocol::Simple, plan::Protocol::LL,
                                         plan::Protocol::LL128)),
    [](const ::testing::TestParamInfo<std::tuple<int, plan::Protocol>> &Info) {
      plan::Protocol Proto = std::get<1>(Info.param);
      std::string Name(Proto == plan::Protocol::Simple ? "" : plan::protocolName(Proto));
      std::transform(Name.begin(), Name.end(), Name.begin(),
                     [](unsigned char C) { return char(std::toupper(C)); });
      return std::to_string(std::get<0>(Info.param)) + "Ranks" + Name;
    });

} // namespace
} // namespace cclc::gputest
