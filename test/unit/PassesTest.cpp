//===- PassesTest.cpp - Chunking, fusion, channel parallelism -------------===//
//
// Every pass must leave what the schedule computes unchanged. Besides the
// verifier, these tests check that with a small reference interpreter: it runs
// a schedule on integers under the execution model of Schedule.h (bounded
// FIFOs, blocking receives) and reports a deadlock or a mismatched message,
// so a transformed schedule can be compared with the original.
//
//===----------------------------------------------------------------------===//

#include "compiler/passes/ChannelParallel.h"
#include "compiler/passes/Chunking.h"
#include "compiler/passes/Fusion.h"
#include "compiler/passes/Pipeline.h"
#include "compiler/passes/ProtocolSelection.h"
#include "compiler/instantiate/Instantiate.h"
#include "compiler/emit/ScheduleText.h"
#include "plan/CopyElision.h"
#include "plan/CopyFolding.h"
#include "plan/StableSends.h"
#include "plan/Verifier.h"
#include "dsl/Frontend.h"

#include "LibrarySchedule.h"

#include <gtest/gtest.h>

#include <bit>
#include <deque>
#include <map>
#include <optional>
#include <sstream>

using namespace cclc;
using namespace cclc::sched;
using namespace cclc::passes;

namespace {

//===----------------------------------------------------------------------===//
// Building schedules
//===----------------------------------------------------------------------===//

/// Instantiates algorithms/<Name>.ccl for --nranks NRanks.
Schedule library(const std::string &Name, int32_t NRanks) {
  return test::librarySchedule(Name, NRanks);
}

Slice out(int32_t Chunk, int32_t Count = 1) { return Slice{BufferKind::Output, Chunk, Count}; }

Step send(int32_t Peer, Slice Data) {
  Step St;
  St.Op = OpKind::Send;
  St.Peer = Peer;
  St.Src = Data;
  return St;
}

Step receive(OpKind Op, int32_t Peer, Slice Data) {
  Step St;
  St.Op = Op;
  St.Peer = Peer;
  St.Dst = Data;
  return St;
}

Step local(OpKind Op, Slice From, Slice To) {
  Step St;
  St.Op = Op;
  St.Src = From;
  St.Dst = To;
  return St;
}

/// An allreduce-shaped schedule of NRanks ranks with the given steps per rank
/// on one channel.
Schedule handBuilt(std::vector<std::vector<Step>> Programs, int32_t Chunks) {
  Schedule S;
  S.Algorithm = "hand_built";
  S.NRanks = static_cast<int32_t>(Programs.size());
  S.ChunksPerChannel = Chunks;
  for (int32_t R = 0; R < S.NRanks; ++R) {
    S.Remap.push_back(R);
    RankProgram P;
    P.LogicalRank = R;
    P.Channels.push_back(ChannelProgram{std::move(Programs[R])});
    S.Ranks.push_back(std::move(P));
  }
  return S;
}

std::vector<std::string> stepsText(const Schedule &S, int32_t Rank, int32_t Channel = 0) {
  std::vector<std::string> Text;
  for (const Step &St : S.Ranks[Rank].Channels[Channel].Steps)
    Text.push_back(formatStep(St));
  return Text;
}

//===----------------------------------------------------------------------===//
// The reference interpreter
//===----------------------------------------------------------------------===//

/// Final buffers of every rank: Buffers[rank][buffer] holds ValuesPerChunk
/// values per chunk.
using Buffers = std::vector<std::array<std::vector<int64_t>, 3>>;

/// Runs S with ValuesPerChunk values in each chunk (a schedule refined by a
/// factor F holds, in F chunks, what the original holds in one chunk of F
/// values). Returns nullopt, with a reason in Why, on deadlock or mismatch.
std::optional<Buffers> run(const Schedule &S, int32_t ValuesPerChunk, std::string &Why) {
  Buffers B(S.NRanks);
  for (int32_t R = 0; R < S.NRanks; ++R)
    for (int Buf = 0; Buf < 3; ++Buf) {
      B[R][Buf].assign(S.bufferChunks(static_cast<BufferKind>(Buf)) * ValuesPerChunk, 0);
      if (Buf == static_cast<int>(BufferKind::Input))
        for (size_t V = 0; V < B[R][Buf].size(); ++V)
          B[R][Buf][V] = 1000003LL * R + 7 * static_cast<int64_t>(V) + 1;
    }
  auto Values = [&](int32_t R, const Slice &X) {
    auto Begin = B[R][static_cast<int>(X.Buffer)].begin() + X.Chunk * ValuesPerChunk;
    return std::vector<int64_t>(Begin, Begin + X.Count * ValuesPerChunk);
  };
  auto Store = [&](int32_t R, const Slice &X, const std::vector<int64_t> &Data, bool Add) {
    int64_t *Dst = B[R][static_cast<int>(X.Buffer)].data() + X.Chunk * ValuesPerChunk;
    for (size_t V = 0; V < Data.size(); ++V)
      Dst[V] = Add ? Dst[V] + Data[V] : Data[V];
  };
  std::map<std::tuple<int32_t, int32_t, int32_t>, std::deque<std::vector<int64_t>>> Fifos;
  std::vector<size_t> Pc(S.NRanks * S.NChannels, 0);
  for (bool Progress = true; Progress;) {
    Progress = false;
    for (int32_t R = 0; R < S.NRanks; ++R)
      for (int32_t C = 0; C < S.NChannels; ++C) {
        const std::vector<Step> &Steps = S.Ranks[R].Channels[C].Steps;
        size_t &I = Pc[R * S.NChannels + C];
        for (; I < Steps.size(); ++I) {
          const Step &St = Steps[I];
          auto *In = opReceives(St.Op) ? &Fifos[{C, St.Peer, R}] : nullptr;
          auto *Out = opSends(St.Op) ? &Fifos[{C, R, St.sendTarget()}] : nullptr;
          if ((In && In->empty()) || (Out && Out->size() >= static_cast<size_t>(S.BufferSlots)))
            break;
          if (In) {
            if (In->front().size() != static_cast<size_t>(St.Dst.Count * ValuesPerChunk)) {
              Why = "size mismatch at rank " + std::to_string(R) + " step " + std::to_string(I);
              return std::nullopt;
            }
            if (St.Op == OpKind::RecvReduceCopy)
              Store(R, St.Dst, Values(R, St.Src), false);
            bool Reduces = St.Op == OpKind::RecvReduce || St.Op == OpKind::RecvReduceSend ||
                           St.Op == OpKind::RecvReduceCopy;
            Store(R, St.Dst, In->front(), Reduces);
            In->pop_front();
          }
          if (St.Op == OpKind::Copy || St.Op == OpKind::Reduce)
            Store(R, St.Dst, Values(R, St.Src), St.Op == OpKind::Reduce);
          if (Out)
            Out->push_back(Values(R, St.sentSlice()));
          Progress = true;
        }
      }
  }
  for (int32_t P = 0; P < S.NRanks * S.NChannels; ++P)
    if (Pc[P] != S.Ranks[P / S.NChannels].Channels[P % S.NChannels].Steps.size()) {
      Why = "deadlock: rank " + std::to_string(P / S.NChannels) + " channel " +
            std::to_string(P % S.NChannels) + " blocks at step " + std::to_string(Pc[P]);
      return std::nullopt;
    }
  return B;
}

/// Expects the verifier to prove S.
void expectVerified(const Schedule &S) {
  SourceManager SM;
  std::ostringstream Errors;
  DiagnosticEngine Diags(SM, Errors);
  EXPECT_TRUE(verify::verifySchedule(S, Diags)) << Errors.str();
}

/// Expects Transformed (refined by Factor) to compute what Original computes.
void expectSameResult(const Schedule &Original, const Schedule &Transformed, int32_t Factor) {
  std::string Why;
  std::optional<Buffers> Expected = run(Original, Factor, Why);
  ASSERT_TRUE(Expected) << "original: " << Why;
  std::optional<Buffers> Actual = run(Transformed, 1, Why);
  ASSERT_TRUE(Actual) << "transformed: " << Why;
  for (int32_t R = 0; R < Original.NRanks; ++R)
    EXPECT_EQ((*Expected)[R][static_cast<int>(BufferKind::Output)],
              (*Actual)[R][static_cast<int>(BufferKind::Output)])
        << "rank " << R;
}

/// Expects every rank's output to be the sum of every rank's input.
void expectAllReduce(const Schedule &S) {
  std::string Why;
  std::optional<Buffers> Result = run(S, 1, Why);
  ASSERT_TRUE(Result) << Why;
  std::vector<int64_t> Sum((*Result)[0][0].size(), 0);
  for (int32_t R = 0; R < S.NRanks; ++R)
    for (size_t V = 0; V < Sum.size(); ++V)
      Sum[V] += (*Result)[R][static_cast<int>(BufferKind::Input)][V];
  for (int32_t R = 0; R < S.NRanks; ++R)
    EXPECT_EQ((*Result)[R][static_cast<int>(BufferKind::Output)], Sum) << "rank " << R;
}

//===----------------------------------------------------------------------===//
// Copy elision
//===----------------------------------------------------------------------===//

Slice in(int32_t Chunk, int32_t Count = 1) { return Slice{BufferKind::Input, Chunk, Count}; }

TEST(CopyElision, HalvingDoublingSendsItsInputAndCopiesHalf) {
  Schedule S = library("halving-doubling-allreduce", 2);
  Schedule Original = S;
  plan::CopyElisionResult R = plan::elideCopies(S);
  EXPECT_EQ(R.summary(), "copies 4 -> 2 chunks, 2 reads from input");
  EXPECT_EQ(stepsText(S, 0)[0], "copy input[0] -> output[0]");
  EXPECT_EQ(stepsText(S, 0)[1], "send input[1] -> 1 (with next)");
  EXPECT_EQ(stepsText(S, 1)[0], "copy input[1] -> output[1]");
  expectVerified(S);
  expectSameResult(Original, S, 1);
}

TEST(CopyElision, KeepsChunksReducedIntoOrReadWithChangedOnes) {
  // Chunk 0 is sent, then received whole: its copy goes and the send reads
  // input. Chunk 1 is then sent beside the changed chunk 0: that send stays
  // on output, and chunk 1's copy with it, though a receive overwrites both
  // in the end.
  std::vector<std::vector<Step>> Programs;
  for (int32_t R = 0; R < 2; ++R) {
    Step First = send(1 - R, out(0));
    First.WithNext = true;
    Step Both = send(1 - R, out(0, 2));
    Both.WithNext = true;
    Programs.push_back({local(OpKind::Copy, in(0, 2), out(0, 2)), First,
                        receive(OpKind::Recv, 1 - R, out(0)), Both,
                        receive(OpKind::Recv, 1 - R, out(0, 2))});
  }
  Schedule S = handBuilt(std::move(Programs), 2);
  Schedule Original = S;
  EXPECT_EQ(plan::elideCopies(S).summary(), "copies 4 -> 2 chunks, 2 reads from input");
  EXPECT_EQ(stepsText(S, 0), (std::vector<std::string>{
                                 "copy input[1] -> output[1]", "send input[0] -> 1 (with next)",
                                 "recv output[0] <- 1", "send output[0..2] -> 1 (with next)",
                                 "recv output[0..2] <- 1"}));
  // Not an allreduce, so not for the verifier: the reference interpreter
  // compares what it computes.
  expectSameResult(Original, S, 1);
}

TEST(CopyElision, LeavesCopiesThatSaveLittleOrAreNotPlainCopies) {
  // A ring saves one chunk in n: its copy stays whole.
  Schedule Ring = library("ring-allreduce", 8);
  Schedule Before = Ring;
  EXPECT_EQ(plan::elideCopies(Ring).summary(), "copies 64 -> 64 chunks, 0 reads from input");
  EXPECT_EQ(stepsText(Ring, 3), stepsText(Before, 3));
  // A copy by a chosen primitive, or onto other chunks, is not touched.
  for (bool ByPrimitive : {true, false}) {
    std::vector<std::vector<Step>> Programs;
    for (int32_t R = 0; R < 2; ++R) {
      Step Copy = local(OpKind::Copy, in(0, 2), ByPrimitive ? out(0, 2) : out(2, 2));
      if (ByPrimitive)
        Copy.Primitive = "copy_streaming";
      Step Out = send(1 - R, ByPrimitive ? out(0, 2) : out(2, 2));
      Out.WithNext = true;
      Programs.push_back({Copy, Out, receive(OpKind::Recv, 1 - R, out(0, 2))});
    }
    Schedule S = handBuilt(std::move(Programs), 4);
    Schedule Original = S;
    plan::elideCopies(S);
    EXPECT_EQ(stepsText(S, 0), stepsText(Original, 0)) << ByPrimitive;
  }
}

TEST(CopyElision, ProgramsThatRunInPlace) {
  // The library's programs read their input before writing over it, with
  // their copies whole or cut.
  for (const char *Name : {"ring-allreduce", "halving-doubling-allreduce", "butterfly-allreduce",
                           "tree-allreduce", "ring-broadcast", "ring-reduce"}) {
    Schedule S = library(Name, 8);
    for (int Pass = 0; Pass < 2; ++Pass, plan::elideCopies(S))
      for (int32_t R = 0; R < S.NRanks; ++R)
        EXPECT_TRUE(plan::runsInPlace(S, R)) << Name << " rank " << R << " pass " << Pass;
  }
  // An allgather's input is a part of its output.
  EXPECT_FALSE(plan::runsInPlace(library("ring-allgather", 4), 0));
  // Input read after a receive overwrote the output over it.
  auto Program = [](std::vector<Step> Steps) { return handBuilt({Steps, {}}, 2); };
  EXPECT_FALSE(plan::runsInPlace(Program({receive(OpKind::Recv, 1, out(0)),
                                          local(OpKind::Reduce, in(0), out(0))}), 0));
  EXPECT_FALSE(plan::runsInPlace(Program({send(1, in(0)), receive(OpKind::Recv, 1, out(0)),
                                          local(OpKind::Copy, in(0), out(0))}), 0));
  EXPECT_TRUE(plan::runsInPlace(Program({send(1, in(0)), receive(OpKind::Recv, 1, out(1)),
                                         local(OpKind::Copy, in(0), out(0))}), 0));
}

//===----------------------------------------------------------------------===//
// Stable sends
//===----------------------------------------------------------------------===//

/// The Stable bits of Rank's sending calls on channel 0, in order.
std::vector<int> stableBits(const Schedule &S, int32_t Rank) {
  plan::MessageMatch Match(S);
  std::vector<plan::LoweredStep> Calls = plan::lowerChannel(S.Ranks[size_t(Rank)].Channels[0].Steps);
  plan::markStableSends(Calls, Rank, 0, Match);
  std::vector<int> Bits;
  for (const plan::LoweredStep &L : Calls)
    if (L.Call.Op == OpKind::Send || L.Call.Op == OpKind::Exchange ||
        L.Call.Op == OpKind::ExchangeReduce)
      Bits.push_back(L.Call.Stable);
  return Bits;
}

constexpr int Both = kern::StableOutOfPlace | kern::StableInPlace;

TEST(StableSends, AWriteFromTheReaderAfterItsRead) {
  // Rank 0 sends chunk 0 and gets it back from rank 1, which sends it only
  // after taking rank 0's message: rank 1 may read that message in place.
  Schedule S = handBuilt({{send(1, out(0)), receive(OpKind::Recv, 1, out(0))},
                          {receive(OpKind::Recv, 0, out(1)), send(0, out(1))}},
                         2);
  EXPECT_EQ(stableBits(S, 0), std::vector<int>{Both});
  EXPECT_EQ(stableBits(S, 1), std::vector<int>{Both});
}

TEST(StableSends, WritesThatMayComeBeforeTheRead) {
  // The reader sends before it receives: its message may land first.
  Schedule Early = handBuilt({{send(1, out(0)), receive(OpKind::Recv, 1, out(0))},
                              {send(0, out(1)), receive(OpKind::Recv, 0, out(1))}},
                             2);
  EXPECT_EQ(stableBits(Early, 0), std::vector<int>{0});
  // The write comes from a rank other than the reader.
  Schedule Other = handBuilt({{send(1, out(0)), receive(OpKind::Recv, 2, out(0))},
                              {receive(OpKind::Recv, 0, out(1)), send(2, out(1))},
                              {receive(OpKind::Recv, 1, out(2)), send(0, out(2))}},
                             3);
  EXPECT_EQ(stableBits(Other, 0), std::vector<int>{0});
  // The rank overwrites the slice itself.
  Schedule Local = handBuilt({{send(1, out(0)), local(OpKind::Copy, out(1), out(0))},
                              {receive(OpKind::Recv, 0, out(1))}},
                             2);
  EXPECT_EQ(stableBits(Local, 0), std::vector<int>{0});
  // Input is overwritten only where the call runs in place.
  Schedule Input = handBuilt({{send(1, in(0)), receive(OpKind::Recv, 1, out(0))},
                              {send(0, out(1)), receive(OpKind::Recv, 0, out(1))}},
                             2);
  EXPECT_EQ(stableBits(Input, 0), std::vector<int>{kern::StableOutOfPlace});
}

TEST(StableSends, LibraryAllreducesInPlace) {
  // In place, halving-doubling gets back from each peer the half it sent
  // that peer, after the peer read it: every send stays where it lies.
  for (int32_t NRanks : {2, 4, 8}) {
    Schedule HalvingDoubling = library("halving-doubling-allreduce", NRanks);
    for (int32_t R = 0; R < NRanks; ++R) {
      std::vector<int> Sends = stableBits(HalvingDoubling, R);
      EXPECT_EQ(Sends.size(), size_t(2 * std::countr_zero(uint32_t(NRanks))));
      for (int Bits : Sends)
        EXPECT_EQ(Bits & kern::StableInPlace, kern::StableInPlace) << NRanks << " rank " << R;
    }
  }
  // The butterfly reduces into what it sends in the same exchange.
  std::vector<int> Butterfly = stableBits(library("butterfly-allreduce", 2), 0);
  EXPECT_FALSE(Butterfly.empty());
  for (int Bits : Butterfly)
    EXPECT_EQ(Bits & kern::StableInPlace, 0);
  // A ring of 4 gets each chunk back from its left neighbour, not its reader.
  std::vector<int> Ring = stableBits(library("ring-allreduce", 4), 0);
  EXPECT_TRUE(std::any_of(Ring.begin(), Ring.end(),
                          [](int Bits) { return (Bits & kern::StableInPlace) == 0; }));
}

//===----------------------------------------------------------------------===//
// Chunking
//===----------------------------------------------------------------------===//

TEST(Chunking, FactorOneChangesNothing) {
  Schedule S = library("ring-allreduce", 4);
  std::vector<std::string> Before = stepsText(S, 1);
  ChunkingResult Result = chunkSchedule(S, 1);
  EXPECT_EQ(S.ChunksPerChannel, 4);
  EXPECT_EQ(stepsText(S, 1), Before);
  EXPECT_EQ(Result.summary(), "factor 1, not pipelined, 52 -> 52 steps");
}

TEST(Chunking, RingBroadcastForwardsEachSubChunkBeforeTheNext) {
  Schedule S = library("ring-broadcast", 4);
  ChunkingResult Result = chunkSchedule(S, 3);
  EXPECT_TRUE(Result.Pipelined);
  EXPECT_EQ(Result.Stages, 1);
  EXPECT_EQ(S.ChunksPerChannel, 3);
  EXPECT_EQ(stepsText(S, 1), (std::vector<std::string>{
                                 "recv output[0] <- 0", "send output[0] -> 2",
                                 "recv output[1] <- 0", "send output[1] -> 2",
                                 "recv output[2] <- 0", "send output[2] -> 2"}));
}

TEST(Chunking, TreeReducesNextSubChunkWhileBroadcastingThisOne) {
  Schedule S = library("tree-allreduce", 8);
  ChunkingResult Result = chunkSchedule(S, 4);
  ASSERT_TRUE(Result.Pipelined);
  EXPECT_EQ(Result.Stages, 2);
  // On every rank with a parent, the send up of sub-chunk 1 comes before the
  // receive down of sub-chunk 0.
  int32_t Inner = 0;
  for (int32_t R = 0; R < S.NRanks; ++R)
    for (const ChannelProgram &C : S.Ranks[R].Channels) {
      std::optional<size_t> SendUp1, RecvDown0;
      for (size_t I = 0; I < C.Steps.size(); ++I) {
        const Step &St = C.Steps[I];
        if (St.Op == OpKind::Send && St.Src.Chunk % 4 == 1 && !SendUp1)
          SendUp1 = I;
        if (St.Op == OpKind::Recv && St.Dst.Chunk % 4 == 0)
          RecvDown0 = I;
      }
      if (!RecvDown0)
        continue;
      ++Inner;
      ASSERT_TRUE(SendUp1);
      EXPECT_LT(*SendUp1, *RecvDown0) << "rank " << R;
    }
  EXPECT_GT(Inner, 0);
}

TEST(Chunking, WholeBufferCopyFinishesBeforeChunkSteps) {
  Schedule S = library("ring-allreduce", 4);
  chunkSchedule(S, 2);
  std::vector<std::string> Steps = stepsText(S, 0);
  EXPECT_EQ(Steps[0], "copy input[0..4] -> output[0..4]");
  EXPECT_EQ(Steps[1], "copy input[4..8] -> output[4..8]");
  EXPECT_EQ(Steps[2], "send output[0] -> 1");
}

TEST(Chunking, OnlyRefinesWhenStagesCannotAgree) {
  // Rank 0's receive overwrites half of what it sent, so its sub-chunks must
  // run a stage after the send's; rank 1 receives that send after sending the
  // reply, so they must not. No stages satisfy both.
  Schedule S = handBuilt({{send(1, out(0, 2)), receive(OpKind::Recv, 1, out(1))},
                          {send(0, out(1)), receive(OpKind::Recv, 0, out(0, 2))}},
                         2);
  ChunkingResult Result = chunkSchedule(S, 2);
  EXPECT_FALSE(Result.Pipelined);
  EXPECT_EQ(Result.summary(), "factor 2, not pipelined, 4 -> 4 steps");
  EXPECT_EQ(S.ChunksPerChannel, 4);
  EXPECT_EQ(stepsText(S, 0), (std::vector<std::string>{"send output[0..4] -> 1",
                                                        "recv output[2..4] <- 1"}));
}

struct LibraryCase {
  const char *Algorithm;
  int32_t NRanks;
};

class ChunkingLibrary : public testing::TestWithParam<LibraryCase> {};

TEST_P(ChunkingLibrary, PreservesResultsAndNeverDeadlocks) {
  const LibraryCase &Case = GetParam();
  Schedule Original = library(Case.Algorithm, Case.NRanks);
  for (int32_t Factor : {2, 3, 5}) {
    Schedule S = Original;
    ChunkingResult Result = chunkSchedule(S, Factor);
    EXPECT_TRUE(Result.Pipelined) << "factor " << Factor;
    EXPECT_EQ(Result.StepsAfter, Result.StepsBefore * Factor);
    expectSameResult(Original, S, Factor);
    expectVerified(S);
    fuseSteps(S);
    expectSameResult(Original, S, Factor);
    expectVerified(S);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Passes, ChunkingLibrary,
    testing::Values(LibraryCase{"ring-allreduce", 5}, LibraryCase{"ring-allreduce", 2},
                    LibraryCase{"ring-broadcast", 6}, LibraryCase{"ring-allgather", 4},
                    LibraryCase{"ring-reduce-scatter", 4}, LibraryCase{"tree-allreduce", 7},
                    LibraryCase{"butterfly-allreduce", 8},
                    LibraryCase{"halving-doubling-allreduce", 8}),
    [](const testing::TestParamInfo<LibraryCase> &Info) {
      std::string Name = std::string(Info.param.Algorithm) + std::to_string(Info.param.NRanks);
      std::erase(Name, '-');
      return Name;
    });

//===----------------------------------------------------------------------===//
// Copy folding
//===----------------------------------------------------------------------===//

Slice scratch(int32_t Chunk, int32_t Count = 1) {
  return Slice{BufferKind::Scratch, Chunk, Count};
}

/// Folds the copies of algorithms/<Name>.ccl on NRanks ranks: the pass's
/// statistics line is Summary and rank 0's program Rank0, and the result
/// verifies and computes what the original does.
void expectFolded(const std::string &Name, int32_t NRanks, const std::string &Summary,
                  const std::vector<std::string> &Rank0) {
  Schedule S = library(Name, NRanks);
  Schedule Original = S;
  EXPECT_EQ(plan::foldCopies(S).summary(), Summary);
  EXPECT_EQ(stepsText(S, 0), Rank0);
  expectVerified(S);
  expectSameResult(Original, S, 1);
}

TEST(CopyFolding, ReduceScatterReadsItsInputOnceAtTwoRanks) {
  expectFolded("recursive-halving-reduce-scatter", 2,
               "2 recv_reduce_copy (2 into the copy-out's destination), 2 sends from the source",
               {"send input[1] -> 1 (with next)", "recv_reduce_copy output[0] <- 1 + input[0]"});
}

TEST(CopyFolding, ALastCombineIntoScratchWritesWhereItIsCopiedOut) {
  // At 4 ranks the second round combines into what the first left in
  // scratch: that receive writes output, and the copy-out goes.
  expectFolded("recursive-halving-reduce-scatter", 4,
               "8 recv_reduce_copy (4 into the copy-out's destination), 4 sends from the source",
               {"send input[2..4] -> 2 (with next)",
                "recv_reduce_copy scratch[0..2] <- 2 + input[0..2]",
                "send scratch[1] -> 1 (with next)",
                "recv_reduce_copy output[0] <- 1 + scratch[0]"});
}

TEST(CopyFolding, TheRootOfAReduceCombinesIntoOutputOnce) {
  Schedule S = library("binomial-reduce", 4);
  Schedule Original = S;
  plan::CopyFoldingResult R = plan::foldCopies(S);
  EXPECT_EQ(R.ReduceCopies, 2u);
  EXPECT_EQ(stepsText(S, 0),
            (std::vector<std::string>{"recv_reduce_copy output[0] <- 2 + input[0]",
                                      "recv_reduce output[0] <- 1"}));
  // Rank 1 combines its child's data with its input and sends the result
  // on; rank 3, a leaf, sends its input itself.
  EXPECT_EQ(stepsText(S, 1),
            (std::vector<std::string>{"recv_reduce_copy scratch[0] <- 3 + input[0]",
                                      "send scratch[0] -> 0"}));
  EXPECT_EQ(stepsText(S, 3), (std::vector<std::string>{"send input[0] -> 1"}));
  expectVerified(S);
  expectSameResult(Original, S, 1);
}

TEST(CopyFolding, LibraryAlgorithmsComputeTheSame) {
  const std::pair<const char *, std::vector<int32_t>> Cases[] = {
      {"recursive-halving-reduce-scatter", {2, 4, 8}}, {"halving-doubling-allreduce", {2, 4, 8}},
      {"butterfly-allreduce", {2, 4, 8}},               {"binomial-reduce", {2, 3, 4, 5, 8}},
      {"tree-allreduce", {2, 3, 4, 8}},                 {"ring-reduce-scatter", {2, 3, 4}},
      {"ring-allreduce", {2, 3, 4}},                    {"ring-reduce", {2, 3, 4}}};
  for (const auto &[Name, RankCounts] : Cases)
    for (int32_t NRanks : RankCounts) {
      Schedule S = library(Name, NRanks);
      Schedule Original = S;
      plan::foldCopies(S);
      SCOPED_TRACE(std::string(Name) + " on " + std::to_string(NRanks) + " ranks");
      expectVerified(S);
      expectSameResult(Original, S, 1);
    }
}

TEST(CopyFolding, LeavesWhatItCannotFold) {
  auto Exchange = [](int32_t Peer, Slice Sent, OpKind Op, Slice Received) {
    Step Out = send(Peer, Sent);
    Out.WithNext = true;
    return std::vector<Step>{Out, receive(Op, Peer, Received)};
  };
  auto Program = [&](std::vector<Step> Before, int32_t Chunks = 1) {
    std::vector<std::vector<Step>> Programs;
    for (int32_t R = 0; R < 2; ++R) {
      std::vector<Step> P = Before;
      for (const Step &St : Exchange(1 - R, out(2, Chunks), OpKind::RecvReduce, out(0, Chunks)))
        P.push_back(St);
      Programs.push_back(std::move(P));
    }
    return handBuilt(std::move(Programs), 4);
  };
  Step ByPrimitive = local(OpKind::Copy, in(0), out(0));
  ByPrimitive.Primitive = "copy_streaming";
  const std::vector<Schedule> Kept = {
      // The copy's source changes before the receive.
      Program({local(OpKind::Copy, out(3), out(0)), local(OpKind::Copy, in(1), out(3))}),
      // Something reads the copy before the receive combines into it.
      Program({local(OpKind::Copy, in(0), out(0)), local(OpKind::Copy, out(0), out(1))}),
      // A copy by a chosen primitive.
      Program({ByPrimitive}),
      // In place, the source overlaps the destination without being it.
      Program({local(OpKind::Copy, in(1, 2), out(0, 2))}, 2),
  };
  for (const Schedule &Original : Kept) {
    Schedule S = Original;
    EXPECT_EQ(plan::foldCopies(S).ReduceCopies, 0u) << stepsText(Original, 0)[0];
    EXPECT_EQ(stepsText(S, 0), stepsText(Original, 0));
  }
  // A send of scratch that is read again keeps its copy; a combined chunk
  // of scratch that is read after its copy-out stays in scratch.
  std::vector<std::vector<Step>> Programs;
  for (int32_t R = 0; R < 2; ++R) {
    std::vector<Step> P = {local(OpKind::Copy, in(0, 2), scratch(0, 2))};
    for (const Step &St : Exchange(1 - R, scratch(1), OpKind::RecvReduce, scratch(0)))
      P.push_back(St);
    P.push_back(local(OpKind::Copy, scratch(0), out(0)));
    P.push_back(local(OpKind::Reduce, scratch(0, 2), out(2, 2)));
    Programs.push_back(std::move(P));
  }
  Schedule S = handBuilt(std::move(Programs), 4);
  S.Units.Scratch = 1;
  Schedule Original = S;
  plan::CopyFoldingResult R = plan::foldCopies(S);
  EXPECT_EQ(R.summary(),
            "2 recv_reduce_copy (0 into the copy-out's destination), 0 sends from the source");
  EXPECT_EQ(stepsText(S, 0),
            (std::vector<std::string>{"copy input[1] -> scratch[1]",
                                      "send scratch[1] -> 1 (with next)",
                                      "recv_reduce_copy scratch[0] <- 1 + input[0]",
                                      "copy scratch[0] -> output[0]",
                                      "reduce scratch[0..2] -> output[2..4]"}));
  expectSameResult(Original, S, 1);
}

TEST(CopyFolding, RotatedSchedulesAreLeftAlone) {
  // Rank 0's program alone, which every rank runs rotated: its copy may
  // not be cut where the other ranks' would not be.
  Step Out = send(1, out(2));
  Out.WithNext = true;
  Schedule S = handBuilt({{local(OpKind::Copy, in(0, 2), out(0, 2)), Out,
                           receive(OpKind::RecvReduce, 1, out(0))}},
                         4);
  S.Rotated = Rotation{0};
  std::vector<std::string> Before = stepsText(S, 0);
  plan::CopyFoldingResult R = plan::foldCopies(S);
  EXPECT_EQ(R.ReduceCopies + R.Sends, 0u);
  EXPECT_EQ(stepsText(S, 0), Before);
}

//===----------------------------------------------------------------------===//
// Fusion
//===----------------------------------------------------------------------===//

TEST(Fusion, ForwardedReceivesBecomeFusedSteps) {
  // Rank 1 forwards what it gets from rank 0 to rank 2.
  Schedule S = handBuilt({{send(1, out(0)), send(1, out(1))},
                          {receive(OpKind::RecvReduce, 0, out(0)),
                           local(OpKind::Copy, out(0), out(2)), send(2, out(0)),
                           receive(OpKind::Recv, 0, out(1)), send(2, out(1))},
                          {receive(OpKind::Recv, 1, out(0)), receive(OpKind::Recv, 1, out(1))}},
                         3);
  FusionResult Result = fuseSteps(S);
  EXPECT_EQ(Result.summary(), "1 recv_reduce_send, 1 recv_copy_send");
  EXPECT_EQ(stepsText(S, 1), (std::vector<std::string>{"recv_reduce_send output[0] <- 0 -> 2",
                                                        "copy output[0] -> output[2]",
                                                        "recv_copy_send output[1] <- 0 -> 2"}));
}

TEST(Fusion, LeavesStepsThatCannotFuse) {
  std::vector<Step> Rank1 = {
      // The data is overwritten before it is sent.
      receive(OpKind::Recv, 0, out(0)), local(OpKind::Copy, out(3), out(0)), send(2, out(0)),
      // A different slice is sent.
      receive(OpKind::Recv, 0, out(1)), send(2, out(1, 2)),
      // A receive in between: moving the send before it could deadlock.
      receive(OpKind::Recv, 0, out(2)), receive(OpKind::Recv, 2, out(3)), send(2, out(2)),
      // Half of an exchange.
      send(2, out(3)), receive(OpKind::Recv, 2, out(3)), send(2, out(3))};
  Rank1[8].WithNext = true;
  Schedule S = handBuilt({{}, std::move(Rank1), {}}, 4);
  std::vector<std::string> Before = stepsText(S, 1);
  FusionResult Result = fuseSteps(S);
  EXPECT_EQ(Result.RecvReduceSend + Result.RecvCopySend, 0u);
  EXPECT_EQ(stepsText(S, 1), Before);
}

TEST(Fusion, LeavesStepsOfChosenPrimitivesAlone) {
  // Fusing would replace the primitive the algorithm chose with the fused
  // form's own, on the receive or on the send.
  std::vector<Step> Rank1 = {receive(OpKind::Recv, 0, out(0)), send(2, out(0)),
                             receive(OpKind::RecvReduce, 0, out(1)), send(2, out(1))};
  Rank1[0].Primitive = "recv_streaming";
  Rank1[3].Primitive = "send_streaming";
  Schedule S = handBuilt({{}, std::move(Rank1), {}}, 2);
  FusionResult Result = fuseSteps(S);
  EXPECT_EQ(Result.RecvReduceSend + Result.RecvCopySend, 0u);
  EXPECT_EQ(stepsText(S, 1),
            (std::vector<std::string>{"recv output[0] <- 0 by recv_streaming",
                                      "send output[0] -> 2", "recv_reduce output[1] <- 0",
                                      "send output[1] -> 2 by send_streaming"}));
}

TEST(ProtocolSelection, GivesEveryMessageOfTheLibrarysPrimitivesTheProtocol) {
  std::vector<Step> Rank1 = {receive(OpKind::Recv, 0, out(0)), send(0, out(0)),
                             local(OpKind::Copy, out(0), out(1)), send(0, out(1)),
                             receive(OpKind::Recv, 0, out(2))};
  Rank1[3].Primitive = "send_streaming";
  Schedule S = handBuilt({{send(1, out(0)), receive(OpKind::Recv, 1, out(0)),
                           receive(OpKind::Recv, 1, out(1)), send(1, out(2))},
                          std::move(Rank1)},
                         3);
  ProtocolResult Result = selectProtocol(S, sched::Protocol::LL);
  EXPECT_EQ(Result.summary(), "7 steps by ll");
  EXPECT_EQ(stepsText(S, 1),
            (std::vector<std::string>{"recv output[0] <- 0 [ll]", "send output[0] -> 0 [ll]",
                                      "copy output[0] -> output[1]",
                                      "send output[1] -> 0 by send_streaming",
                                      "recv output[2] <- 0 [ll]"}));
  EXPECT_EQ(selectProtocol(S, sched::Protocol::Simple).Steps, 7u);
  EXPECT_EQ(stepsText(S, 1)[0], "recv output[0] <- 0");
}

TEST(Fusion, RingAllReduceForwardsEveryHopButTheLast) {
  Schedule Original = library("ring-allreduce", 4);
  Schedule S = Original;
  FusionResult Result = fuseSteps(S);
  // Per rank: 3 reduce-scatter receives and 2 of the 3 allgather receives
  // forward what they receive.
  EXPECT_EQ(Result.RecvReduceSend, 12u);
  EXPECT_EQ(Result.RecvCopySend, 8u);
  EXPECT_EQ(stepsText(S, 0).front(), "copy input[0..4] -> output[0..4]");
  EXPECT_EQ(stepsText(S, 0)[2], "recv_reduce_send output[3] <- 3 -> 1");
  EXPECT_EQ(stepsText(S, 0).back(), "recv output[2] <- 3");
  expectSameResult(Original, S, 1);
}

TEST(Fusion, FusesPipelinedSubChunks) {
  Schedule Original = library("tree-allreduce", 8);
  Schedule S = Original;
  chunkSchedule(S, 2);
  FusionResult Result = fuseSteps(S);
  EXPECT_GT(Result.RecvReduceSend, 0u);
  EXPECT_GT(Result.RecvCopySend, 0u);
  expectSameResult(Original, S, 2);
}

//===----------------------------------------------------------------------===//
// Channel parallelism
//===----------------------------------------------------------------------===//

TEST(ChannelParallel, ReplicatesFlatAlgorithmsOnTheirShare) {
  Schedule S = library("halving-doubling-allreduce", 8);
  ChannelParallelResult Result = parallelizeChannels(S, 3);
  EXPECT_EQ(Result.summary(), "1 -> 3 channels");
  ASSERT_EQ(S.NChannels, 3);
  EXPECT_EQ(S.ChunksPerChannel, 8);
  for (const RankProgram &R : S.Ranks) {
    ASSERT_EQ(R.Channels.size(), 3u);
    for (size_t I = 0; I < R.Channels[0].Steps.size(); ++I) {
      const Step &First = R.Channels[0].Steps[I];
      const Step &Last = R.Channels[2].Steps[I];
      EXPECT_EQ(Last.Peer, First.Peer);
      const Slice &Moved = First.Op == OpKind::Send ? First.Src : First.Dst;
      EXPECT_EQ((Last.Op == OpKind::Send ? Last.Src : Last.Dst).Chunk, Moved.Chunk + 16);
    }
  }
  expectAllReduce(S);
}

TEST(ChannelParallel, ButterflyOnFourChannels) {
  Schedule S = library("butterfly-allreduce", 8);
  parallelizeChannels(S, 4);
  EXPECT_EQ(S.NChannels, 4);
  EXPECT_EQ(stepsText(S, 1, 3).front(), "copy input[3] -> output[3]");
  expectAllReduce(S);
}

TEST(ChannelParallel, LeavesRingAlgorithmsAlone) {
  Schedule S = library("ring-allreduce", 4);
  ChannelParallelResult Result = parallelizeChannels(S, 4);
  EXPECT_EQ(Result.ChannelsAfter, 1);
  EXPECT_EQ(S.NChannels, 1);
}

//===----------------------------------------------------------------------===//
// The pipeline
//===----------------------------------------------------------------------===//

struct PipelineRun {
  SourceManager SM;
  std::ostringstream Errors;
  DiagnosticEngine Diags{SM, Errors};
  std::ostringstream Log;
  bool Ok = false;
};

std::unique_ptr<PipelineRun> runOn(Schedule &S, const PipelineOptions &Options) {
  auto Run = std::make_unique<PipelineRun>();
  Run->Ok = runPipeline(S, Options, Run->Log, Run->Diags);
  return Run;
}

TEST(Pipeline, RunsThePassesInOrder) {
  EXPECT_EQ(passNames(), (std::vector<std::string>{"channel-parallel", "copy-elision", "chunking",
                                                   "fusion", "copy-folding", "protocol"}));
  Schedule Original = library("butterfly-allreduce", 4);
  Schedule S = Original;
  PipelineOptions Options;
  Options.Channels = 2;
  Options.ChunksFactor = 2;
  Options.Stats = true;
  Options.VerifyEach = true;
  Options.PrintAfter = {"chunking"};
  std::unique_ptr<PipelineRun> Run = runOn(S, Options);
  ASSERT_TRUE(Run->Ok) << Run->Errors.str();
  std::string Log = Run->Log.str();
  EXPECT_NE(Log.find("stats: channel-parallel: 1 -> 2 channels\n"), std::string::npos) << Log;
  EXPECT_NE(Log.find("stats: chunking: factor 2, 1 stages, 40 -> 80 steps\n"),
            std::string::npos)
      << Log;
  EXPECT_NE(Log.find("stats: fusion: 0 recv_reduce_send, 0 recv_copy_send\n"),
            std::string::npos)
      << Log;
  EXPECT_NE(Log.find("*** schedule after chunking ***\nschedule butterfly_allreduce"),
            std::string::npos)
      << Log;
  EXPECT_EQ(Log.find("after fusion"), std::string::npos);
  expectAllReduce(S);
}

TEST(Pipeline, DisabledPassesDoNotRun) {
  Schedule S = library("ring-allreduce", 4);
  PipelineOptions Options;
  // Copy folding would fold the unfused receive into the copy before it.
  Options.Disabled = {"fusion", "copy-folding"};
  Options.PrintAfter = {"all"};
  std::unique_ptr<PipelineRun> Run = runOn(S, Options);
  ASSERT_TRUE(Run->Ok);
  EXPECT_NE(Run->Log.str().find("after chunking"), std::string::npos);
  EXPECT_EQ(Run->Log.str().find("after fusion"), std::string::npos);
  EXPECT_EQ(S.Ranks[0].Channels[0].Steps[2].Op, OpKind::RecvReduce);
}

TEST(Pipeline, RejectsFactorsBeyondTheChunkGrid) {
  Schedule S = library("ring-allreduce", 4);
  PipelineOptions Options;
  Options.ChunksFactor = 1 << 30;
  std::unique_ptr<PipelineRun> Run = runOn(S, Options);
  EXPECT_FALSE(Run->Ok);
  EXPECT_NE(Run->Errors.str().find("error: --chunks-factor 1073741824 is too large for "
                                   "'ring_allreduce' on 4 ranks"),
            std::string::npos)
      << Run->Errors.str();
}

} // namespace
