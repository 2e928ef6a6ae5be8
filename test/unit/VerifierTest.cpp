//===- VerifierTest.cpp - The schedule verifier on hand-built schedules ---===//

#include "plan/Contents.h"
#include "plan/Verifier.h"

#include <gtest/gtest.h>
#include <sstream>
#include <string>

using namespace cclc;
using namespace cclc::sched;
using plan::CollectiveKind;

namespace {

Slice in(int32_t Chunk, int32_t Count = 1) { return {BufferKind::Input, Chunk, Count}; }
Slice out(int32_t Chunk, int32_t Count = 1) { return {BufferKind::Output, Chunk, Count}; }
Slice scratch(int32_t Chunk, int32_t Count = 1) { return {BufferKind::Scratch, Chunk, Count}; }

/// Builds schedules step by step; each step's location is line Line of a
/// 20-line file, so messages can be matched on "algo.ccl:LINE:1".
class VerifierTest : public ::testing::Test {
protected:
  VerifierTest() {
    std::string Text;
    for (int L = 1; L <= 20; ++L)
      Text += "line" + std::to_string(L) + "\n";
    File = SM.addBuffer("algo.ccl", Text);
  }

  Schedule make(CollectiveKind Kind, int32_t NRanks, int32_t Chunks = 1, int32_t Channels = 1) {
    Schedule S;
    S.Algorithm = "test";
    S.Collective = Kind;
    S.NRanks = NRanks;
    S.NChannels = Channels;
    S.ChunksPerChannel = Chunks;
    S.Units = bufferUnits(Kind, NRanks);
    for (int32_t R = 0; R < NRanks; ++R) {
      S.Remap.push_back(R);
      S.Ranks.push_back(RankProgram{R, std::vector<ChannelProgram>(Channels)});
    }
    return S;
  }

  Step step(OpKind Op, int32_t Peer, Slice Src, Slice Dst, int Line) {
    Step St;
    St.Op = Op;
    St.Peer = Peer;
    St.Src = Src;
    St.Dst = Dst;
    St.Loc = SourceLoc{File, static_cast<uint32_t>(Line), 1};
    return St;
  }
  Step send(int32_t Peer, Slice Src, int Line) { return step(OpKind::Send, Peer, Src, {}, Line); }
  Step recv(int32_t Peer, Slice Dst, int Line) { return step(OpKind::Recv, Peer, {}, Dst, Line); }
  Step recvReduce(int32_t Peer, Slice Dst, int Line) {
    return step(OpKind::RecvReduce, Peer, {}, Dst, Line);
  }
  Step copy(Slice Src, Slice Dst, int Line) { return step(OpKind::Copy, -1, Src, Dst, Line); }
  Step reduce(Slice Src, Slice Dst, int Line) { return step(OpKind::Reduce, -1, Src, Dst, Line); }
  Step withNext(Step St) {
    St.WithNext = true;
    return St;
  }

  static void add(Schedule &S, int32_t Rank, Step St, int32_t Channel = 0) {
    S.Ranks[Rank].Channels[Channel].Steps.push_back(St);
  }

  /// NCCL's ring allreduce on the ring 0 -> 1 -> ... -> N-1 -> 0, as
  /// algorithms/ring-allreduce.ccl instantiates it.
  Schedule ringAllReduce(int32_t N) {
    Schedule S = make(CollectiveKind::AllReduce, N, N);
    for (int32_t R = 0; R < N; ++R) {
      const int32_t Next = (R + 1) % N, Prev = (R + N - 1) % N;
      add(S, R, copy(in(0, N), out(0, N), 1));
      for (int32_t St = 0; St < N - 1; ++St) {
        add(S, R, send(Next, out((R - St + N) % N), 2));
        add(S, R, recvReduce(Prev, out((R - St - 1 + 2 * N) % N), 3));
      }
      for (int32_t St = 0; St < N - 1; ++St) {
        add(S, R, send(Next, out((R - St + 1 + N) % N), 4));
        add(S, R, recv(Prev, out((R - St + N) % N), 5));
      }
    }
    return S;
  }

  /// Two ranks exchange and reduce their whole buffers.
  Schedule pairAllReduce() {
    Schedule S = make(CollectiveKind::AllReduce, 2);
    for (int32_t R = 0; R < 2; ++R) {
      add(S, R, copy(in(0), out(0), 1));
      add(S, R, send(1 - R, out(0), 2));
      add(S, R, recvReduce(1 - R, out(0), 3));
    }
    return S;
  }

  bool verify(const Schedule &S) { return verify::verifySchedule(S, Diags); }

  SourceManager SM;
  uint32_t File = 0;
  std::ostringstream Out;
  DiagnosticEngine Diags{SM, Out};
};

TEST_F(VerifierTest, RingAllReduceVerifiesForEveryRankCount) {
  for (int32_t N = 1; N <= 9; ++N) {
    Schedule S = ringAllReduce(N);
    EXPECT_TRUE(verify(S)) << N << " ranks:\n" << Out.str();
    S.BufferSlots = 1;
    EXPECT_TRUE(verify(S)) << N << " ranks, one slot:\n" << Out.str();
  }
  EXPECT_EQ(Out.str(), "");
}

TEST_F(VerifierTest, LargeRingAllReduceVerifies) {
  EXPECT_TRUE(verify(ringAllReduce(130))) << Out.str();
}

TEST_F(VerifierTest, ExchangeSendsItsSliceBeforeTheReceiveLands) {
  // Butterfly: exchange_reduce(rank ^ bit, output, output) in place.
  for (int32_t Slots : {1, 2}) {
    Schedule S = make(CollectiveKind::AllReduce, 4);
    S.BufferSlots = Slots;
    for (int32_t R = 0; R < 4; ++R) {
      add(S, R, copy(in(0), out(0), 1));
      for (int32_t Bit = 1; Bit < 4; Bit <<= 1) {
        add(S, R, withNext(send(R ^ Bit, out(0), 2)));
        add(S, R, recvReduce(R ^ Bit, out(0), 2));
      }
    }
    EXPECT_TRUE(verify(S)) << Out.str();
  }
}

TEST_F(VerifierTest, RecvReduceCopyCombinesItsSourceWithTheMessage) {
  // Halving-doubling at 2 ranks with its copy folded into the first receive.
  auto Build = [&](Slice Local) {
    Schedule S = make(CollectiveKind::AllReduce, 2, 2);
    for (int32_t R = 0; R < 2; ++R) {
      add(S, R, withNext(send(1 - R, in(1 - R), 1)));
      add(S, R, step(OpKind::RecvReduceCopy, 1 - R, R == 0 ? Local : in(R), out(R), 2));
      add(S, R, withNext(send(1 - R, out(R), 3)));
      add(S, R, recv(1 - R, out(1 - R), 3));
    }
    return S;
  };
  EXPECT_TRUE(verify(Build(in(0)))) << Out.str();
  // Combining rank 0's chunk 1 instead counts the peer's chunk 1 twice and
  // misses rank 0's chunk 0.
  EXPECT_FALSE(verify(Build(in(1))));
  // A source of another size is refused where the step is.
  Out.str("");
  EXPECT_FALSE(verify(Build(in(0, 2))));
  EXPECT_NE(Out.str().find("algo.ccl:2:1: error: rank 0 channel 0 step 1: recv_reduce_copy "
                           "reads 2 chunks (input[0..2]) but writes 1 chunk (output[0])"),
            std::string::npos)
      << Out.str();
}

TEST_F(VerifierTest, BothRanksReceivingFirstDeadlock) {
  Schedule S = make(CollectiveKind::AllReduce, 2);
  for (int32_t R = 0; R < 2; ++R) {
    add(S, R, copy(in(0), out(0), 1));
    add(S, R, recvReduce(1 - R, out(0), 2));
    add(S, R, send(1 - R, out(0), 3));
  }
  EXPECT_FALSE(verify(S));
  EXPECT_NE(Out.str().find("algo.ccl:2:1: error: deadlock: rank 0 channel 0 step 1 waits to "
                           "receive from rank 1, which waits at step 1 to receive from rank 0\n"),
            std::string::npos)
      << Out.str();
  EXPECT_NE(Out.str().find("algo.ccl:2:1: note: rank 1 channel 0 step 1: waits here to receive "
                           "from rank 0"),
            std::string::npos)
      << Out.str();
}

TEST_F(VerifierTest, FullBuffersDeadlockOnlyWhenSlotsRunOut) {
  // Each rank sends its three chunks before receiving the peer's three.
  Schedule S = make(CollectiveKind::AllGather, 2, 3);
  for (int32_t R = 0; R < 2; ++R) {
    add(S, R, copy(in(0, 3), out(3 * R, 3), 1));
    for (int32_t C = 0; C < 3; ++C)
      add(S, R, send(1 - R, in(C), 2));
    for (int32_t C = 0; C < 3; ++C)
      add(S, R, recv(1 - R, out(3 * (1 - R) + C), 3));
  }
  S.BufferSlots = 3;
  EXPECT_TRUE(verify(S)) << Out.str();
  S.BufferSlots = 2;
  EXPECT_FALSE(verify(S));
  EXPECT_NE(Out.str().find("error: deadlock: rank 0 channel 0 step 3 waits to send to rank 1 (all "
                           "2 buffer slots full), which waits at step 3 to send to rank 0"),
            std::string::npos)
      << Out.str();
}

TEST_F(VerifierTest, SizeMismatchNamesBothSteps) {
  Schedule S = make(CollectiveKind::AllReduce, 2, 2);
  add(S, 0, copy(in(0, 2), out(0, 2), 1));
  add(S, 0, send(1, out(0, 2), 2));
  add(S, 1, copy(in(0, 2), out(0, 2), 1));
  add(S, 1, recvReduce(0, out(0), 3));
  EXPECT_FALSE(verify(S));
  EXPECT_NE(Out.str().find("algo.ccl:3:1: error: rank 1 channel 0 step 1: recv_reduce receives 1 "
                           "chunk from rank 0, but the matching send sends 2 chunks\n"),
            std::string::npos)
      << Out.str();
  EXPECT_NE(Out.str().find("algo.ccl:2:1: note: rank 0 channel 0 step 1: the matching send"),
            std::string::npos)
      << Out.str();
}

TEST_F(VerifierTest, ProtocolMismatchNamesBothSteps) {
  Schedule S = make(CollectiveKind::AllReduce, 2, 1);
  for (int R : {0, 1}) {
    add(S, R, copy(in(0), out(0), 1));
    add(S, R, send(1 - R, in(0), 2));
    add(S, R, recvReduce(1 - R, out(0), 3));
  }
  S.Ranks[0].Channels[0].Steps[1].Proto = Protocol::LL;
  S.Ranks[1].Channels[0].Steps[2].Proto = Protocol::LL;
  EXPECT_TRUE(verify(S)) << Out.str();
  S.Ranks[1].Channels[0].Steps[2].Proto = Protocol::Simple;
  EXPECT_FALSE(verify(S));
  EXPECT_NE(Out.str().find("algo.ccl:3:1: error: rank 1 channel 0 step 2: recv_reduce receives "
                           "from rank 0 by the simple protocol, but the matching send sends by "
                           "ll\n"),
            std::string::npos)
      << Out.str();
  EXPECT_NE(Out.str().find("algo.ccl:2:1: note: rank 0 channel 0 step 1: the matching send"),
            std::string::npos)
      << Out.str();
}

TEST_F(VerifierTest, SendNeverReceived) {
  Schedule S = pairAllReduce();
  add(S, 0, send(1, out(0), 7));
  EXPECT_FALSE(verify(S));
  EXPECT_NE(Out.str().find("algo.ccl:7:1: error: rank 0 channel 0 step 3: send to rank 1 is never "
                           "received: rank 1's channel 0 program ends first"),
            std::string::npos)
      << Out.str();
}

TEST_F(VerifierTest, ReceiveNeverSent) {
  Schedule S = pairAllReduce();
  add(S, 1, recv(0, out(0), 8));
  EXPECT_FALSE(verify(S));
  EXPECT_NE(Out.str().find("algo.ccl:8:1: error: rank 1 channel 0 step 3: recv from rank 0 never "
                           "completes: rank 0's channel 0 program ends without sending it"),
            std::string::npos)
      << Out.str();
}

TEST_F(VerifierTest, DoubleCountingIsCaughtWhereItHappens) {
  Schedule S = pairAllReduce();
  add(S, 0, reduce(in(0), out(0), 9));
  EXPECT_FALSE(verify(S));
  EXPECT_NE(Out.str().find("algo.ccl:9:1: error: rank 0 channel 0 step 3: reduce counts rank 0's "
                           "contribution to output[0] twice: it adds input[0] of rank 0 to "
                           "input[0] of all 2 ranks\n"),
            std::string::npos)
      << Out.str();
  EXPECT_NE(Out.str().find("algo.ccl:3:1: note: rank 0 channel 0 step 2: output[0] was last "
                           "written here"),
            std::string::npos)
      << Out.str();
}

TEST_F(VerifierTest, ReceivedDoubleCountingNotesTheSender) {
  // Rank 1 reduces rank 0's data twice: once directly, once via rank 2.
  Schedule S = make(CollectiveKind::Reduce, 3);
  S.Root = 1;
  add(S, 0, send(1, in(0), 1));
  add(S, 0, send(2, in(0), 2));
  add(S, 2, copy(in(0), out(0), 3));
  add(S, 2, recvReduce(0, out(0), 4));
  add(S, 2, send(1, out(0), 5));
  add(S, 1, copy(in(0), out(0), 6));
  add(S, 1, recvReduce(0, out(0), 7));
  add(S, 1, recvReduce(2, out(0), 8));
  EXPECT_FALSE(verify(S));
  EXPECT_NE(Out.str().find("algo.ccl:8:1: error: rank 1 channel 0 step 2: recv_reduce counts rank "
                           "0's contribution to output[0] twice: it adds input[0] of ranks 0, 2 "
                           "to input[0] of ranks 0, 1\n"),
            std::string::npos)
      << Out.str();
  EXPECT_NE(Out.str().find("algo.ccl:5:1: note: rank 2 channel 0 step 2: the data was sent here"),
            std::string::npos)
      << Out.str();
}

TEST_F(VerifierTest, MissingContributionNamesTheLastWriter) {
  Schedule S = make(CollectiveKind::AllReduce, 2);
  add(S, 0, copy(in(0), out(0), 1));
  add(S, 0, send(1, out(0), 2));
  add(S, 0, recv(1, out(0), 3));
  add(S, 1, recv(0, out(0), 4)); // should have been recv_reduce into a copy of input
  add(S, 1, send(0, out(0), 5));
  EXPECT_FALSE(verify(S));
  EXPECT_NE(Out.str().find("algo.ccl:4:1: error: rank 1 output[0] ends holding input[0] of rank "
                           "0, but allreduce needs input[0] of all 2 ranks there (missing rank 1); "
                           "channel 0 step 0 wrote it last\n"),
            std::string::npos)
      << Out.str();
}

TEST_F(VerifierTest, WrongUnitIsCaughtNotOnlyWrongRanks) {
  // alltoall: rank r's output unit u must hold rank u's input unit r.
  Schedule S = make(CollectiveKind::AllToAll, 2);
  add(S, 0, copy(in(0), out(0), 1));
  add(S, 0, send(1, in(0), 2)); // should send input unit 1
  add(S, 0, recv(1, out(1), 3));
  add(S, 1, copy(in(1), out(1), 1));
  add(S, 1, send(0, in(0), 2));
  add(S, 1, recv(0, out(0), 3));
  EXPECT_FALSE(verify(S));
  EXPECT_NE(Out.str().find("algo.ccl:3:1: error: rank 1 output[0] ends holding input[0] of rank "
                           "0, but alltoall needs input[1] of rank 0 there;"),
            std::string::npos)
      << Out.str();
}

TEST_F(VerifierTest, ReducingDifferentElementsIsCaught) {
  Schedule S = make(CollectiveKind::AllReduce, 1, 2);
  add(S, 0, copy(in(0, 2), out(0, 2), 1));
  add(S, 0, reduce(in(1), out(0), 2));
  EXPECT_FALSE(verify(S));
  EXPECT_NE(Out.str().find("algo.ccl:2:1: error: rank 0 channel 0 step 1: reduce adds input[1] of "
                           "rank 0 to output[0], which holds input[0] of rank 0: different "
                           "elements"),
            std::string::npos)
      << Out.str();
}

TEST_F(VerifierTest, BroadcastOfTheWrongRootIsCaught) {
  Schedule S = make(CollectiveKind::Broadcast, 2);
  S.Root = 1;
  add(S, 0, copy(in(0), out(0), 1));
  add(S, 0, send(1, out(0), 2));
  add(S, 1, recv(0, out(0), 3));
  EXPECT_FALSE(verify(S));
  EXPECT_NE(Out.str().find("algo.ccl:1:1: error: rank 0 output[0] ends holding input[0] of rank "
                           "0, but broadcast needs input[0] of rank 1 there"),
            std::string::npos)
      << Out.str();
}

TEST_F(VerifierTest, ReadingBeforeDataArrived) {
  Schedule S = pairAllReduce();
  std::swap(S.Ranks[0].Channels[0].Steps[0], S.Ranks[0].Channels[0].Steps[1]);
  EXPECT_FALSE(verify(S));
  EXPECT_NE(Out.str().find("algo.ccl:2:1: error: rank 0 channel 0 step 0: send reads output[0] "
                           "before any data arrived there\n"),
            std::string::npos)
      << Out.str();
  // The wrong data it sent is not reported again downstream.
  EXPECT_EQ(Diags.errorCount(), 1u) << Out.str();
}

TEST_F(VerifierTest, ReducingIntoNothing) {
  Schedule S = pairAllReduce();
  std::vector<Step> &Steps = S.Ranks[1].Channels[0].Steps;
  Steps.erase(Steps.begin());
  Steps[0].Src = in(0);
  EXPECT_FALSE(verify(S));
  EXPECT_NE(Out.str().find("algo.ccl:3:1: error: rank 1 channel 0 step 1: recv_reduce reduces "
                           "into output[0] before any data arrived there"),
            std::string::npos)
      << Out.str();
}

TEST_F(VerifierTest, InputIsReadOnly) {
  Schedule S = pairAllReduce();
  S.Ranks[1].Channels[0].Steps[2].Dst = in(0);
  EXPECT_FALSE(verify(S));
  EXPECT_NE(Out.str().find("algo.ccl:3:1: error: rank 1 channel 0 step 2: recv_reduce writes "
                           "input[0], but input is read-only"),
            std::string::npos)
      << Out.str();
}

TEST_F(VerifierTest, ExchangeSlicesMustBeSameOrDisjoint) {
  Schedule S = make(CollectiveKind::AllReduce, 2, 3);
  for (int32_t R = 0; R < 2; ++R) {
    add(S, R, copy(in(0, 3), out(0, 3), 1));
    add(S, R, withNext(send(1 - R, out(0, 2), 2)));
    add(S, R, recvReduce(1 - R, out(1, 2), 3));
  }
  EXPECT_FALSE(verify(S));
  EXPECT_NE(Out.str().find("algo.ccl:2:1: error: rank 0 channel 0 step 1: send of output[0..2] "
                           "runs together with a receive into output[1..3], which overlaps it "
                           "without being the same slice"),
            std::string::npos)
      << Out.str();
  EXPECT_NE(Out.str().find("algo.ccl:3:1: note: rank 0 channel 0 step 2: the receive"),
            std::string::npos)
      << Out.str();
}

TEST_F(VerifierTest, PeersMustBeOtherExistingRanks) {
  Schedule S = pairAllReduce();
  S.Ranks[0].Channels[0].Steps[1].Peer = 5;
  S.Ranks[1].Channels[0].Steps[2].Peer = 1;
  EXPECT_FALSE(verify(S));
  EXPECT_NE(Out.str().find("algo.ccl:2:1: error: rank 0 channel 0 step 1: send to rank 5, which "
                           "does not exist (2 ranks)"),
            std::string::npos)
      << Out.str();
  EXPECT_NE(Out.str().find("algo.ccl:3:1: error: rank 1 channel 0 step 2: recv_reduce from rank "
                           "1, its own rank"),
            std::string::npos)
      << Out.str();
}

TEST_F(VerifierTest, SlicesMustLieInsideTheirBuffer) {
  Schedule S = pairAllReduce();
  S.Ranks[0].Channels[0].Steps[1].Src = out(0, 2);
  EXPECT_FALSE(verify(S));
  EXPECT_NE(Out.str().find("rank 0 channel 0 step 1: send reads output[0..2], outside output's 1 "
                           "chunk"),
            std::string::npos)
      << Out.str();
}

TEST_F(VerifierTest, ChannelsSharingAChunkRace) {
  Schedule S = make(CollectiveKind::AllReduce, 1, 1, 2);
  add(S, 0, copy(in(0, 2), out(0, 2), 1), 0);
  add(S, 0, copy(in(1), out(1), 2), 1);
  EXPECT_FALSE(verify(S));
  EXPECT_NE(Out.str().find("algo.ccl:2:1: error: rank 0 channel 1 step 0: copy touches output[1], "
                           "which channel 0 writes: channels run unordered"),
            std::string::npos)
      << Out.str();
}

TEST_F(VerifierTest, MultiChannelReduceScatterVerifies) {
  // Two channels of a ring reduce-scatter in scratch, as
  // algorithms/ring-reduce-scatter.ccl instantiates it on 3 ranks.
  const int32_t N = 3, Channels = 2;
  Schedule S = make(CollectiveKind::ReduceScatter, N, 1, Channels);
  for (int32_t H = 0; H < Channels; ++H) {
    const int32_t Base = S.channelChunks(BufferKind::Input) * H;
    for (int32_t R = 0; R < N; ++R) {
      add(S, R, copy(in(Base, N), scratch(Base, N), 1), H);
      for (int32_t St = 0; St < N - 1; ++St) {
        add(S, R, send((R + 1) % N, scratch(Base + (R - St - 1 + 2 * N) % N), 2), H);
        add(S, R, recvReduce((R + N - 1) % N, scratch(Base + (R - St - 2 + 2 * N) % N), 3), H);
      }
      add(S, R, copy(scratch(Base + R), out(H), 4), H);
    }
  }
  EXPECT_TRUE(verify(S)) << Out.str();
}

TEST_F(VerifierTest, ReduceConstrainsOnlyTheRoot) {
  Schedule S = make(CollectiveKind::Reduce, 2);
  add(S, 1, send(0, in(0), 1));
  add(S, 0, copy(in(0), out(0), 2));
  add(S, 0, recvReduce(1, out(0), 3));
  EXPECT_TRUE(verify(S)) << Out.str();
}

TEST_F(VerifierTest, OutputNeverWritten) {
  Schedule S = make(CollectiveKind::AllReduce, 1);
  EXPECT_FALSE(verify(S));
  EXPECT_EQ(Out.str(), "cclc: error: rank 0 output[0] ends without data, but allreduce needs "
                       "input[0] of rank 0 there (channel 0 ends here)\n");
}

TEST_F(VerifierTest, OnlyTheFirstErrorsArePrinted) {
  Schedule S = make(CollectiveKind::AllReduce, 30);
  for (int32_t R = 0; R < 30; ++R)
    add(S, R, send(99, in(0), 1));
  EXPECT_FALSE(verify(S));
  EXPECT_EQ(Diags.errorCount(), 20u);
  EXPECT_NE(Out.str().find("cclc: note: 10 more verification errors not shown"), std::string::npos)
      << Out.str();
}

} // namespace

// The verifier's rank sets: equal sets get one number however they were
// made, runs of consecutive ranks (wrapping past the last) by arithmetic and
// other sets stored, so that comparing two chunks compares two words.
TEST(RankSets, EqualSetsHaveOneNumberHoweverTheyAreMade) {
  for (int32_t NRanks : {8, 40000}) {
    verify::RankSets Sets(NRanks);
    using Id = verify::RankSets::Id;
    const int32_t Last = NRanks - 1;
    // {Last, 0, 1}, a run that wraps, made in two orders.
    Id Wrapped = Sets.merge(Sets.merge(Sets.single(Last), Sets.single(0)), Sets.single(1));
    EXPECT_EQ(Wrapped, Sets.merge(Sets.single(1), Sets.merge(Sets.single(0), Sets.single(Last))));
    // {0, 2} is no run; adding 1 makes the run {0, 1, 2}.
    Id Gap = Sets.merge(Sets.single(0), Sets.single(2));
    EXPECT_EQ(Sets.describe(Gap), "ranks 0, 2");
    EXPECT_EQ(Sets.merge(Gap, Sets.single(1)),
              Sets.merge(Sets.merge(Sets.single(0), Sets.single(1)), Sets.single(2)));
    EXPECT_EQ(Gap, Sets.merge(Sets.single(2), Sets.single(0)));
    // The lowest common rank, where runs wrap and where they do not.
    EXPECT_EQ(Sets.firstShared(Wrapped, Gap), 0);
    EXPECT_EQ(Sets.firstShared(Wrapped, Sets.single(Last)), Last);
    EXPECT_EQ(Sets.firstShared(Gap, Sets.single(1)), -1);
    EXPECT_EQ(Sets.describeMissing(Gap, Wrapped), "ranks 1, " + std::to_string(Last));
    // Every rank, one at a time from the middle, is all of them (stored
    // sets of 40000 ranks are too large to make 40000 of here).
    if (NRanks > 64)
      continue;
    Id Grown = Sets.single(NRanks / 2);
    for (int32_t R = NRanks / 2 + 1; R != NRanks / 2; R = (R + 1) % NRanks)
      Grown = Sets.merge(Grown, Sets.single(R));
    EXPECT_EQ(Grown, Sets.all());
    EXPECT_EQ(Sets.describe(Grown), "all " + std::to_string(NRanks) + " ranks");
  }
}
