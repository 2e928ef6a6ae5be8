//===- RuntimeMismatchTest.cpp - Ranks that make different calls fail ----===//
//
// Every rank of a job must make the same collective calls in the same order.
// When one rank does not — it passes twice the count, another type,
// operator, root or collective, has loaded another plan of the same
// algorithm, or made a call the others did not — every rank's call fails:
// the ranks that find the other call return cclcInvalidUsage with a message
// naming both calls, the others stop with cclcRemoteError as for any peer's
// failure, none waits for its timeout, and none writes outside the call's
// buffers (checked with guard bytes around each). Over shared memory the
// stopped ranks learn the cause from the rank that aborted, so their
// messages name both calls too. Only a rank that merely sends in its call,
// as a broadcast's root does, can finish it; its next call fails. The
// messages of these calls have the same size on every rank, so only the
// calls' stamps tell them apart.
//
// Some mismatched calls exchange no message at all: two ranks that disagree
// on a reduction's root both wait to receive, and a call that runs on other
// connections sends where nobody reads. Over shared memory a stalled wait
// reads which call its peer makes (the call board), so these fail as soon
// as the waits outlast their patience; over TCP they end at the timeout.
//
//===----------------------------------------------------------------------===//

#include "RuntimeTestSupport.h"

#include "ring-allreduce.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <optional>

namespace cclc::test {
namespace {

using Clock = std::chrono::steady_clock;
using plan::CollectiveKind;
using std::chrono::milliseconds;

/// Elements per rank: 1 MiB of f32, so that every message fills a slot.
constexpr size_t Count = 256 * 1024;
/// Elements per rank of the broadcasts: one message.
constexpr size_t RootCount = 1024;
/// The rank whose call differs.
constexpr int Odd = 1;
/// Bytes before and after each buffer that no call may change.
constexpr size_t GuardBytes = 4096;
constexpr std::byte GuardByte{0xa5};
/// How a rank's job ended: it found the other call and named both, it
/// stopped because a peer did and named both calls as the cause, or it
/// stopped without.
constexpr int NamedBoth = 10, StoppedNamingBoth = 11, Stopped = 12;

/// How the odd rank's call differs from the others'. The last three
/// exchange no message of the other call: ranks that disagree on a
/// reduction's root both wait to receive (on the fallback ring, or each on
/// a plan of its own whose connections are not the first between them), and
/// an allgather on the ring sends where the others, whose allreduce runs on
/// the butterfly, do not read.
enum class Difference {
  Count,
  Type,
  Op,
  Root,
  Collective,
  Plan,
  SkippedCall,
  Kernel,
  ReduceRoot,
  PlannedReduceRoot,
  Connections,
};

struct Case {
  const char *Name;
  Difference What;
  int NRanks;
};

const Case Cases[] = {
    {"Count", Difference::Count, 2},
    {"Type", Difference::Type, 3},
    {"Op", Difference::Op, 4},
    {"Root", Difference::Root, 2},
    {"Collective", Difference::Collective, 8},
    {"Plan", Difference::Plan, 4},
    {"SkippedCall", Difference::SkippedCall, 5},
    {"Kernel", Difference::Kernel, 4},
};

/// Calls that only the call board tells apart.
const Case SilentCases[] = {
    {"ReduceRoot", Difference::ReduceRoot, 2},
    {"ReduceRoot", Difference::ReduceRoot, 3},
    {"PlannedReduceRoot", Difference::PlannedReduceRoot, 2},
    {"Connections", Difference::Connections, 4},
};

/// The call rank Rank makes in case K.
perf::Call callOf(const Case &K, int Rank) {
  perf::Call C;
  C.Count = Count;
  // A broadcast's root only sends, so its FIFOs must hold the whole call.
  if (K.What == Difference::Root) {
    C.Collective = CollectiveKind::Broadcast;
    C.Count = RootCount;
  }
  if (K.What == Difference::ReduceRoot || K.What == Difference::PlannedReduceRoot)
    C.Collective = CollectiveKind::Reduce;
  if (Rank != Odd)
    return C;
  switch (K.What) {
  case Difference::Count: C.Count = 2 * Count; break;
  case Difference::Type: C.Type = cclcInt32; break; // of f32's size
  case Difference::Op:
  case Difference::Kernel: C.Op = cclcMax; break;
  case Difference::Root:
  case Difference::ReduceRoot:
  case Difference::PlannedReduceRoot: C.Root = 1; break;
  case Difference::Connections: C.Collective = CollectiveKind::AllGather; break;
  case Difference::Collective: C.Collective = CollectiveKind::AllGather; break;
  case Difference::Plan:
  case Difference::SkippedCall: break;
  }
  return C;
}

/// A buffer of Bytes with guard bytes on either side.
class Guarded {
public:
  explicit Guarded(size_t Bytes) : Memory(GuardBytes + Bytes + GuardBytes, GuardByte) {}
  std::byte *data() { return Memory.data() + GuardBytes; }
  bool guardsIntact() const {
    auto Intact = [](auto Begin, auto End) {
      return std::all_of(Begin, End, [](std::byte B) { return B == GuardByte; });
    };
    return Intact(Memory.begin(), Memory.begin() + GuardBytes) &&
           Intact(Memory.end() - GuardBytes, Memory.end());
  }

private:
  std::vector<std::byte> Memory;
};

/// Whether Why names two calls: "rank 1 called allreduce of 2 MiB (f32, sum)
/// with ring_allreduce#... as its call 2 where rank 2 called allreduce of 1
/// MiB (f32, sum) with ...", the second rank's name starting with Second.
bool namesBothCalls(const std::string &Why, const std::string &Second) {
  size_t Theirs = Why.find(" called ");
  size_t Other = Why.find(" where rank " + Second, Theirs);
  return Theirs != std::string::npos && Other != std::string::npos &&
         Why.find(" as its call ", Theirs) < Other &&
         Why.find(" as its call ", Other) != std::string::npos;
}

/// Makes rank Rank's call of case K on Comm, after the job's common first
/// call, and checks how it fails; returns NamedBoth or Stopped.
int runMismatched(cclcComm_t Comm, const Case &K, int Rank, milliseconds Soon) {
  // A first call all ranks agree on connects the ring that every later call
  // shares, and makes the mismatched call the second; with different plans
  // no call agrees. A rank still finishing it when a peer that went ahead
  // aborts (over TCP, messages not yet sent are dropped) is stopped there.
  perf::Call Common;
  Common.Count = Count;
  perf::Extents CE = perf::extents(Common, K.NRanks);
  std::vector<float> In(CE.Send, 1.0f), Out(CE.Recv);
  if (K.What != Difference::Plan) {
    cclcResult_t First = perf::invoke(Common, In.data(), Out.data(), Comm);
    // The allreduce ran on the butterfly; the allgather connects the ring
    // apart from it.
    if (K.What == Difference::Connections && First == cclcSuccess) {
      perf::Call Ring{.Collective = CollectiveKind::AllGather, .Count = Count};
      perf::Extents RE = perf::extents(Ring, K.NRanks);
      std::vector<float> RIn(RE.Send, 1.0f), ROut(RE.Recv);
      First = perf::invoke(Ring, RIn.data(), ROut.data(), Comm);
    }
    if (First != cclcSuccess) {
      std::string Why = cclcGetLastError(Comm);
      expect(First == cclcRemoteError,
             std::string("the first allreduce returned ") + cclcGetErrorString(First) + ": " + Why);
      ok(cclcCommAbort(Comm), "cclcCommAbort");
      return namesBothCalls(Why, "") ? StoppedNamingBoth : Stopped;
    }
  }
  if (K.What == Difference::SkippedCall && Rank == Odd)
    ok(perf::invoke({.Count = 0}, In.data(), Out.data(), Comm), "an allreduce of 0 elements");

  perf::Call C = callOf(K, Rank);
  perf::Extents E = perf::extents(C, K.NRanks);
  Guarded Send(E.Send * sizeof(float)), Recv(E.Recv * sizeof(float));
  perf::fillInput(C, Rank, K.NRanks, Send.data());
  Clock::time_point Start = Clock::now();
  cclcResult_t Result = perf::invoke(C, Send.data(), Recv.data(), Comm);
  if (Result == cclcSuccess) {
    // A rank that only sends in its call (a broadcast's root, in its view)
    // may finish before a peer reads its messages; its next call fails.
    expect(K.What == Difference::Root, "the mismatched call succeeded");
    Result = perf::invoke(Common, In.data(), Out.data(), Comm);
  }
  auto Took = std::chrono::duration_cast<milliseconds>(Clock::now() - Start);
  std::string Why = cclcGetLastError(Comm);
  expect(Result != cclcSuccess, "the call after the mismatched one succeeded");
  expect(Took < Soon, "the error came after " + std::to_string(Took.count()) + " ms: " + Why);
  expect(Send.guardsIntact() && Recv.guardsIntact(), "the call wrote outside its buffers");
  expect(Why.find("failed on rank " + std::to_string(Rank)) != std::string::npos,
         "the error says where: " + Why);
  int Outcome = Stopped;
  if (Result == cclcInvalidUsage) {
    expect(namesBothCalls(Why, std::to_string(Rank) + " called "),
           "the error names both calls: " + Why);
    Outcome = NamedBoth;
  } else {
    expect(Result == cclcRemoteError,
           std::string("a stopped rank returned ") + cclcGetErrorString(Result) + ": " + Why);
    if (namesBothCalls(Why, ""))
      Outcome = StoppedNamingBoth;
  }
  cclcResult_t Again = perf::invoke(Common, In.data(), Out.data(), Comm);
  expect(Again == cclcInvalidUsage &&
             std::string(cclcGetLastError(Comm)).find("destroy it") != std::string::npos,
         std::string("a failed communicator takes another call: ") + cclcGetLastError(Comm));
  ok(cclcCommAbort(Comm), "cclcCommAbort");
  return Outcome;
}

class Mismatch : public ::testing::TestWithParam<std::tuple<const char *, Case>> {};

/// Runs case K over Transport; returns each rank's outcome.
std::vector<int> runCase(const char *Transport, const Case &K) {
  constexpr milliseconds Timeout(10000), Soon(5000);
  ScopedTransport TransportEnv(Transport);
  ScopedEnv TimeoutEnv("CCLC_TIMEOUT_MS", std::to_string(Timeout.count()));
  // The ring, and the ring with twice the chunks: one name, another schedule.
  std::string Ring, Finer, Butterfly;
  if (K.What == Difference::Connections)
    Butterfly = compilePlan("butterfly-allreduce", K.NRanks);
  // The ring connects both ways first, so the ranks' call boards are its;
  // then a binomial reduce to each root, with more slots than the ring's
  // so that each has connections of its own, where the two ranks wait.
  std::vector<std::string> Planned;
  if (K.What == Difference::PlannedReduceRoot) {
    Planned.push_back(compilePlan("ring-allreduce", K.NRanks));
    for (int Root : {0, 1}) {
      nlohmann::json Reduce =
          nlohmann::json::parse(compilePlan("binomial-reduce", K.NRanks, {.Root = Root}));
      Reduce["buffer_slots"] = 16;
      Planned.push_back(Reduce.dump());
    }
  }
  if (K.What == Difference::Plan) {
    Ring = compilePlan("ring-allreduce", K.NRanks);
    Finer = compilePlan("ring-allreduce", K.NRanks, {.ChunksFactor = 2});
    EXPECT_FALSE(Ring.empty() || Finer.empty());
    if (Ring.empty() || Finer.empty())
      return {};
  }
  std::vector<int> Status = perf::runLocalRanks(
      K.NRanks,
      [&](int Rank, const cclcUniqueId &Id) {
        cclcComm_t Comm = nullptr;
        ok(cclcCommInitRank(&Comm, K.NRanks, Id, Rank), "cclcCommInitRank");
        if (K.What == Difference::Plan) {
          const std::string &Plan = Rank == Odd ? Finer : Ring;
          ok(cclcCommLoadPlanText(Comm, Plan.data(), Plan.size()), "loading the plan");
        }
        if (K.What == Difference::Connections)
          ok(cclcCommLoadPlanText(Comm, Butterfly.data(), Butterfly.size()),
             "loading the butterfly");
        for (const std::string &Plan : Planned)
          ok(cclcCommLoadPlanText(Comm, Plan.data(), Plan.size()), "loading a plan");
        if (K.What == Difference::Kernel)
          ok(cclcCommRegisterKernels(Comm, gen::ring_allreduce_kernels,
                                     std::size(gen::ring_allreduce_kernels)),
             "registering the ring's kernels");
        return runMismatched(Comm, K, Rank, Soon);
      },
      std::chrono::seconds(60));
  std::vector<int> Outcomes;
  for (int Rank = 0; Rank < K.NRanks; ++Rank) {
    std::string Got = perf::describeStatus(Status[size_t(Rank)]);
    int Outcome = -1;
    for (int Known : {NamedBoth, StoppedNamingBoth, Stopped})
      if (Got == "exited with " + std::to_string(Known))
        Outcome = Known;
    EXPECT_NE(Outcome, -1) << "rank " << Rank << " " << Got;
    Outcomes.push_back(Outcome);
  }
  return Outcomes;
}

/// Expects every rank to name both calls: the rank that found the mismatch,
/// and those stopped by its abort, which learn its cause from the call
/// board (shared memory) or an abort frame (TCP).
void expectNamed(const std::vector<int> &Outcomes) {
  int Found = 0;
  for (size_t Rank = 0; Rank < Outcomes.size(); ++Rank) {
    Found += Outcomes[Rank] == NamedBoth;
    EXPECT_NE(Outcomes[Rank], Stopped) << "rank " << Rank << " did not name both calls";
  }
  // The first failure is always a rank that found the other call.
  EXPECT_GE(Found, 1);
}

TEST_P(Mismatch, FailsEveryRankAndWritesNothingOutsideTheBuffers) {
  auto [Transport, K] = GetParam();
  expectNamed(runCase(Transport, K));
}

std::string caseName(const ::testing::TestParamInfo<Mismatch::ParamType> &Info) {
  auto [Transport, K] = Info.param;
  return std::string(Transport) + K.Name + std::to_string(K.NRanks) + "Ranks";
}

INSTANTIATE_TEST_SUITE_P(Transports, Mismatch,
                         ::testing::Combine(::testing::Values("shm", "shm_single_copy", "tcp"),
                                            ::testing::ValuesIn(Cases)),
                         caseName);

/// Calls that exchange no message of the other call: the call board finds them.
using SilentMismatch = Mismatch;

TEST_P(SilentMismatch, FailsEveryRankBeforeTheTimeout) {
  auto [Transport, K] = GetParam();
  expectNamed(runCase(Transport, K));
}

INSTANTIATE_TEST_SUITE_P(SharedMemory, SilentMismatch,
                         ::testing::Combine(::testing::Values("shm", "shm_single_copy"),
                                            ::testing::ValuesIn(SilentCases)),
                         caseName);

} // namespace
} // namespace cclc::test
