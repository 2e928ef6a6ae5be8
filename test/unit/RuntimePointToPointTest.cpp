//===- RuntimePointToPointTest.cpp - Sends, receives, groups, alltoall ----===//
//
// cclcSend, cclcRecv, groups and cclcAllToAll on forked ranks, over shared
// memory on 2 to 8 ranks and over TCP: messages of 0 and 1 elements, odd
// sizes, exactly one slot, several slots and more than the whole FIFO, of
// every type, alone and in groups; a group in which every rank sends to and
// receives from every rank, itself included, two messages of its own size
// per pair, issued in another order than the peers issue theirs; alltoall
// out of place and in place. Every byte is checked, and the bytes after
// every receive buffer must stay as they were.
//
// A receive of another size than its send fails both ranks at once, saying
// both sizes; a peer that dies mid-transfer fails the other within the
// timeout; both leave the communicator refusing calls. Misuses (a bad peer,
// buffer, type or stream, cclcGroupEnd without cclcGroupStart, a collective
// or a refused call in a group, unmatched sends to oneself) are refused with
// what to do, and leave the communicator working.
//
//===----------------------------------------------------------------------===//

#include "RuntimeTestSupport.h"

#include "runtime/api/Types.h"

namespace cclc::test {
namespace {

using Clock = std::chrono::steady_clock;
using plan::CollectiveKind;
using std::chrono::milliseconds;

constexpr cclcDataType_t AllTypes[] = {cclcInt8,    cclcUint8,   cclcInt32,   cclcUint32,
                                       cclcInt64,   cclcUint64,  cclcFloat16, cclcFloat32,
                                       cclcFloat64, cclcBfloat16};
/// The runtime's FIFOs: 8 slots of 128 KiB (net::LinkOptions).
constexpr size_t SlotBytes = size_t(1) << 17, FifoBytes = 8 * SlotBytes;
/// Bytes after every receive buffer that no call may write.
constexpr size_t GuardBytes = 64;
constexpr std::byte Untouched{0xee};

size_t typeBytes(cclcDataType_t Type) { return plan::dtypeBytes(runtime::hostType(Type)); }

/// Byte I of message Seq from rank From to rank To.
std::byte patternByte(int From, int To, int Seq, size_t I) {
  return std::byte(uint8_t(I * 7 + size_t(From) * 31 + size_t(To) * 13 + size_t(Seq) * 5 + 1));
}

std::vector<std::byte> message(int From, int To, int Seq, size_t Bytes) {
  std::vector<std::byte> Data(Bytes);
  for (size_t I = 0; I < Bytes; ++I)
    Data[I] = patternByte(From, To, Seq, I);
  return Data;
}

/// A receive buffer of Bytes, followed by GuardBytes, all Untouched.
std::vector<std::byte> receiveBuffer(size_t Bytes) {
  return std::vector<std::byte>(Bytes + GuardBytes, Untouched);
}

/// Throws unless Got holds message Seq from From to To, of its size less
/// the guard, and the guard is untouched.
void expectMessage(const std::vector<std::byte> &Got, int From, int To, int Seq,
                   const std::string &What) {
  size_t Bytes = Got.size() - GuardBytes;
  for (size_t I = 0; I < Got.size(); ++I)
    if (Got[I] != (I < Bytes ? patternByte(From, To, Seq, I) : Untouched))
      throw std::runtime_error(What + ": byte " + std::to_string(I) + " of " +
                               std::to_string(Bytes) + " from rank " + std::to_string(From) +
                               " to rank " + std::to_string(To) + " is wrong");
}

struct JobCase {
  int NRanks;
  const char *Transport;
};

std::string jobName(const ::testing::TestParamInfo<JobCase> &Info) {
  return std::to_string(Info.param.NRanks) + "Ranks";
}

class PointToPoint : public ::testing::TestWithParam<JobCase> {
protected:
  /// Runs Body on a job of the case's ranks and transport.
  void run(const JobBody &Body) {
    ScopedEnv Transport("CCLC_TRANSPORT", GetParam().Transport);
    ScopedEnv Timeout("CCLC_TIMEOUT_MS", "20000");
    runJob(GetParam().NRanks, Body, std::chrono::seconds(60));
  }
};

/// Rank Rank sends Count elements of Type to the next rank and receives as
/// many from the previous one, in one group; checks what arrived.
void ringExchange(cclcComm_t Comm, int Rank, int NRanks, cclcDataType_t Type, size_t Count,
                  int Seq) {
  int Next = (Rank + 1) % NRanks, Prev = (Rank + NRanks - 1) % NRanks;
  size_t Bytes = Count * typeBytes(Type);
  std::vector<std::byte> Send = message(Rank, Next, Seq, Bytes), Recv = receiveBuffer(Bytes);
  std::string What = "ring exchange of " + std::to_string(Count) + " elements of type " +
                     std::to_string(int(Type));
  ok(cclcGroupStart(), "cclcGroupStart");
  ok(cclcSend(Send.data(), Count, Type, Next, Comm, nullptr), What + ": cclcSend");
  ok(cclcRecv(Recv.data(), Count, Type, Prev, Comm, nullptr), What + ": cclcRecv");
  ok(cclcGroupEnd(), What);
  expectMessage(Recv, Prev, Rank, Seq, What);
}

TEST_P(PointToPoint, MessagesOfEverySizeAndTypeArriveWhole) {
  run([](cclcComm_t Comm, int Rank) {
    int NRanks = 0;
    ok(cclcCommCount(Comm, &NRanks), "cclcCommCount");
    int Seq = 0;
    for (cclcDataType_t Type : AllTypes)
      for (size_t Count : {size_t(0), size_t(1), size_t(1001)})
        ringExchange(Comm, Rank, NRanks, Type, Count, Seq++);
    // Exactly one slot, several slots and an odd tail, more than the FIFO.
    for (cclcDataType_t Type : {cclcInt8, cclcFloat64})
      for (size_t Bytes : {SlotBytes, 5 * SlotBytes + 24, 3 * FifoBytes})
        ringExchange(Comm, Rank, NRanks, Type, Bytes / typeBytes(Type), Seq++);

    // Alone, between pairs that are not ring neighbours (where there are
    // such), so that only some ranks connect: a send of more than the FIFO
    // returns once its receive has taken the rest.
    int Partner = Rank ^ 2;
    if (Partner < NRanks)
      for (size_t Bytes : {size_t(1), 3 * FifoBytes}) {
        std::vector<std::byte> Send = message(Rank, Partner, Seq, Bytes),
                               Recv = receiveBuffer(Bytes);
        std::string What = "a lone send and receive of " + std::to_string(Bytes) + " bytes";
        auto SendIt = [&] {
          ok(cclcSend(Send.data(), Bytes, cclcUint8, Partner, Comm, nullptr), What + ": cclcSend");
        };
        auto RecvIt = [&] {
          ok(cclcRecv(Recv.data(), Bytes, cclcUint8, Partner, Comm, nullptr), What + ": cclcRecv");
        };
        if (Rank < Partner) {
          SendIt();
          RecvIt();
        } else {
          RecvIt();
          SendIt();
        }
        expectMessage(Recv, Partner, Rank, Seq, What);
      }
    // Collective setups still agree after pair setups that only some ranks
    // made.
    runChecked(Comm, {CollectiveKind::AllReduce, cclcFloat32, cclcSum, 0, 1001}, Rank, NRanks);
  });
}

TEST_P(PointToPoint, EveryRankExchangesWithEveryRankInOneGroup) {
  // Sizes differ per pair and per message, 0 among them.
  auto Size = [](int From, int To, int Seq) {
    return size_t((From * 131 + To * 31 + Seq * 7) % 13) * 30011;
  };
  run([&](cclcComm_t Comm, int Rank) {
    int NRanks = 0;
    ok(cclcCommCount(Comm, &NRanks), "cclcCommCount");
    std::vector<std::vector<std::byte>> Sends, Recvs;
    ok(cclcGroupStart(), "cclcGroupStart");
    // Receives first, from the last rank down; sends after, from rank 0 up:
    // another order than each peer issues its own.
    for (int Peer = NRanks - 1; Peer >= 0; --Peer)
      for (int Seq = 0; Seq < 2; ++Seq) {
        std::vector<std::byte> &R = Recvs.emplace_back(receiveBuffer(Size(Peer, Rank, Seq)));
        ok(cclcRecv(R.data(), R.size() - GuardBytes, cclcUint8, Peer, Comm, nullptr), "cclcRecv");
      }
    for (int Peer = 0; Peer < NRanks; ++Peer)
      for (int Seq = 0; Seq < 2; ++Seq) {
        std::vector<std::byte> &S =
            Sends.emplace_back(message(Rank, Peer, Seq, Size(Rank, Peer, Seq)));
        ok(cclcSend(S.data(), S.size(), cclcUint8, Peer, Comm, nullptr), "cclcSend");
      }
    ok(cclcGroupEnd(), "the group of every pair");
    size_t I = 0;
    for (int Peer = NRanks - 1; Peer >= 0; --Peer)
      for (int Seq = 0; Seq < 2; ++Seq)
        expectMessage(Recvs[I++], Peer, Rank, Seq, "message " + std::to_string(Seq));
  });
}

TEST_P(PointToPoint, AllToAllOutOfPlaceAndInPlace) {
  run([](cclcComm_t Comm, int Rank) {
    int NRanks = 0;
    ok(cclcCommCount(Comm, &NRanks), "cclcCommCount");
    for (cclcDataType_t Type : {cclcFloat32, cclcInt8, cclcFloat64})
      for (size_t Count : {size_t(0), size_t(1), size_t(1001), size_t(70001)})
        runChecked(Comm, {CollectiveKind::AllToAll, Type, cclcSum, 0, Count}, Rank, NRanks);
  });
}

INSTANTIATE_TEST_SUITE_P(Shm, PointToPoint,
                         ::testing::Values(JobCase{2, "shm"}, JobCase{3, "shm"}, JobCase{4, "shm"},
                                           JobCase{5, "shm"}, JobCase{8, "shm"}),
                         jobName);
INSTANTIATE_TEST_SUITE_P(Tcp, PointToPoint, ::testing::Values(JobCase{3, "tcp"}), jobName);

/// Checks, on a rank whose call failed, that Result is an error whose
/// message holds Says (cclcInvalidUsage where the rank FoundMismatch, a
/// receive of another size), and that the communicator now refuses calls;
/// then aborts it.
void expectFailed(cclcComm_t Comm, cclcResult_t Result, const std::string &Says,
                  bool FoundMismatch = false) {
  expect(FoundMismatch ? Result == cclcInvalidUsage
                       : Result == cclcRemoteError || Result == cclcTimeout,
         std::string("the failing call returned ") + cclcGetErrorString(Result));
  std::string Why = cclcGetLastError(Comm);
  expect(Why.find(Says) != std::string::npos, "the error says '" + Says + "': " + Why);
  uint8_t Byte = 0;
  cclcResult_t Again = cclcSend(&Byte, 1, cclcUint8, 0, Comm, nullptr);
  expect(Again == cclcInvalidUsage, "a failed communicator takes another call");
  expect(std::string(cclcGetLastError(Comm)).find("destroy it") != std::string::npos,
         std::string("the refusal says what to do: ") + cclcGetLastError(Comm));
  ok(cclcCommAbort(Comm), "cclcCommAbort");
}

class Failures : public ::testing::TestWithParam<const char *> {};

TEST_P(Failures, AReceiveOfAnotherSizeFailsBothRanksAtOnce) {
  constexpr milliseconds Timeout(10000), Soon(3000);
  ScopedEnv Transport("CCLC_TRANSPORT", GetParam());
  ScopedEnv TimeoutEnv("CCLC_TIMEOUT_MS", std::to_string(Timeout.count()));
  // More than the FIFO holds: the sender still waits when the receiver
  // finds that the sizes differ.
  constexpr size_t Sent = 3 * FifoBytes, Received = 2 * FifoBytes;
  std::vector<int> Status = perf::runLocalRanks(
      2,
      [&](int Rank, const cclcUniqueId &Id) {
        cclcComm_t Comm = nullptr;
        ok(cclcCommInitRank(&Comm, 2, Id, Rank), "cclcCommInitRank");
        std::vector<std::byte> Buffer = receiveBuffer(Sent);
        Clock::time_point Start = Clock::now();
        cclcResult_t Result = Rank == 0
                                  ? cclcSend(Buffer.data(), Sent, cclcUint8, 1, Comm, nullptr)
                                  : cclcRecv(Buffer.data(), Received, cclcUint8, 0, Comm, nullptr);
        auto Took = Clock::now() - Start;
        expect(Took < Soon,
               "the error came after " +
                   std::to_string(std::chrono::duration_cast<milliseconds>(Took).count()) + " ms");
        // The receiver says why; the sender, that it stopped.
        expectFailed(Comm, Result,
                     Rank == 0 ? "send of 3 MiB to rank 1 failed on rank 0"
                               : "rank 0 sent " + std::to_string(Sent) +
                                     " bytes where rank 1 receives " + std::to_string(Received),
                     /*FoundMismatch=*/Rank == 1);
        if (Rank == 1)
          expect(Buffer == receiveBuffer(Sent), "the receive wrote into its buffer");
        return 0;
      },
      std::chrono::seconds(30));
  for (int Rank = 0; Rank < 2; ++Rank)
    EXPECT_EQ(perf::describeStatus(Status[size_t(Rank)]), "exited with 0") << "rank " << Rank;
}

TEST_P(Failures, APeerThatDiesMidTransferFailsTheOtherWithinTheTimeout) {
  constexpr milliseconds Timeout(1500), KillAfter(30), Slack(2500);
  constexpr int Victim = 1;
  ScopedEnv Transport("CCLC_TRANSPORT", GetParam());
  ScopedEnv TimeoutEnv("CCLC_TIMEOUT_MS", std::to_string(Timeout.count()));
  std::vector<int> Status = perf::runLocalRanks(
      2,
      [&](int Rank, const cclcUniqueId &Id) {
        cclcComm_t Comm = nullptr;
        ok(cclcCommInitRank(&Comm, 2, Id, Rank), "cclcCommInitRank");
        std::vector<std::byte> Buffer(4 * FifoBytes);
        auto Transfer = [&] {
          return Rank == Victim
                     ? cclcRecv(Buffer.data(), Buffer.size(), cclcUint8, 1 - Rank, Comm, nullptr)
                     : cclcSend(Buffer.data(), Buffer.size(), cclcUint8, 1 - Rank, Comm, nullptr);
        };
        ok(Transfer(), "the first transfer");
        cclcResult_t Result =
            callUntilPeerDies(Rank, Victim, KillAfter, Timeout + Slack, Transfer);
        expectFailed(Comm, Result, "failed on rank " + std::to_string(Rank));
        return 0;
      },
      std::chrono::seconds(30));
  std::string Killed = "killed by signal 9";
  EXPECT_EQ(perf::describeStatus(Status[0]), "exited with 0");
  EXPECT_EQ(perf::describeStatus(Status[Victim]).substr(0, Killed.size()), Killed);
}

INSTANTIATE_TEST_SUITE_P(Transports, Failures, ::testing::Values("shm", "tcp"),
                         [](const auto &Info) { return std::string(Info.param); });

/// Throws unless Result is Want and the last error holds Says.
void expectRefused(cclcResult_t Result, cclcResult_t Want, const std::string &Says,
                   const std::string &What) {
  std::string Why = cclcGetLastError(nullptr);
  expect(Result == Want, What + " returned " + cclcGetErrorString(Result) + ": " + Why);
  expect(Why.find(Says) != std::string::npos, What + ": the error says '" + Says + "': " + Why);
}

TEST(PointToPointMisuse, IsRefusedSayingWhatToDoAndLeavesTheCommunicatorWorking) {
  ScopedEnv TimeoutEnv("CCLC_TIMEOUT_MS", "20000");
  runJob(2, [](cclcComm_t Comm, int Rank) {
    int Peer = 1 - Rank;
    std::vector<float> Data(16, 1.0f);
    expectRefused(cclcGroupEnd(), cclcInvalidUsage, "call cclcGroupStart first",
                  "cclcGroupEnd without cclcGroupStart");
    for (int Bad : {-1, 2})
      expectRefused(cclcSend(Data.data(), 1, cclcFloat32, Bad, Comm, nullptr), cclcInvalidArgument,
                    "pass a rank in [0, 2)", "a send to rank " + std::to_string(Bad));
    expectRefused(cclcRecv(nullptr, 5, cclcFloat32, Peer, Comm, nullptr), cclcInvalidArgument,
                  "recvbuff is null with a count of 5", "a receive into null");
    expectRefused(cclcSend(Data.data(), 1, cclcDataType_t(42), Peer, Comm, nullptr),
                  cclcInvalidArgument, "datatype 42 is not a cclcDataType_t", "a bad type");
    expectRefused(cclcSend(Data.data(), 1, cclcFloat32, Peer, Comm, Data.data()), cclcInvalidUsage,
                  "run on the host only", "a send on a stream");
    expectRefused(cclcSend(Data.data(), 1, cclcFloat32, Rank, Comm, nullptr), cclcInvalidUsage,
                  "a send to one's own rank needs a receive from it in the same group",
                  "a lone send to oneself");
    expectRefused(cclcAllToAll(Data.data(), Data.data() + 1, 2, cclcFloat32, Comm, nullptr),
                  cclcInvalidArgument, "overlap without being the same buffer",
                  "an alltoall whose buffers overlap");

    // A refused call drops its group; so does a collective in one.
    ok(cclcGroupStart(), "cclcGroupStart");
    expectRefused(cclcSend(Data.data(), 1, cclcFloat32, 7, Comm, nullptr), cclcInvalidArgument,
                  "pass a rank in [0, 2)", "a send to rank 7 in a group");
    ok(cclcSend(Data.data(), 1, cclcFloat32, Peer, Comm, nullptr), "a send queued in a group");
    expectRefused(cclcGroupEnd(), cclcInvalidArgument, "the group was dropped",
                  "the end of a group with a refused call");
    ok(cclcGroupStart(), "cclcGroupStart");
    expectRefused(cclcAllReduce(Data.data(), Data.data(), 1, cclcFloat32, cclcSum, Comm, nullptr),
                  cclcInvalidUsage, "call it after cclcGroupEnd", "an allreduce in a group");
    expectRefused(cclcGroupEnd(), cclcInvalidUsage, "the group was dropped",
                  "the end of a group with an allreduce");
    // Sends to oneself and receives from oneself must match.
    ok(cclcGroupStart(), "cclcGroupStart");
    ok(cclcSend(Data.data(), 4, cclcFloat32, Rank, Comm, nullptr), "a send to oneself");
    ok(cclcRecv(Data.data() + 4, 8, cclcFloat32, Rank, Comm, nullptr), "a receive from oneself");
    expectRefused(cclcGroupEnd(), cclcInvalidUsage, "sends 16 bytes to itself where it receives 32",
                  "unmatched sizes to oneself");

    // Nothing was sent: nested groups now run once, at the outermost end.
    std::vector<std::byte> Send = message(Rank, Peer, 0, 100), Recv = receiveBuffer(100);
    std::vector<std::byte> Mine = message(Rank, Rank, 0, 10), Back = receiveBuffer(10);
    ok(cclcGroupStart(), "cclcGroupStart");
    ok(cclcGroupStart(), "a nested cclcGroupStart");
    ok(cclcRecv(Recv.data(), 100, cclcUint8, Peer, Comm, nullptr), "cclcRecv");
    ok(cclcSend(Mine.data(), 10, cclcUint8, Rank, Comm, nullptr), "a send to oneself");
    ok(cclcGroupEnd(), "the nested cclcGroupEnd");
    expect(Back == receiveBuffer(10) && Recv == receiveBuffer(100),
           "a nested cclcGroupEnd ran the group");
    ok(cclcSend(Send.data(), 100, cclcUint8, Peer, Comm, nullptr), "cclcSend");
    ok(cclcRecv(Back.data(), 10, cclcUint8, Rank, Comm, nullptr), "a receive from oneself");
    ok(cclcGroupEnd(), "the outermost cclcGroupEnd");
    expectMessage(Recv, Peer, Rank, 0, "the nested group's receive");
    expectMessage(Back, Rank, Rank, 0, "the nested group's copy to oneself");
  });
}

} // namespace
} // namespace cclc::test
