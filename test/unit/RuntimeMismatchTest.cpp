//===- RuntimeMismatchTest.cpp - Ranks that make different calls fail ----===//
//
// Every rank of a job must make the same collective calls in the same order.
// When one rank does not — it passes twice the count, another type,
// operator, root or collective, has loaded another plan of the same
// algorithm, or made a call the others did not — every rank's call fails:
// the ranks that receive a message of the other call return
// cclcInvalidUsage with a message naming both calls, the others stop with
// cclcRemoteError as for any peer's failure, none waits for its timeout, and
// none writes outside the call's buffers (checked with guard bytes around
// each). Only a rank that merely sends in its call, as a broadcast's root
// does, can finish it; its next call fails. The messages of these calls
// have the same size on every rank, so only the calls' stamps tell them
// apart.
//
//===----------------------------------------------------------------------===//

#include "RuntimeTestSupport.h"

#include "ring-allreduce.h"

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
/// How a rank's job ended: it found the other call and named both, or it
/// stopped because a peer did.
constexpr int NamedBoth = 10, Stopped = 11;

/// How the odd rank's call differs from the others'.
enum class Difference { Count, Type, Op, Root, Collective, Plan, SkippedCall, Kernel };

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

/// The call rank Rank makes in case K.
perf::Call callOf(const Case &K, int Rank) {
  perf::Call C;
  C.Count = Count;
  // A broadcast's root only sends, so its FIFOs must hold the whole call.
  if (K.What == Difference::Root) {
    C.Collective = CollectiveKind::Broadcast;
    C.Count = RootCount;
  }
  if (Rank != Odd)
    return C;
  switch (K.What) {
  case Difference::Count: C.Count = 2 * Count; break;
  case Difference::Type: C.Type = cclcInt32; break; // of f32's size
  case Difference::Op:
  case Difference::Kernel: C.Op = cclcMax; break;
  case Difference::Root: C.Root = 1; break;
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
    if (First != cclcSuccess) {
      expect(First == cclcRemoteError, std::string("the first allreduce returned ") +
                                           cclcGetErrorString(First) + ": " +
                                           cclcGetLastError(Comm));
      ok(cclcCommAbort(Comm), "cclcCommAbort");
      return Stopped;
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
    // "rank 1 called allreduce of 2 MiB (f32, sum) with ring_allreduce#... as
    // its call 2 where rank 2 called allreduce of 1 MiB (f32, sum) with ..."
    size_t Theirs = Why.find(" called ");
    size_t Mine = Why.find(" where rank " + std::to_string(Rank) + " called ");
    expect(Theirs != std::string::npos && Mine != std::string::npos && Theirs < Mine &&
               Why.find(" as its call ", Theirs) < Mine &&
               Why.find(" as its call ", Mine) != std::string::npos,
           "the error names both calls: " + Why);
    Outcome = NamedBoth;
  } else {
    expect(Result == cclcRemoteError,
           std::string("a stopped rank returned ") + cclcGetErrorString(Result) + ": " + Why);
  }
  cclcResult_t Again = perf::invoke(Common, In.data(), Out.data(), Comm);
  expect(Again == cclcInvalidUsage &&
             std::string(cclcGetLastError(Comm)).find("destroy it") != std::string::npos,
         std::string("a failed communicator takes another call: ") + cclcGetLastError(Comm));
  ok(cclcCommAbort(Comm), "cclcCommAbort");
  return Outcome;
}

class Mismatch : public ::testing::TestWithParam<std::tuple<const char *, Case>> {};

TEST_P(Mismatch, FailsEveryRankAndWritesNothingOutsideTheBuffers) {
  auto [Transport, K] = GetParam();
  constexpr milliseconds Timeout(10000), Soon(5000);
  ScopedTransport TransportEnv(Transport);
  ScopedEnv TimeoutEnv("CCLC_TIMEOUT_MS", std::to_string(Timeout.count()));
  // The ring, and the ring with twice the chunks: one name, another schedule.
  std::string Ring, Finer;
  if (K.What == Difference::Plan) {
    Ring = compilePlan("ring-allreduce", K.NRanks);
    Finer = compilePlan("ring-allreduce", K.NRanks, {.ChunksFactor = 2});
    ASSERT_FALSE(Ring.empty() || Finer.empty());
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
        if (K.What == Difference::Kernel)
          ok(cclcCommRegisterKernels(Comm, gen::ring_allreduce_kernels,
                                     std::size(gen::ring_allreduce_kernels)),
             "registering the ring's kernels");
        return runMismatched(Comm, K, Rank, Soon);
      },
      std::chrono::seconds(60));
  int Named = 0;
  for (int Rank = 0; Rank < K.NRanks; ++Rank) {
    std::string Got = perf::describeStatus(Status[size_t(Rank)]);
    Named += Got == "exited with " + std::to_string(NamedBoth);
    EXPECT_TRUE(Got == "exited with " + std::to_string(NamedBoth) ||
                Got == "exited with " + std::to_string(Stopped))
        << "rank " << Rank << " " << Got;
  }
  // The first failure is always a rank that received the other call.
  EXPECT_GE(Named, 1);
}

std::string caseName(const ::testing::TestParamInfo<Mismatch::ParamType> &Info) {
  auto [Transport, K] = Info.param;
  return std::string(Transport) + K.Name + std::to_string(K.NRanks) + "Ranks";
}

INSTANTIATE_TEST_SUITE_P(Transports, Mismatch,
                         ::testing::Combine(::testing::Values("shm", "shm_single_copy", "tcp"),
                                            ::testing::ValuesIn(Cases)),
                         caseName);

} // namespace
} // namespace cclc::test
