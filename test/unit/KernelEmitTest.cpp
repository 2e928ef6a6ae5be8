//===- KernelEmitTest.cpp - Closed forms and the structure of kernels -----===//
//
// The fits must reproduce every value they were fit to and print the way a
// person would write them; the structure must share code wherever ranks and
// channels run alike; and the emitter must refuse calls the template library
// cannot serve. Whether the generated code runs right is ExecTests' job (the
// generated kernels against the plan interpreter); whether it compiles, the
// lit tests'.
//
//===----------------------------------------------------------------------===//

#include "compiler/codegen/KernelEmit.h"
#include "compiler/codegen/IndexFit.h"
#include "compiler/codegen/KernelStructure.h"
#include "compiler/Compile.h"
#include "compiler/target/Target.h"
#include "dsl/Frontend.h"

#include <gtest/gtest.h>

#include <functional>
#include <numeric>
#include <sstream>

namespace cclc::codegen {
namespace {

/// The physical numbering of N ranks, and optionally a permuted one.
std::vector<Numbering> numberings(int32_t N, std::vector<int32_t> Back = {}) {
  std::vector<Numbering> Nums(1);
  Nums[0].Var = "Rank";
  Nums[0].Of.resize(N);
  std::iota(Nums[0].Of.begin(), Nums[0].Of.end(), 0);
  if (!Back.empty()) {
    Numbering Other{"L", "LogicalRank", "Remap", std::vector<int32_t>(N), Back, "logical"};
    for (int32_t I = 0; I < N; ++I)
      Other.Of[Back[I]] = I;
    Nums.push_back(std::move(Other));
  }
  return Nums;
}

/// Fits F(rank, step) over every rank and Steps steps, checks that the fit
/// reproduces every value, and returns it printed for all steps.
std::optional<std::string> fitAndPrint(int32_t N, int32_t Steps,
                                       const std::function<int32_t(int32_t, int32_t)> &F,
                                       const std::vector<Numbering> &Nums,
                                       std::vector<int32_t> Moduli = {}) {
  FitDomain D;
  D.Ranks.resize(N);
  std::iota(D.Ranks.begin(), D.Ranks.end(), 0);
  D.Steps = Steps;
  std::vector<int32_t> Values;
  for (int32_t R = 0; R < N; ++R)
    for (int32_t S = 0; S < Steps; ++S)
      Values.push_back(F(R, S));
  if (Moduli.empty())
    Moduli = {N};
  std::optional<IndexExpr> E = fitIndex(D, Values, Nums, Moduli);
  if (!E)
    return std::nullopt;
  for (int32_t R = 0; R < N; ++R)
    for (int32_t S = 0; S < Steps; ++S)
      EXPECT_EQ(evaluateIndex(*E, D, R, S, Nums), F(R, S)) << "rank " << R << " step " << S;
  return printIndex(*E, D, std::nullopt, Nums, false);
}

TEST(IndexFit, RingNeighboursAndChunks) {
  auto Nums = numberings(4);
  EXPECT_EQ(fitAndPrint(
                4, 1, [](int R, int) { return (R + 1) % 4; }, Nums),
            "(Rank + 1) % 4");
  EXPECT_EQ(fitAndPrint(
                4, 1, [](int R, int) { return (R + 3) % 4; }, Nums),
            "(Rank + 3) % 4");
  // Reduce-scatter chunks: (pos - s - 1) mod n, over a loop.
  EXPECT_EQ(fitAndPrint(
                4, 3, [](int R, int S) { return ((R - S - 1) % 4 + 4) % 4; }, Nums),
            "(Rank + 3 * S + 3) % 4");
  // Split chunks: the chunking pass doubles every index.
  EXPECT_EQ(
      fitAndPrint(4, 3, [](int R, int S) { return 2 * (((R - S) % 4 + 4) % 4) + 1; }, Nums, {8, 4}),
      "(2 * Rank + 6 * S + 1) % 8");
  // A modulo that never wraps is left out.
  EXPECT_EQ(fitAndPrint(4, 1, [](int R, int) { return R + 4; }, Nums, {8}), "Rank + 4");
  EXPECT_EQ(fitAndPrint(
                4, 2, [](int, int) { return 5; }, Nums),
            "5");
}

TEST(IndexFit, BitFlips) {
  auto Nums = numberings(8);
  EXPECT_EQ(fitAndPrint(
                8, 3, [](int R, int S) { return R ^ (1 << S); }, Nums),
            "Rank ^ (1 << S)");
  EXPECT_EQ(fitAndPrint(
                8, 3, [](int R, int S) { return R ^ (4 >> S); }, Nums),
            "Rank ^ (4 >> S)");
  // Halving-doubling windows: the rank's high bits, one flipped.
  EXPECT_EQ(fitAndPrint(
                8, 1, [](int R, int) { return (R & 6) ^ 2; }, Nums),
            "(Rank & 6) ^ 2");
  // Their sub-chunks once split in two, one step per sub-chunk.
  EXPECT_EQ(fitAndPrint(8, 2, [](int R, int S) { return 2 * ((R & 4) ^ 4) + 4 * S; }, Nums, {16}),
            "2 * ((Rank & 4) ^ 4) + 4 * S");
}

TEST(IndexFit, LogicalRanksMapBack) {
  // The butterfly's remap: logical l runs on physical (l + 1) % n.
  std::vector<int32_t> Remap = {1, 2, 3, 4, 5, 6, 7, 0};
  auto Nums = numberings(8, Remap);
  auto Peer = [&](int R, int S) { return Remap[Nums[1].Of[R] ^ (1 << S)]; };
  EXPECT_EQ(fitAndPrint(8, 3, Peer, Nums), "Remap[L ^ (1 << S)]");
}

TEST(IndexFit, IrregularValuesHaveNoForm) {
  auto Nums = numberings(8);
  const int32_t Parent[8] = {0, 2, 4, 2, 0, 6, 4, 6};
  EXPECT_EQ(fitAndPrint(
                8, 1, [&](int R, int) { return Parent[R]; }, Nums),
            std::nullopt);
}

TEST(IndexFit, PrintsOneStepFolded) {
  auto Nums = numberings(4);
  FitDomain D{{0, 1, 2, 3}, 3};
  std::vector<int32_t> Values;
  for (int32_t R = 0; R < 4; ++R)
    for (int32_t S = 0; S < 3; ++S)
      Values.push_back((R + 3 * S + 3) % 4);
  std::optional<IndexExpr> E = fitIndex(D, Values, Nums, {4});
  ASSERT_TRUE(E);
  EXPECT_EQ(printIndex(*E, D, 0, Nums, false), "(Rank + 3) % 4");
  EXPECT_EQ(printIndex(*E, D, 1, Nums, false), "(Rank + 2) % 4");
  // One rank's class: every step is a constant.
  FitDomain One{{2}, 3};
  EXPECT_EQ(printIndex(*E, One, 2, Nums, false), "3");
}

/// A library algorithm compiled for N flat ranks.
struct Compiled {
  Compiled(const std::string &Stem, int32_t N, compiler::BuildOptions Options = {}) {
    std::string Error;
    std::optional<uint32_t> Id =
        SM.loadFile(std::string(CCLC_SOURCE_DIR) + "/algorithms/" + Stem + ".ccl", Error);
    EXPECT_TRUE(Id) << Error;
    dsl::OperationCatalog Ops;
    std::unique_ptr<dsl::Algorithm> Algo = dsl::parseAndCheck(*Id, Ops, Diags);
    EXPECT_TRUE(Algo) << Output.str();
    std::ostringstream Log;
    Schedule = compiler::buildSchedule(*Algo, target::flatTarget(N), Options, Log, Diags);
    EXPECT_TRUE(Schedule) << Output.str();
  }
  SourceManager SM;
  std::ostringstream Output;
  DiagnosticEngine Diags{SM, Output};
  std::optional<sched::Schedule> Schedule;
};

/// S with physical rank r renamed Perm[r]: a ring the search laid out in
/// another order than the ranks'.
sched::Schedule relabel(const sched::Schedule &S, const std::vector<int32_t> &Perm) {
  sched::Schedule Out = S;
  for (int32_t R = 0; R < S.NRanks; ++R) {
    sched::RankProgram &P = Out.Ranks[Perm[R]];
    P = S.Ranks[R];
    for (sched::ChannelProgram &C : P.Channels)
      for (sched::Step &St : C.Steps) {
        if (St.Peer >= 0)
          St.Peer = Perm[St.Peer];
        if (St.SendPeer >= 0)
          St.SendPeer = Perm[St.SendPeer];
      }
  }
  for (int32_t L = 0; L < S.NRanks; ++L)
    Out.Remap[L] = Perm[S.Remap[L]];
  return Out;
}

TEST(KernelStructure, RingSharesOneClassWithoutTables) {
  Compiled Ring("ring-allreduce", 6);
  ASSERT_TRUE(Ring.Schedule);
  KernelStructure K = analyzeKernel(*Ring.Schedule);
  ASSERT_EQ(K.Programs.size(), 1u);
  EXPECT_EQ(K.Programs[0].Classes.size(), 1u);
  EXPECT_TRUE(K.Programs[0].Tables.empty());
  EXPECT_EQ(K.Programs[0].Numberings.size(), 1u) << "the ring follows the ranks' own order";
  EXPECT_EQ(K.MaxMessageChunks, 1);
  EXPECT_EQ(K.ScratchUnits, 0);
}

TEST(KernelStructure, PermutedRingIsNumberedByPosition) {
  Compiled Ring("ring-allreduce", 6);
  ASSERT_TRUE(Ring.Schedule);
  sched::Schedule Permuted = relabel(*Ring.Schedule, {0, 4, 1, 5, 3, 2});
  KernelStructure K = analyzeKernel(Permuted);
  const ChannelProgram &P = K.Programs[0];
  ASSERT_EQ(P.Numberings.size(), 2u);
  EXPECT_EQ(P.Numberings[1].Back, (std::vector<int32_t>{0, 4, 1, 5, 3, 2}));
  EXPECT_TRUE(P.Tables.empty()) << "positions give every peer and chunk a closed form";
}

TEST(KernelStructure, TreeRanksFallIntoClasses) {
  Compiled Tree("tree-allreduce", 8);
  ASSERT_TRUE(Tree.Schedule);
  KernelStructure K = analyzeKernel(*Tree.Schedule);
  ASSERT_EQ(K.Programs.size(), 2u) << "the two trees differ";
  EXPECT_EQ(K.Programs[0].ClassOfRank, (std::vector<int32_t>{0, 1, 2, 1, 2, 1, 2, 1}));
  EXPECT_FALSE(K.Programs[0].Tables.empty());
}

TEST(KernelStructure, EqualChannelsShareAProgram) {
  compiler::BuildOptions TwoChannels;
  TwoChannels.Channels = 2;
  Compiled HD("halving-doubling-allreduce", 8, TwoChannels);
  ASSERT_TRUE(HD.Schedule);
  KernelStructure K = analyzeKernel(*HD.Schedule);
  ASSERT_EQ(K.Programs.size(), 1u);
  EXPECT_EQ(K.Programs[0].Channels, (std::vector<int32_t>{0, 1}));
}

/// A schedule of two ranks that exchange chunk 0 after copying input.
sched::Schedule exchangePair() {
  sched::Schedule S;
  S.Algorithm = "pair";
  S.NRanks = 2;
  S.Remap = {0, 1};
  S.Units = sched::bufferUnits(plan::CollectiveKind::AllReduce, 2);
  for (int32_t R = 0; R < 2; ++R) {
    sched::RankProgram P;
    P.LogicalRank = R;
    sched::ChannelProgram C;
    sched::Step Copy;
    Copy.Op = sched::OpKind::Copy;
    Copy.Src = {sched::BufferKind::Input, 0, 1};
    Copy.Dst = {sched::BufferKind::Output, 0, 1};
    sched::Step Send;
    Send.Op = sched::OpKind::Send;
    Send.Peer = 1 - R;
    Send.Src = {sched::BufferKind::Input, 0, 1};
    Send.WithNext = true;
    sched::Step Recv;
    Recv.Op = sched::OpKind::RecvReduce;
    Recv.Peer = 1 - R;
    Recv.Dst = {sched::BufferKind::Output, 0, 1};
    C.Steps = {Copy, Send, Recv};
    P.Channels.push_back(C);
    S.Ranks.push_back(P);
  }
  return S;
}

/// Emits S's host kernels with the real host library, returning the
/// diagnostics.
std::string emitHost(const sched::Schedule &S, bool &Emitted) {
  SourceManager SM;
  std::ostringstream Output;
  DiagnosticEngine Diags(SM, Output);
  std::optional<TemplateCatalog> Catalog =
      TemplateCatalog::load({KernelTarget::Host, CCLC_SOURCE_DIR "/templates", {}}, SM, Diags);
  EXPECT_TRUE(Catalog) << Output.str();
  KernelEmitOptions Opts;
  Opts.Stem = "pair";
  std::optional<std::vector<GeneratedFile>> Files = emitKernels(S, *Catalog, Opts, Diags);
  Emitted = Files.has_value();
  if (Files) {
    EXPECT_EQ(Files->size(), 2u);
    EXPECT_NE((*Files)[1].Text.find("host::exchangeReduce<T, Op>(Args.Net->out(Rank ^ 1, 0)"),
              std::string::npos)
        << (*Files)[1].Text;
  }
  return Output.str();
}

TEST(KernelEmit, ExchangesBecomeOneCall) {
  bool Emitted = false;
  EXPECT_EQ(emitHost(exchangePair(), Emitted), "");
  EXPECT_TRUE(Emitted);
}

TEST(KernelEmit, RefusesPrimitivesTheLibraryLacks) {
  sched::Schedule S = exchangePair();
  for (sched::RankProgram &P : S.Ranks)
    P.Channels[0].Steps[0].Primitive = "copy_sideways";
  bool Emitted = true;
  EXPECT_NE(emitHost(S, Emitted)
                .find("error: the host template library has no primitive "
                      "'copy_sideways'"),
            std::string::npos);
  EXPECT_FALSE(Emitted);
}

TEST(KernelEmit, RefusesPrimitivesOfAnotherEffect) {
  sched::Schedule S = exchangePair();
  for (sched::RankProgram &P : S.Ranks)
    P.Channels[0].Steps[0].Primitive = "reduce";
  bool Emitted = true;
  EXPECT_NE(emitHost(S, Emitted)
                .find("error: primitive 'reduce' (cclc::host::reduce) has effect "
                      "'reduce', but the step needs 'copy'"),
            std::string::npos);
  EXPECT_FALSE(Emitted);
}

TEST(KernelEmit, Stem) { EXPECT_EQ(kernelStem("dir/ring-allreduce.v2.ccl"), "ring-allreduce"); }

} // namespace
} // namespace cclc::codegen
