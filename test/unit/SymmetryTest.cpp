//===- SymmetryTest.cpp - Proofs at rank 0 under a symmetry ---------------===//
//
// The verifier runs a symmetric schedule at rank 0 alone. These tests check
// that the symmetries found are the ones the library's algorithms have, and
// that the verdict and every message are those of the exhaustive run, on
// the library's schedules and on mutants of them that keep or break the
// symmetry.
//
//===----------------------------------------------------------------------===//

#include "LibrarySchedule.h"

#include "compiler/Compile.h"
#include "plan/Contents.h"
#include "plan/Symmetry.h"
#include "plan/Verifier.h"

#include <gtest/gtest.h>
#include <functional>
#include <sstream>
#include <string>

using namespace cclc;
using namespace cclc::sched;
using verify::ProofKind;

namespace {

class SymmetryTest : public ::testing::Test {
protected:
  /// algorithms/<Name>.ccl as `cclc compile --nranks N` builds it, with the
  /// chunking factor and ring channels given (a second ring runs backwards).
  Schedule build(const std::string &Name, int32_t NRanks, int32_t ChunksFactor = 1,
                 int32_t Rings = 1) {
    std::unique_ptr<dsl::Algorithm> Algo = test::libraryAlgorithm(Name, SM, Diags);
    target::Target Target = target::flatTarget(NRanks);
    if (Rings > 1)
      Target.Rings.emplace_back(Target.Rings[0].rbegin(), Target.Rings[0].rend());
    compiler::BuildOptions Options;
    Options.Pipeline.ChunksFactor = ChunksFactor;
    std::ostream Discard(nullptr);
    std::optional<Schedule> S =
        Algo ? compiler::buildSchedule(*Algo, Target, Options, Discard, Diags) : std::nullopt;
    EXPECT_TRUE(S) << Out.str();
    return S ? std::move(*S) : Schedule{};
  }

  /// The verdict and everything printed, with or without the symmetry.
  std::pair<bool, std::string> verdict(const Schedule &S, bool UseSymmetry,
                                       ProofKind *Proof = nullptr) {
    // A fresh engine each time: an engine stops printing after 50 errors.
    std::ostringstream Text;
    DiagnosticEngine Fresh(SM, Text);
    bool Ok = verify::verifySchedule(S, Fresh, verify::VerifyOptions{UseSymmetry}, Proof);
    return {Ok, Text.str()};
  }

  ProofKind proofOf(const Schedule &S) {
    ProofKind Proof = ProofKind::Exhaustive;
    auto [Ok, Text] = verdict(S, true, &Proof);
    EXPECT_TRUE(Ok) << Text;
    return Proof;
  }

  SourceManager SM;
  std::ostringstream Out;
  DiagnosticEngine Diags{SM, Out};
};

TEST_F(SymmetryTest, RingsRotateAndHalvingDoublingFlipsBits) {
  for (int32_t N : {2, 3, 5, 8, 9, 16}) {
    EXPECT_EQ(proofOf(build("ring-allreduce", N)), ProofKind::Rotation) << N << " ranks";
    EXPECT_EQ(proofOf(build("ring-allreduce", N, 1, 2)), ProofKind::Rotation) << N << " ranks";
  }
  // Chunked, each rank copies its input in pieces at fixed offsets between
  // its first sends. From 5 ranks that happens before any rank sends.
  for (int32_t N : {5, 8, 16})
    EXPECT_EQ(proofOf(build("ring-allreduce", N, 4)), ProofKind::Rotation) << N << " ranks";
  EXPECT_EQ(proofOf(build("ring-allreduce", 3, 4)), ProofKind::Exhaustive);
  for (int32_t N : {4, 8, 64})
    EXPECT_EQ(proofOf(build("halving-doubling-allreduce", N)), ProofKind::Xor) << N << " ranks";
  // Two ranks are one rotation as much as one flip.
  EXPECT_EQ(proofOf(build("halving-doubling-allreduce", 2)), ProofKind::Rotation);
  // Chunked, an exchange of a block becomes exchanges of its pieces in
  // order: a rank whose renaming swaps the pieces sends them in the other
  // order, so no step-by-step image exists.
  EXPECT_EQ(proofOf(build("halving-doubling-allreduce", 8, 2)), ProofKind::Exhaustive);
  // The butterfly flips bits of the logical ranks its remap places.
  for (int32_t N : {4, 8, 64})
    EXPECT_EQ(proofOf(build("butterfly-allreduce", N)), ProofKind::Xor) << N << " ranks";
  // A tree's root and leaves run different programs: proved rank by rank.
  EXPECT_EQ(proofOf(build("tree-allreduce", 8)), ProofKind::Exhaustive);
}

/// Step I of every rank changed by Change(rank, step), which a test writes
/// so that it commutes with the schedule's symmetry (or breaks it on
/// purpose).
Schedule mutated(Schedule S, size_t I, const std::function<void(int32_t, Step &)> &Change) {
  for (int32_t R = 0; R < S.NRanks; ++R)
    for (ChannelProgram &C : S.Ranks[R].Channels)
      if (I < C.Steps.size())
        Change(R, C.Steps[I]);
  return S;
}

TEST_F(SymmetryTest, MutantsGetTheExhaustiveVerdictAndMessages) {
  struct Subject {
    const char *Name;
    int32_t NRanks;
    int32_t ChunksFactor;
    int32_t Rings;
  };
  int Rejected = 0, StillSymmetric = 0;
  for (const Subject &Sub :
       {Subject{"ring-allreduce", 5, 1, 1}, Subject{"ring-allreduce", 6, 2, 1},
        Subject{"ring-allreduce", 4, 1, 2}, Subject{"halving-doubling-allreduce", 8, 1, 1},
        Subject{"butterfly-allreduce", 8, 1, 1}}) {
    const Schedule Original = build(Sub.Name, Sub.NRanks, Sub.ChunksFactor, Sub.Rings);
    const std::optional<verify::Symmetry> Sym = verify::findSymmetry(Original);
    ASSERT_TRUE(Sym) << Sub.Name;
    const bool Xor = Sym->kind() == verify::SymmetryKind::Xor;
    const int32_t Region = Original.channelChunks(BufferKind::Output);
    const int32_t N = Original.NRanks;
    // Each moves rank 0's step and renames the move at every other rank, so
    // that the mutant keeps the symmetry; the last breaks it.
    const std::vector<std::function<void(int32_t, Step &)>> Changes = {
        [&](int32_t, Step &St) {
          for (Slice *Sl : {&St.Src, &St.Dst})
            if (Sl->Count > 0)
              Sl->Chunk = Xor ? Sl->Chunk ^ Sl->Count : (Sl->Chunk + 1) % Region;
        },
        [&](int32_t, Step &St) {
          if (St.Peer >= 0)
            St.Peer = Xor ? St.Peer ^ 1 : (St.Peer + 1) % N;
        },
        [](int32_t, Step &St) {
          if (St.Op == OpKind::RecvReduce)
            St.Op = OpKind::Recv;
          else if (St.Op == OpKind::Recv)
            St.Op = OpKind::RecvReduce;
        },
        [](int32_t, Step &St) { St.WithNext = !St.WithNext; },
        [](int32_t, Step &St) { St.Op = OpKind::Copy, St.Src = St.Dst, St.Peer = -1; },
        [&](int32_t R, Step &St) {
          if (R == N - 1 && St.Dst.Count > 0)
            St.Dst.Chunk = (St.Dst.Chunk + 1) % Region;
        },
    };
    for (int32_t Slots : {1, 2})
      for (size_t I = 0; I < Original.Ranks[0].Channels[0].Steps.size(); ++I)
        for (size_t K = 0; K < Changes.size(); ++K) {
          Schedule M = mutated(Original, I, Changes[K]);
          M.BufferSlots = Slots;
          auto [SymOk, SymText] = verdict(M, true);
          auto [AllOk, AllText] = verdict(M, false);
          EXPECT_EQ(SymOk, AllOk) << Sub.Name << " step " << I << " change " << K << ":\n"
                                  << AllText;
          EXPECT_EQ(SymText, AllText) << Sub.Name << " step " << I << " change " << K;
          Rejected += !AllOk;
          StillSymmetric += !AllOk && verify::findSymmetry(M).has_value();
        }
  }
  // The mutants exercised the failures of the run at rank 0, not only
  // schedules that lost their symmetry.
  EXPECT_GT(Rejected, 100);
  EXPECT_GT(StillSymmetric, 50);
}

TEST(RankSetRenaming, RunsStayRunsAndOtherSetsAreRenamedRankByRank) {
  for (int32_t N : {8, 65536}) {
    verify::RankSets Sets(N);
    auto Of = [&](std::initializer_list<int32_t> Ranks) {
      verify::RankSets::Id Set = Sets.single(*Ranks.begin());
      for (int32_t R : Ranks)
        Set = Sets.merge(Set, Sets.single(R));
      return Set;
    };
    EXPECT_EQ(Sets.rotated(Of({N - 2, N - 1}), 1), Of({N - 1, 0}));
    EXPECT_EQ(Sets.rotated(Of({0, 2, 3}), N - 1), Of({N - 1, 1, 2}));
    EXPECT_EQ(Sets.rotated(Sets.all(), 5), Sets.all());
    EXPECT_EQ(Sets.xored(Of({4, 5, 6, 7}), 5), Of({0, 1, 2, 3}));
    EXPECT_EQ(Sets.xored(Of({1, 2}), 1), Of({0, 3}));
    EXPECT_EQ(Sets.xored(Of({0, 3, 6}), 3), Of({3, 0, 5}));
    EXPECT_EQ(Sets.xored(Sets.single(2), 6), Sets.single(4));
  }
}

} // namespace
