//===- PlanTest.cpp - The plan core shared by compiler and runtime --------===//

#include "LibrarySchedule.h"

#include "compiler/Compile.h"
#include "plan/Assert.h"
#include "plan/Program.h"
#include "plan/RingSchedules.h"
#include "plan/Verifier.h"
#include "plan/Vocabulary.h"

#include <gtest/gtest.h>

namespace cclc {
namespace {

using plan::CollectiveKind;
using plan::OpKind;

TEST(Vocabulary, EverySpellingParsesBack) {
  for (plan::DType T : plan::allDTypes())
    EXPECT_EQ(plan::parseDType(plan::dtypeName(T)), T);
  for (plan::RedOp Op : plan::allRedOps())
    EXPECT_EQ(plan::parseRedOp(plan::redOpName(Op)), Op);
  for (OpKind Op : {OpKind::Send, OpKind::RecvReduceSend, OpKind::Exchange, OpKind::ExchangeReduce,
                    OpKind::RecvReduceCopy})
    EXPECT_EQ(plan::parseOp(plan::opName(Op)), Op);
  EXPECT_EQ(plan::parseDType("bf16"), plan::DType::BF16);
  EXPECT_EQ(plan::parseDType("f33"), std::nullopt);
  EXPECT_EQ(plan::parseCollective("reduce_scatter"), CollectiveKind::ReduceScatter);
  EXPECT_EQ(plan::allDTypes().size(), 10u);
  EXPECT_EQ(plan::stepOps().size(), 8u) << "schedule steps never are exchanges";
}

TEST(Vocabulary, ElementSizesMatchTheTemplateTypes) {
  EXPECT_EQ(plan::dtypeBytes(plan::DType::BF16), 2u);
  EXPECT_EQ(plan::dtypeBytes(plan::DType::U64), 8u);
  EXPECT_EQ(plan::dtypeBytes(plan::DType::I8), 1u);
}

TEST(Vocabulary, BytesAreFormattedInExactBinaryUnits) {
  EXPECT_EQ(plan::formatBytes(4096), "4 KiB");
  EXPECT_EQ(plan::formatBytes(1000), "1000 B");
  EXPECT_EQ(plan::formatBytes(uint64_t(3) << 30), "3 GiB");
}

/// algorithms/ring-<collective>.ccl compiled as `cclc compile --nranks N
/// --root R` compiles it.
sched::Schedule compiledRing(CollectiveKind Collective, int32_t NRanks, int32_t Root) {
  std::string Name = "ring-" + std::string(plan::collectiveName(Collective));
  std::replace(Name.begin(), Name.end(), '_', '-');
  SourceManager SM;
  std::ostringstream Errors;
  DiagnosticEngine Diags(SM, Errors);
  std::unique_ptr<dsl::Algorithm> Algo = test::libraryAlgorithm(Name, SM, Diags);
  compiler::BuildOptions Options;
  Options.Root = Root;
  std::ostream Discard(nullptr);
  std::optional<sched::Schedule> S =
      Algo ? compiler::buildSchedule(*Algo, target::flatTarget(NRanks), Options, Discard, Diags)
           : std::nullopt;
  EXPECT_TRUE(S) << Errors.str();
  return S ? *S : sched::Schedule{};
}

/// Steps equal in everything an executor reads (not the .ccl location).
bool sameSteps(const sched::Step &A, const sched::Step &B) {
  return A.Op == B.Op && A.Peer == B.Peer && A.SendPeer == B.SendPeer && A.Src == B.Src &&
         A.Dst == B.Dst && A.WithNext == B.WithNext && A.Primitive == B.Primitive;
}

TEST(RingSchedules, EqualTheCompiledLibraryRings) {
  for (CollectiveKind Collective :
       {CollectiveKind::AllReduce, CollectiveKind::AllGather, CollectiveKind::ReduceScatter,
        CollectiveKind::Broadcast, CollectiveKind::Reduce})
    for (int32_t NRanks = 1; NRanks <= 9; ++NRanks)
      for (int32_t Root = 0; Root < NRanks; ++Root) {
        SCOPED_TRACE(std::string(plan::collectiveName(Collective)) + " on " +
                     std::to_string(NRanks) + " ranks, root " + std::to_string(Root));
        std::optional<sched::Schedule> Built = plan::ringSchedule(Collective, NRanks, Root);
        ASSERT_TRUE(Built);
        sched::Schedule Compiled = compiledRing(Collective, NRanks, Root);
        EXPECT_EQ(Built->Algorithm, Compiled.Algorithm);
        EXPECT_EQ(Built->Topology, Compiled.Topology);
        EXPECT_EQ(Built->NChannels, Compiled.NChannels);
        EXPECT_EQ(Built->ChunksPerChannel, Compiled.ChunksPerChannel);
        EXPECT_EQ(Built->Root, Compiled.Root);
        EXPECT_EQ(Built->BufferSlots, Compiled.BufferSlots);
        EXPECT_EQ(Built->Units.Scratch, Compiled.Units.Scratch);
        EXPECT_EQ(Built->Remap, Compiled.Remap);
        ASSERT_EQ(Built->Ranks.size(), Compiled.Ranks.size());
        for (size_t R = 0; R < Built->Ranks.size(); ++R) {
          const auto &A = Built->Ranks[R].Channels[0].Steps;
          const auto &B = Compiled.Ranks[R].Channels[0].Steps;
          ASSERT_EQ(A.size(), B.size()) << "rank " << R;
          for (size_t I = 0; I < A.size(); ++I)
            EXPECT_TRUE(sameSteps(A[I], B[I])) << "rank " << R << " step " << I;
        }
        SourceManager SM;
        DiagnosticEngine Diags(SM);
        EXPECT_TRUE(verify::verifySchedule(*Built, Diags));
      }
  EXPECT_FALSE(plan::ringSchedule(CollectiveKind::AllToAll, 4, 0));
}

/// Steps name the loop iteration that made them through one interned entry
/// per iteration, shared by every rank, so that the memory it takes does not
/// grow with the rank count.
TEST(LoopIterations, EveryRankSharesOneEntryPerIteration) {
  const int32_t N = 8;
  sched::Schedule S = compiledRing(CollectiveKind::AllReduce, N, 0);
  ASSERT_EQ(S.Loops.size(), 2u);
  EXPECT_EQ(S.Loops[0].Var, "s");
  EXPECT_LT(S.Loops[0].Loc.Line, S.Loops[1].Loc.Line);
  EXPECT_EQ(S.Iterations.size(), size_t(2 * (N - 1)));
  // Fusion has joined hops, so the steps are fewer than the statements run,
  // but every rank's step I still comes from the same iteration.
  const std::vector<sched::Step> &First = S.Ranks[0].Channels[0].Steps;
  EXPECT_EQ(First.front().Iteration, 0u) << "the copy runs outside every loop";
  const sched::LoopIteration &Last = S.iteration(First.back().Iteration);
  EXPECT_EQ(Last.Parent, 0u);
  EXPECT_EQ(Last.Loop, 1u);
  EXPECT_EQ(Last.Value, N - 2);
  for (const sched::RankProgram &R : S.Ranks) {
    const std::vector<sched::Step> &Steps = R.Channels[0].Steps;
    ASSERT_EQ(Steps.size(), First.size());
    for (size_t I = 1; I < Steps.size(); ++I) {
      EXPECT_NE(Steps[I].Iteration, 0u);
      EXPECT_EQ(Steps[I].Iteration, First[I].Iteration);
    }
  }
}

/// A step of Op with Peer, Src and Dst, every other field its default.
sched::Step stepOf(OpKind Op, int32_t Peer, sched::Slice Src, sched::Slice Dst,
                   bool WithNext = false) {
  sched::Step St;
  St.Op = Op;
  St.Peer = Peer;
  St.Src = Src;
  St.Dst = Dst;
  St.WithNext = WithNext;
  return St;
}

TEST(Lowering, JoinsASendAndTheReceiveWithItIntoAnExchange) {
  std::vector<sched::Step> Steps = {
      stepOf(OpKind::Send, 1, {plan::BufferKind::Output, 0, 1}, {}, /*WithNext=*/true),
      stepOf(OpKind::RecvReduce, 2, {}, {plan::BufferKind::Output, 1, 1}),
      stepOf(OpKind::Copy, -1, {plan::BufferKind::Input, 0, 2}, {plan::BufferKind::Scratch, 0, 2})};
  std::vector<plan::LoweredStep> Calls = plan::lowerChannel(Steps);
  ASSERT_EQ(Calls.size(), 2u);
  EXPECT_EQ(Calls[0].Call.Op, OpKind::ExchangeReduce);
  EXPECT_EQ(Calls[0].Call.SendPeer, 1);
  EXPECT_EQ(Calls[0].Call.RecvPeer, 2);
  EXPECT_EQ(Calls[0].Call.Dst.Chunk, 1);
  EXPECT_EQ(Calls[1].Call.Op, OpKind::Copy);
  EXPECT_EQ(Calls[1].Call.Dst.Buffer, plan::BufferKind::Scratch);
}

TEST(Lowering, AnUnverifiedGroupIsAnInternalErrorNotACrash) {
  std::vector<sched::Step> Steps = {
      stepOf(OpKind::Copy, -1, {plan::BufferKind::Input, 0, 1}, {plan::BufferKind::Output, 0, 1},
             /*WithNext=*/true),
      stepOf(OpKind::Send, 1, {plan::BufferKind::Output, 0, 1}, {})};
  EXPECT_THROW((void)plan::lowerChannel(Steps), InternalError);
}

} // namespace
} // namespace cclc
