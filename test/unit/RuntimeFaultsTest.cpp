//===- RuntimeFaultsTest.cpp - Failures end collectives, never hang them --===//
//
// A rank that dies mid-collective makes every other rank's call return an
// error within the timeout (at once where the transport notices, or after
// the timeout where only silence tells); a rank that aborts stops its peers
// at once. Either way the failed communicators refuse further calls, saying
// to destroy them.
//
//===----------------------------------------------------------------------===//

#include "RuntimeTestSupport.h"

#include <sys/wait.h>
#include <algorithm>
#include <functional>
#include <thread>

namespace cclc::test {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

/// Checks, on a rank whose peer failed, that Result is an error that says
/// so, and that the communicator now refuses calls; then aborts it.
template <class Floats>
void expectFailed(cclcComm_t Comm, cclcResult_t Result, Floats &Buffer) {
  expect(Result == cclcRemoteError || Result == cclcTimeout,
         std::string("the failing call returned ") + cclcGetErrorString(Result));
  std::string Why = cclcGetLastError(Comm);
  expect(Why.find("failed on rank") != std::string::npos, "the error says where: " + Why);
  cclcResult_t Again = cclcAllReduce(Buffer.data(), Buffer.data(), Buffer.size(), cclcFloat32,
                                     cclcSum, Comm, nullptr);
  expect(Again == cclcInvalidUsage, "a failed communicator takes another call");
  expect(std::string(cclcGetLastError(Comm)).find("destroy it") != std::string::npos,
         std::string("the refusal says what to do: ") + cclcGetLastError(Comm));
  ok(cclcCommAbort(Comm), "cclcCommAbort");
}

class Faults : public ::testing::TestWithParam<const char *> {};

/// A collective of the test's: Count floats of Send per rank into Recv.
using Collective = std::function<cclcResult_t(const TestBuffer<float> &Send,
                                              TestBuffer<float> &Recv, cclcComm_t Comm)>;

/// Runs Call on 4 ranks of Transport until rank 2 is killed, and checks that
/// every other rank's call fails within the timeout, that its communicator
/// refuses more, and that nothing writes its output after the call returned
/// (a receiver offers its output for peers to write straight into, and
/// withdraws the offer when the call fails).
void killMidCollective(const char *TransportName, int RecvPerSend, const Collective &Call,
                       size_t Count = 1 << 20) {
  constexpr int NRanks = 4, Victim = 2;
  constexpr milliseconds Timeout(1500), KillAfter(30), Slack(2500), Settle(200);
  ScopedTransport Transport(TransportName);
  ScopedEnv TimeoutEnv("CCLC_TIMEOUT_MS", std::to_string(Timeout.count()));
  std::vector<int> Status = perf::runLocalRanks(
      NRanks,
      [&](int Rank, const cclcUniqueId &Id) {
        cclcComm_t Comm = nullptr;
        ok(cclcCommInitRank(&Comm, NRanks, Id, Rank), "cclcCommInitRank");
        TestBuffer<float> Send(Count, 1.0f), Recv(Send.size() * RecvPerSend);
        auto Once = [&] { return Call(Send, Recv, Comm); };
        ok(Once(), "the first call");
        cclcResult_t Result = callUntilPeerDies(Rank, Victim, KillAfter, Timeout + Slack, Once);
        std::fill(Recv.begin(), Recv.end(), -7.0f);
        std::this_thread::sleep_for(Settle);
        expect(std::all_of(Recv.begin(), Recv.end(), [](float X) { return X == -7.0f; }),
               "the output is left alone once the failed call returned");
        expectFailed(Comm, Result, Recv);
        return 0;
      },
      std::chrono::seconds(30));
  for (int Rank = 0; Rank < NRanks; ++Rank) {
    std::string Want = Rank == Victim ? "killed by signal 9" : "exited with 0";
    EXPECT_EQ(perf::describeStatus(Status[size_t(Rank)]).substr(0, Want.size()), Want)
        << "rank " << Rank;
  }
}

TEST_P(Faults, ARankKilledMidAllReduceFailsEveryOtherRankWithinTheTimeout) {
  killMidCollective(GetParam(), 1, [](const auto &Send, auto &Recv, cclcComm_t Comm) {
    return cclcAllReduce(Send.data(), Recv.data(), Send.size(), cclcFloat32, cclcSum, Comm,
                         nullptr);
  });
}

/// Small calls repeat, and a repeat runs its trace (host/Trace.h): a peer
/// killed in the stream of them fails the others as it fails a large call.
TEST_P(Faults, ARankKilledMidAStreamOfSmallAllReducesFailsEveryOtherRankWithinTheTimeout) {
  killMidCollective(
      GetParam(), 1,
      [](const auto &Send, auto &Recv, cclcComm_t Comm) {
        return cclcAllReduce(Send.data(), Recv.data(), Send.size(), cclcFloat32, cclcSum, Comm,
                             nullptr);
      },
      1001);
}

/// The ring allgather sends its own block while it offers the buffer of the
/// block it receives next.
TEST_P(Faults, ARankKilledMidAllGatherFailsEveryOtherRankWithinTheTimeout) {
  killMidCollective(GetParam(), 4, [](const auto &Send, auto &Recv, cclcComm_t Comm) {
    return cclcAllGather(Send.data(), Recv.data(), Send.size(), cclcFloat32, Comm, nullptr);
  });
}

TEST_P(Faults, AbortFromAnotherThreadStopsTheCallAndThePeersAtOnce) {
  constexpr milliseconds Timeout(20000), AbortAfter(100), Soon(5000);
  ScopedTransport Transport(GetParam());
  ScopedEnv TimeoutEnv("CCLC_TIMEOUT_MS", std::to_string(Timeout.count()));
  runJob(2, [&](cclcComm_t Control, int Rank) {
    // A communicator of its own: the abort frees it.
    cclcComm_t Comm = newComm(Control);
    std::vector<float> Buffer(1000, 1.0f);
    ok(cclcAllReduce(Buffer.data(), Buffer.data(), Buffer.size(), cclcFloat32, cclcSum, Comm,
                     nullptr),
       "the first allreduce");
    Clock::time_point Start = Clock::now();
    if (Rank == 0) {
      // Rank 1 does not join this call: it waits until a thread aborts it.
      std::thread Aborter([&] {
        std::this_thread::sleep_for(AbortAfter);
        ok(cclcCommAbort(Comm), "cclcCommAbort");
      });
      cclcResult_t Result = cclcAllReduce(Buffer.data(), Buffer.data(), Buffer.size(), cclcFloat32,
                                          cclcSum, Comm, nullptr);
      Aborter.join();
      expect(Result == cclcRemoteError,
             std::string("the aborted call returned ") + cclcGetErrorString(Result));
    } else {
      std::this_thread::sleep_for(AbortAfter * 5);
      cclcResult_t Result = cclcAllReduce(Buffer.data(), Buffer.data(), Buffer.size(), cclcFloat32,
                                          cclcSum, Comm, nullptr);
      expectFailed(Comm, Result, Buffer);
    }
    auto Took = Clock::now() - Start;
    expect(Took < Soon, "stopping took " +
                            std::to_string(std::chrono::duration_cast<milliseconds>(Took).count()) +
                            " ms");
  });
}

INSTANTIATE_TEST_SUITE_P(Transports, Faults,
                         ::testing::Values("shm", "shm_single_copy", "shm_mapped", "tcp"),
                         [](const auto &Info) { return std::string(Info.param); });

} // namespace
} // namespace cclc::test
