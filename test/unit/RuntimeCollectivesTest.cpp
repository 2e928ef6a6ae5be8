//===- RuntimeCollectivesTest.cpp - Every library algorithm, forked ranks -===//
//
// Each job compiles every algorithm of the library for its rank count, then
// every rank loads each plan into a communicator of its own and checks every
// element of every collective it runs: all ten types for the ring allreduce,
// f32, bf16 and i32 for the others, every operator on sizes 0, 1 and 1001,
// and the sum on an odd size of several rounds, out of place and in place. Jobs run over shared
// memory, over shared memory with every message the receiver's buffer can take written there by
// the sender (single copy), the same into buffers from cclcMemAlloc that the sender maps, the
// same in ranks that may make no memory file (whose workspaces then come from the heap), and
// over TCP, on 2 to 8 ranks. One more job checks a 64 MiB allreduce on four ranks, and streams of
// small calls check that the ranks that only send run dozens of calls ahead of their receivers on
// the FIFOs of a plan whose window holds small calls alone, and, where waits yield, on the small
// slots of a plan for every size. Repeated calls, which run without
// being chosen or placed again, check that a repeat on changed buffers or after a plan was loaded
// runs as a first call would.
//
//===----------------------------------------------------------------------===//

#include "RuntimeTestSupport.h"

#include "runtime/api/LinkSets.h"
#include "runtime/api/Types.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <new>
#include <numeric>

#include <sys/mman.h>

namespace cclc::test {
namespace {

using plan::CollectiveKind;

constexpr cclcDataType_t AllTypes[] = {cclcInt8,    cclcUint8,   cclcInt32,   cclcUint32,
                                       cclcInt64,   cclcUint64,  cclcFloat16, cclcFloat32,
                                       cclcFloat64, cclcBfloat16};
constexpr cclcDataType_t SomeTypes[] = {cclcFloat32, cclcBfloat16, cclcInt32};
/// 0, 1 and odd; with the sum, also odd across several rounds of the
/// default slots.
constexpr size_t Sizes[] = {0, 1, 1001};
constexpr size_t RoundsSize = 70001;

/// A library algorithm compiled for a job, and the root its plan serves.
struct LibraryPlan {
  std::string Name;
  std::string Text;
  CollectiveKind Collective = CollectiveKind::AllReduce;
  int Root = 0;
};

/// Every algorithm of the library that compiles for NRanks, on two ring
/// channels and with pipelined chunks, so that the plans exercise concurrent
/// channels and finer chunk grids.
std::vector<LibraryPlan> libraryPlans(int NRanks) {
  std::vector<std::filesystem::path> Files;
  for (const auto &Entry :
       std::filesystem::directory_iterator(std::string(CCLC_SOURCE_DIR) + "/algorithms"))
    if (Entry.path().extension() == ".ccl")
      Files.push_back(Entry.path());
  std::sort(Files.begin(), Files.end());
  std::vector<LibraryPlan> Plans;
  for (const std::filesystem::path &File : Files) {
    LibraryPlan P;
    P.Name = File.stem().string();
    // Rooted plans are compiled for the last rank; root 0 then falls back.
    P.Root = NRanks - 1;
    P.Text = compilePlan(P.Name, NRanks, {P.Root, /*RingChannels=*/2, /*ChunksFactor=*/2});
    if (P.Text.empty())
      continue;
    P.Collective =
        *plan::parseCollective(nlohmann::json::parse(P.Text)["collective"].get<std::string>());
    if (!plan::hasRoot(P.Collective))
      P.Root = 0;
    Plans.push_back(std::move(P));
  }
  return Plans;
}

/// Every type, operator and size of the matrix for one algorithm.
void runMatrix(cclcComm_t Comm, const LibraryPlan &P, int Rank, int NRanks) {
  std::vector<cclcDataType_t> Types(std::begin(SomeTypes), std::end(SomeTypes));
  if (P.Name == "ring-allreduce")
    Types.assign(std::begin(AllTypes), std::end(AllTypes));
  std::vector<cclcRedOp_t> Ops = {cclcSum};
  if (plan::reduces(P.Collective))
    Ops = {cclcSum, cclcProd, cclcMax, cclcMin};
  for (cclcDataType_t Type : Types)
    for (cclcRedOp_t Op : Ops) {
      for (size_t Count : Sizes)
        runChecked(Comm, {P.Collective, Type, Op, P.Root, Count}, Rank, NRanks);
      if (Op == cclcSum)
        runChecked(Comm, {P.Collective, Type, Op, P.Root, RoundsSize}, Rank, NRanks);
    }
}

struct JobCase {
  int NRanks;
  const char *Transport;
};

std::string jobName(const ::testing::TestParamInfo<JobCase> &Info) {
  return std::to_string(Info.param.NRanks) + "Ranks";
}

class LibraryAlgorithms : public ::testing::TestWithParam<JobCase> {};

TEST_P(LibraryAlgorithms, EveryElementIsRight) {
  int NRanks = GetParam().NRanks;
  ScopedTransport Transport(GetParam().Transport);
  ScopedEnv Timeout("CCLC_TIMEOUT_MS", "20000");
  std::vector<LibraryPlan> Plans = libraryPlans(NRanks);
  // Every collective has a ring; pow2 algorithms join where they fit.
  ASSERT_GE(Plans.size(), 6u);
  runJob(NRanks, [&](cclcComm_t Control, int Rank) {
    if (withoutMemoryFiles()) {
      void *Buffer = nullptr;
      expect(cclcMemAlloc(&Buffer, 4096) == cclcSystemError &&
                 std::strstr(cclcGetLastError(nullptr), "cannot create a memory file"),
             std::string("cclcMemAlloc without memory files says why it fails: ") +
                 cclcGetLastError(nullptr));
    }
    int PeerMappings = 0;
    for (const LibraryPlan &P : Plans) {
      cclcComm_t Comm = newComm(Control);
      ok(cclcCommLoadPlanText(Comm, P.Text.data(), P.Text.size()), "loading " + P.Name);
      runMatrix(Comm, P, Rank, NRanks);
      PeerMappings += peerBufferMappings();
      ok(cclcCommDestroy(Comm), "destroying the communicator of " + P.Name);
    }
    // Over TCP, or without memory files, nothing is mapped; where the
    // buffers come from cclcMemAlloc the peers' are.
    bool Tcp = std::string(GetParam().Transport) == "tcp";
    expect((Tcp || withoutMemoryFiles()) ? PeerMappings == 0 : PeerMappings > 0 || !mappedBuffers(),
           "rank " + std::to_string(Rank) + " mapped " + std::to_string(PeerMappings) +
               " buffers of its peers");
    // The control communicator has no plans: every call falls back on the
    // library's rings, built for each root.
    for (CollectiveKind Collective :
         {CollectiveKind::AllReduce, CollectiveKind::AllGather, CollectiveKind::ReduceScatter,
          CollectiveKind::Broadcast, CollectiveKind::Reduce})
      for (int Root : {0, NRanks / 2})
        for (size_t Count : {size_t(1), size_t(1001)})
          runChecked(Control, {Collective, cclcFloat32, cclcSum, Root, Count}, Rank, NRanks);
  });
}

INSTANTIATE_TEST_SUITE_P(Shm, LibraryAlgorithms,
                         ::testing::Values(JobCase{2, "shm"}, JobCase{3, "shm"}, JobCase{4, "shm"},
                                           JobCase{5, "shm"}, JobCase{8, "shm"}),
                         jobName);
INSTANTIATE_TEST_SUITE_P(Tcp, LibraryAlgorithms,
                         ::testing::Values(JobCase{2, "tcp"}, JobCase{3, "tcp"}, JobCase{6, "tcp"}),
                         jobName);
INSTANTIATE_TEST_SUITE_P(SingleCopy, LibraryAlgorithms,
                         ::testing::Values(JobCase{2, "shm_single_copy"},
                                           JobCase{3, "shm_single_copy"},
                                           JobCase{8, "shm_single_copy"}),
                         jobName);
INSTANTIATE_TEST_SUITE_P(Mapped, LibraryAlgorithms,
                         ::testing::Values(JobCase{2, "shm_mapped"}, JobCase{3, "shm_mapped"},
                                           JobCase{8, "shm_mapped"}),
                         jobName);
INSTANTIATE_TEST_SUITE_P(WithoutMemoryFiles, LibraryAlgorithms,
                         ::testing::Values(JobCase{2, "shm_sandboxed"},
                                           JobCase{3, "shm_sandboxed"}),
                         jobName);

/// Streams of small calls, on the given transport and rank count.
class SmallCallStreams : public ::testing::TestWithParam<JobCase> {
protected:
  static constexpr int Ahead = 48, Calls = 200;
  static constexpr size_t Count = 1024;

  void SetUp() override {
    Done = static_cast<std::atomic<int> *>(mmap(nullptr, sizeof(std::atomic<int>),
                                                PROT_READ | PROT_WRITE,
                                                MAP_SHARED | MAP_ANONYMOUS, -1, 0));
    ASSERT_NE(Done, MAP_FAILED);
    new (Done) std::atomic<int>(0);
  }
  void TearDown() override {
    if (Done != MAP_FAILED)
      munmap(Done, sizeof(std::atomic<int>));
  }

  /// Name compiled for the job with a window that ends at Count elements,
  /// as `--explain` records one for small calls: its FIFOs have many small
  /// slots.
  std::string smallCallPlan(const std::string &Name) const {
    std::string Text = compilePlan(Name, GetParam().NRanks);
    EXPECT_FALSE(Text.empty());
    nlohmann::json Plan = nlohmann::json::parse(Text);
    Plan["min_bytes"] = 0;
    Plan["max_bytes"] = Count * sizeof(float);
    return Plan.dump();
  }
  /// Waits until Senders ranks have said they are Ahead calls ahead; with 8
  /// slots they would wait out the timeout instead.
  void awaitSenders(int Senders) const {
    auto Until = std::chrono::steady_clock::now() + std::chrono::seconds(15);
    while (Done->load() < Senders && std::chrono::steady_clock::now() < Until)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    expect(Done->load() == Senders, "the ranks that only send made " + std::to_string(Ahead) +
                                        " calls before the others made one");
  }

  /// Runs a job in which every rank loads Plan and broadcasts from rank 0
  /// Calls times, CountOf(Call) elements each: the root makes Ahead calls
  /// before its receivers make any, and each receiver checks every call's
  /// data, in order, as the slots are reused.
  void broadcastStream(const std::string &Plan, size_t (*CountOf)(int Call)) const {
    runJob(GetParam().NRanks, [&](cclcComm_t Comm, int Rank) {
      ok(cclcCommLoadPlanText(Comm, Plan.data(), Plan.size()), "loading the plan");
      std::vector<float> Buffer;
      for (int Call = 0; Call < Calls; ++Call) {
        if (Rank == 0 && Call == Ahead)
          Done->store(1);
        if (Rank != 0 && Call == 0)
          awaitSenders(1);
        const size_t N = CountOf(Call);
        Buffer.resize(N);
        if (Rank == 0)
          std::iota(Buffer.begin(), Buffer.end(), float(Call));
        ok(cclcBroadcast(Buffer.data(), Buffer.data(), N, cclcFloat32, 0, Comm, nullptr),
           "broadcast " + std::to_string(Call));
        for (size_t I = 0; I < N; ++I)
          expect(Buffer[I] == float(Call) + float(I),
                 "broadcast " + std::to_string(Call) + " delivered the root's data");
      }
    });
  }

  /// Counts the ranks that made their first Ahead calls; made before the
  /// ranks fork.
  std::atomic<int> *Done = static_cast<std::atomic<int> *>(MAP_FAILED);
};

/// The root of a broadcast makes Ahead calls before its receivers make any,
/// and more after, and each receiver gets every call's data, in order, as
/// the slots are reused.
TEST_P(SmallCallStreams, ARootRunsDozensOfBroadcastsAheadOfItsReceivers) {
  ScopedTransport Transport(GetParam().Transport);
  ScopedEnv Timeout("CCLC_TIMEOUT_MS", "20000");
  broadcastStream(smallCallPlan("binomial-broadcast"), [](int) { return Count; });
}

/// The leaves of the binomial reduce to rank 0 (the upper half of the
/// ranks, which only send) make Ahead calls before the ranks they send to
/// make any, and the root's results are every call's.
TEST_P(SmallCallStreams, ReduceLeavesRunDozensOfCallsAheadOfTheRoot) {
  ScopedTransport Transport(GetParam().Transport);
  ScopedEnv Timeout("CCLC_TIMEOUT_MS", "20000");
  std::string Plan = smallCallPlan("binomial-reduce");
  const int NRanks = GetParam().NRanks;
  runJob(NRanks, [&](cclcComm_t Comm, int Rank) {
    ok(cclcCommLoadPlanText(Comm, Plan.data(), Plan.size()), "loading the windowed plan");
    const bool Leaf = Rank >= NRanks / 2;
    std::vector<float> In(Count), Out(Count);
    for (int Call = 0; Call < Calls; ++Call) {
      if (Leaf && Call == Ahead)
        Done->fetch_add(1);
      if (!Leaf && Call == 0)
        awaitSenders(NRanks / 2);
      std::iota(In.begin(), In.end(), float(Rank + Call));
      ok(cclcReduce(In.data(), Out.data(), Count, cclcFloat32, cclcSum, 0, Comm, nullptr),
         "reduce " + std::to_string(Call));
      // Sum over the ranks r of r + Call + I.
      const float Ranks = float(NRanks * (NRanks - 1) / 2);
      for (size_t I = 0; Rank == 0 && I < Count; ++I)
        expect(Out[I] == Ranks + float(NRanks) * (float(Call) + float(I)),
               "reduce " + std::to_string(Call) + " combined every rank's data");
    }
  });
}

/// Where waits yield, as where ranks share cores, a broadcast plan for
/// every size (whose own FIFOs keep 8 slots of 128 KiB) runs its calls up
/// to SmallCallBytes on FIFOs of small slots: the root makes Ahead calls of
/// 4 KiB before its receivers make any; then calls of 4 KiB and of 64 KiB
/// take turns, each kind on its own FIFOs, and every call delivers the
/// root's data.
TEST_P(SmallCallStreams, WhereWaitsYieldARootRunsAheadOnAPlanForEverySize) {
  ScopedTransport Transport(GetParam().Transport);
  ScopedEnv Timeout("CCLC_TIMEOUT_MS", "20000");
  ScopedEnv Yield("CCLC_WAIT_YIELD", "1");
  static_assert(Count * sizeof(float) == runtime::SmallCallBytes);
  broadcastStream(compilePlan("binomial-broadcast", GetParam().NRanks),
                  [](int Call) { return Call > Ahead && Call % 2 ? 16 * Count : Count; });
}

INSTANTIATE_TEST_SUITE_P(Shm, SmallCallStreams,
                         ::testing::Values(JobCase{2, "shm"}, JobCase{4, "shm"}), jobName);
INSTANTIATE_TEST_SUITE_P(Tcp, SmallCallStreams, ::testing::Values(JobCase{2, "tcp"}), jobName);

/// A program repeats its calls, and a repeat runs without being checked,
/// chosen or placed again; these calls change one thing between repeats.
class RepeatedCalls : public ::testing::TestWithParam<JobCase> {
protected:
  static constexpr int Repeats = 4;
  static constexpr size_t Count = 1001;
  /// What an allreduce of rank r's inputs r + Call + I gives at I.
  static float sumAt(int NRanks, int Call, size_t I) {
    return float(NRanks * (NRanks - 1) / 2) + float(NRanks) * (float(Call) + float(I));
  }
};

/// An input that overlaps the output without being it is copied aside
/// before the call writes the output, on every repeat: the copy of an
/// earlier call's input would give that call's sums again.
TEST_P(RepeatedCalls, AnOverlappingInputIsCopiedAsideOnEveryRepeat) {
  ScopedTransport Transport(GetParam().Transport);
  const int NRanks = GetParam().NRanks;
  runJob(NRanks, [&](cclcComm_t Comm, int Rank) {
    std::vector<float> Buffer(Count + 1);
    for (int Call = 0; Call < Repeats; ++Call) {
      std::iota(Buffer.begin(), Buffer.begin() + Count, float(Rank + Call));
      ok(cclcAllReduce(Buffer.data(), Buffer.data() + 1, Count, cclcFloat32, cclcSum, Comm,
                       nullptr),
         "allreduce " + std::to_string(Call));
      for (size_t I = 0; I < Count; ++I)
        expect(Buffer[I + 1] == sumAt(NRanks, Call, I),
               "allreduce " + std::to_string(Call) + " summed that call's inputs");
    }
  });
}

/// Repeats on other buffers, in place after out of place and back, and
/// without a send buffer where a broadcast's receivers need none, each give
/// their own call's results.
TEST_P(RepeatedCalls, RepeatsFollowTheirBuffers) {
  ScopedTransport Transport(GetParam().Transport);
  const int NRanks = GetParam().NRanks;
  runJob(NRanks, [&](cclcComm_t Comm, int Rank) {
    std::vector<float> A(Count), B(Count), C(Count);
    int Call = 0;
    auto AllReduce = [&](const float *Send, float *Recv) {
      ok(cclcAllReduce(Send, Recv, Count, cclcFloat32, cclcSum, Comm, nullptr),
         "allreduce " + std::to_string(Call));
      for (size_t I = 0; I < Count; ++I)
        expect(Recv[I] == sumAt(NRanks, Call, I),
               "allreduce " + std::to_string(Call) + " wrote its own output");
      ++Call;
    };
    for (int Repeat = 0; Repeat < Repeats; ++Repeat) {
      std::iota(A.begin(), A.end(), float(Rank + Call));
      AllReduce(A.data(), B.data());
      std::iota(A.begin(), A.end(), float(Rank + Call));
      AllReduce(A.data(), C.data());
      std::iota(A.begin(), A.end(), float(Rank + Call));
      AllReduce(A.data(), A.data());
    }
    for (int Repeat = 0; Repeat < Repeats; ++Repeat) {
      if (Rank == 0)
        std::iota(A.begin(), A.end(), float(Repeat));
      ok(cclcBroadcast(Rank == 0 ? A.data() : nullptr, A.data(), Count, cclcFloat32, 0, Comm,
                       nullptr),
         "broadcast " + std::to_string(Repeat));
      for (size_t I = 0; I < Count; ++I)
        expect(A[I] == float(Repeat) + float(I),
               "broadcast " + std::to_string(Repeat) + " delivered the root's data");
    }
  });
}

/// Repeats of calls that take one round, a few (which a repeat replays
/// from its trace of every round) and many (which it runs afresh), each
/// with new inputs, give their own call's sums; from cclcMemAlloc, a peer
/// reads large messages where they lie, and the trace's call returns only
/// once it has, before the next call's inputs overwrite them.
TEST_P(RepeatedCalls, RepeatsOfOneFewAndManyRoundsSumTheirOwnInputs) {
  ScopedTransport Transport(GetParam().Transport);
  const int NRanks = GetParam().NRanks;
  runJob(NRanks, [&](cclcComm_t Comm, int Rank) {
    for (size_t Elems : {Count, size_t(100003), size_t(1) << 20}) {
      TestBuffer<float> In(Elems), Out(Elems);
      for (int Call = 0; Call < Repeats; ++Call) {
        std::iota(In.begin(), In.end(), float(Rank + Call));
        ok(cclcAllReduce(In.data(), Out.data(), Elems, cclcFloat32, cclcSum, Comm, nullptr),
           "allreduce " + std::to_string(Call) + " of " + std::to_string(Elems));
        bool Summed = true;
        for (size_t I = 0; I < Elems && Summed; ++I)
          Summed = Out.data()[I] == sumAt(NRanks, Call, I);
        expect(Summed, "allreduce " + std::to_string(Call) + " of " + std::to_string(Elems) +
                           " summed that call's inputs");
      }
    }
  });
}

/// The log lines of this process: a rank's, since each runs in a process
/// of its own.
std::vector<std::string> &loggedLines() {
  static std::vector<std::string> Lines;
  return Lines;
}

/// A plan loaded after a stream of repeats on the library's ring serves the
/// next repeat, which the runtime logs as the first call the plan runs.
TEST_P(RepeatedCalls, APlanLoadedBetweenRepeatsServesTheNext) {
  ScopedTransport Transport(GetParam().Transport);
  ScopedEnv Debug("CCLC_DEBUG", "INFO");
  const int NRanks = GetParam().NRanks;
  std::string Plan = compilePlan("ring-allreduce", NRanks);
  ASSERT_FALSE(Plan.empty());
  runJob(NRanks, [&](cclcComm_t Comm, int Rank) {
    ok(cclcSetLogHandler([](const char *, int, const char *Message) {
         loggedLines().emplace_back(Message);
       }),
       "cclcSetLogHandler");
    std::vector<float> In(Count), Out(Count);
    for (int Call = 0; Call < 2 * Repeats; ++Call) {
      if (Call == Repeats)
        ok(cclcCommLoadPlanText(Comm, Plan.data(), Plan.size()), "loading ring-allreduce");
      std::iota(In.begin(), In.end(), float(Rank + Call));
      ok(cclcAllReduce(In.data(), Out.data(), Count, cclcFloat32, cclcSum, Comm, nullptr),
         "allreduce " + std::to_string(Call));
      for (size_t I = 0; I < Count; ++I)
        expect(Out[I] == sumAt(NRanks, Call, I), "allreduce " + std::to_string(Call));
    }
    ok(cclcSetLogHandler(nullptr), "restoring the log");
    expect(std::any_of(loggedLines().begin(), loggedLines().end(),
                       [](const std::string &Line) {
                         return Line.find("runs ring_allreduce (plan ") != std::string::npos;
                       }),
           "the loaded plan served a call");
  });
}

INSTANTIATE_TEST_SUITE_P(Shm, RepeatedCalls,
                         ::testing::Values(JobCase{2, "shm"}, JobCase{3, "shm"}), jobName);
INSTANTIATE_TEST_SUITE_P(Tcp, RepeatedCalls, ::testing::Values(JobCase{2, "tcp"}), jobName);
INSTANTIATE_TEST_SUITE_P(Mapped, RepeatedCalls,
                         ::testing::Values(JobCase{2, "shm_mapped"}, JobCase{3, "shm_mapped"}),
                         jobName);

TEST(LargeMessages, AllReduce64MiBOnFourRanks) {
  ScopedEnv Timeout("CCLC_TIMEOUT_MS", "30000");
  std::string Plan = compilePlan("ring-allreduce", 4);
  ASSERT_FALSE(Plan.empty());
  runJob(4, [&](cclcComm_t Comm, int Rank) {
    ok(cclcCommLoadPlanText(Comm, Plan.data(), Plan.size()), "loading ring-allreduce");
    perf::Call C{CollectiveKind::AllReduce, cclcFloat32, cclcSum, 0, size_t(16) << 20};
    std::vector<float> Send(C.Count), Recv(C.Count);
    perf::fillInput(C, Rank, 4, Send.data());
    ok(perf::invoke(C, Send.data(), Recv.data(), Comm), "allreduce of 64 MiB");
    size_t Wrong = perf::countWrong(C, Rank, 4, Recv.data());
    expect(Wrong == 0, std::to_string(Wrong) + " wrong elements");
  });
}

} // namespace
} // namespace cclc::test
