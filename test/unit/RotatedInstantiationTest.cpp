//===- RotatedInstantiationTest.cpp - Rank 0 alone, rotated ---------------===//
//
// Instantiation may run rank 0 alone and stand the other ranks in as its
// rotations. These tests check the arithmetic of how values depend on the
// rank, and that every schedule built that way, expanded, is step for step
// the one every rank's run builds, on algorithms that rotate and on ones that
// must not be taken for rotations.
//
//===----------------------------------------------------------------------===//

#include "DslTestSupport.h"

#include "compiler/instantiate/Instantiate.h"
#include "compiler/instantiate/RankForm.h"
#include "plan/Verifier.h"

#include <gtest/gtest.h>
#include <string>

using namespace cclc;
using inst::RankForm;

namespace {

TEST(RankFormTest, RingArithmetic) {
  const RankForm Pos = RankForm::exact(1);
  // (pos - s) % n: exact, then reduced modulo n.
  EXPECT_EQ(inst::remainderForm(inst::addForms(Pos, RankForm::fixed(), -1), 8),
            RankForm::reduced(1, 8));
  // (2 pos + 1) % 16 moves two chunks per rank.
  EXPECT_EQ(inst::remainderForm(inst::addForms(inst::scaleForm(Pos, 2), RankForm::fixed(), 1), 16),
            RankForm::reduced(2, 16));
  // ring.next + 1 is known modulo n only, and % n makes it exact again.
  const RankForm Next = RankForm::reduced(1, 8);
  const RankForm NextPlusOne = inst::addForms(Next, RankForm::fixed(), 1);
  EXPECT_EQ(NextPlusOne, RankForm::congruent(1, 8));
  EXPECT_EQ(inst::remainderForm(NextPlusOne, 8), RankForm::reduced(1, 8));
  EXPECT_EQ(inst::remainderForm(NextPlusOne, 4), RankForm::reduced(1, 4));
  // Modulo 3 nothing is known of a value known modulo 8.
  EXPECT_TRUE(inst::remainderForm(NextPlusOne, 3).isUnknown());
  // pos - pos does not depend on the rank; n pos % n neither.
  EXPECT_TRUE(inst::addForms(Pos, Pos, -1).isFixed());
  EXPECT_TRUE(inst::remainderForm(inst::scaleForm(Pos, 8), 8).isFixed());
  EXPECT_EQ(inst::negateForm(Next), RankForm::congruent(7, 8));
  EXPECT_TRUE(inst::remainderForm(RankForm::unknown(), 8).isUnknown());
  EXPECT_TRUE(inst::remainderForm(Pos, 0).isUnknown());
}

struct Case {
  const char *Name;
  const char *Text;
  bool Rotates;
};

/// A ring allreduce with the given reduce-scatter statements; the allgather
/// is the library's.
std::string ringWith(const std::string &Header, const std::string &Body) {
  return "allreduce t" + Header + " {\n" + Body +
         "\n  for s in 0 .. nranks - 1 {\n"
         "    send(ring.next, output[(ring.pos - s + 1) % nranks]);\n"
         "    recv(ring.prev, output[(ring.pos - s) % nranks]);\n  }\n}\n";
}

const std::string RingReduceScatter = "  chunks nranks;\n  copy(input, output);\n"
                                      "  for s in 0 .. nranks - 1 {\n"
                                      "    send(ring.next, output[(ring.pos - s) % nranks]);\n"
                                      "    recv_reduce(ring.prev, output[(ring.pos - s - 1) % nranks]);\n"
                                      "  }";

class RotatedInstantiationTest : public ::testing::TestWithParam<int32_t> {
protected:
  /// Instantiates Text both ways at GetParam() ranks and compares.
  void check(const std::string &Text, bool Rotates) {
    dsl::test::CheckedSource Src(Text);
    ASSERT_TRUE(Src.Algo) << Src.output();
    const int32_t NRanks = GetParam();
    const target::Target Target = target::flatTarget(NRanks);
    inst::InstantiateOptions Options;
    std::optional<sched::Schedule> Every = inst::instantiate(*Src.Algo, Target, Options, Src.Diags);
    Options.RankZeroOnly = true;
    std::optional<sched::Schedule> Rotated =
        inst::instantiate(*Src.Algo, Target, Options, Src.Diags);
    ASSERT_EQ(Every.has_value(), Rotated.has_value()) << Src.output();
    if (!Every)
      return;
    EXPECT_EQ(Rotated->Rotated.has_value(), Rotates) << Text;
    // The proof goes the same way, held as rank 0 alone or as every rank.
    std::ostringstream Discard;
    DiagnosticEngine Quiet(Src.SM, Discard);
    EXPECT_EQ(verify::verifySchedule(*Every, Quiet), verify::verifySchedule(*Rotated, Quiet));
    sched::expandRotation(*Rotated);
    ASSERT_EQ(Rotated->Ranks.size(), Every->Ranks.size());
    EXPECT_EQ(Rotated->ChunksPerChannel, Every->ChunksPerChannel);
    for (size_t R = 0; R < Every->Ranks.size(); ++R) {
      const sched::RankProgram &A = Every->Ranks[R], &B = Rotated->Ranks[R];
      EXPECT_EQ(A.LogicalRank, B.LogicalRank);
      ASSERT_EQ(A.Channels.size(), B.Channels.size());
      for (size_t C = 0; C < A.Channels.size(); ++C) {
        ASSERT_EQ(A.Channels[C].Steps.size(), B.Channels[C].Steps.size()) << "rank " << R;
        for (size_t I = 0; I < A.Channels[C].Steps.size(); ++I) {
          const sched::Step &X = A.Channels[C].Steps[I], &Y = B.Channels[C].Steps[I];
          EXPECT_TRUE(X.Op == Y.Op && X.Peer == Y.Peer && X.SendPeer == Y.SendPeer &&
                      X.Src == Y.Src && X.Dst == Y.Dst && X.WithNext == Y.WithNext &&
                      X.Loc.Line == Y.Loc.Line && X.Iteration == Y.Iteration &&
                      X.Primitive == Y.Primitive)
              << "rank " << R << " channel " << C << " step " << I;
        }
      }
    }
  }
};

TEST_P(RotatedInstantiationTest, RotatingAlgorithms) {
  check(ringWith(" on ring", RingReduceScatter), true);
  // Peers and chunks from rank arithmetic, without a ring.
  check("allreduce t {\n  chunks nranks;\n  let n = nranks;\n  copy(input, output);\n"
        "  for s in 0 .. n - 1 {\n"
        "    send((rank + 1) % n, output[(rank - s) % n]);\n"
        "    recv_reduce((rank + n - 1) % n, output[(rank - s - 1 + n) % n]);\n  }\n"
        "  for s in 0 .. n - 1 {\n"
        "    send((rank + 1) % n, output[(n + rank - s + 1) % n]);\n"
        "    recv((n - 1 + rank) % n, output[(rank - s) % n]);\n  }\n}\n",
        true);
  // Two chunks per rank, moving two places per rank; a variable carries a
  // slice.
  check("allreduce t on ring {\n  chunks 2 * nranks;\n  let m = 2 * nranks;\n"
        "  copy(input, output);\n"
        "  for s in 0 .. nranks - 1 {\n    for j in 0 .. 2 {\n"
        "      let c = output[(2 * (ring.pos - s) + j) % m];\n      send(ring.next, c);\n"
        "      recv_reduce(ring.prev, output[(2 * (ring.pos - s - 1) + j) % m]);\n    }\n  }\n"
        "  for s in 0 .. nranks - 1 {\n    for j in 0 .. 2 {\n"
        "      send(ring.next, output[(2 * (ring.pos - s + 1) + j) % m]);\n"
        "      recv(ring.prev, output[(2 * (ring.pos - s) + j) % m]);\n    }\n  }\n}\n",
        true);
}

TEST_P(RotatedInstantiationTest, AlgorithmsThatMustNotRotate) {
  // A branch on the rank.
  check(ringWith(" on ring", RingReduceScatter + "\n  if ring.pos == 0 { copy(output, output); }"),
        false);
  // A chunk every rank names alike.
  check(ringWith(" on ring", "  chunks nranks;\n  copy(input, output);\n"
                             "  for s in 0 .. nranks - 1 {\n"
                             "    send(ring.next, output[s]);\n"
                             "    recv_reduce(ring.prev, output[(s + 1) % nranks]);\n  }"),
        false);
  // A peer by a bit operation, a peer two places on, and a division.
  check("allreduce t {\n  chunks 1;\n  exchange_reduce(rank ^ 1, output, output);\n}\n", false);
  check("allreduce t {\n  chunks nranks;\n  copy(input, output);\n"
        "  send((rank + 2) % nranks, output[rank / 1 % nranks]);\n"
        "  recv_reduce((rank + nranks - 2) % nranks, output[rank % nranks]);\n}\n",
        false);
  // A whole buffer sent: a rotation would reorder the message.
  check("allreduce t {\n  chunks nranks;\n  send((rank + 1) % nranks, input);\n"
        "  recv((rank + nranks - 1) % nranks, output);\n}\n",
        false);
}

INSTANTIATE_TEST_SUITE_P(Ranks, RotatedInstantiationTest, ::testing::Values(2, 3, 8, 12));

TEST(RotatedProof, ReportsAtRankZeroWhenEveryRankIsTooMany) {
  // The reduce-scatter adds each received chunk to the one it just sent.
  dsl::test::CheckedSource Src(ringWith(
      " on ring", "  chunks nranks;\n  copy(input, output);\n"
                  "  for s in 0 .. nranks - 1 {\n"
                  "    send(ring.next, output[(ring.pos - s) % nranks]);\n"
                  "    recv_reduce(ring.prev, output[(ring.pos - s) % nranks]);\n  }"));
  ASSERT_TRUE(Src.Algo) << Src.output();
  inst::InstantiateOptions Options;
  Options.RankZeroOnly = true;
  std::optional<sched::Schedule> S =
      inst::instantiate(*Src.Algo, target::flatTarget(8), Options, Src.Diags);
  ASSERT_TRUE(S && S->Rotated) << Src.output();
  verify::VerifyOptions Verify;
  Verify.ReportSteps = 0;
  std::ostringstream Text;
  DiagnosticEngine Diags(Src.SM, Text);
  verify::ProofKind Proof = verify::ProofKind::Exhaustive;
  EXPECT_FALSE(verify::verifySchedule(*S, Diags, Verify, &Proof));
  EXPECT_EQ(Proof, verify::ProofKind::Rotation);
  EXPECT_NE(Text.str().find("error: rank 0 channel 0 step 2: recv_reduce adds input[7] of rank 7 "
                            "to output[0], which holds input[0] of rank 0: different elements"),
            std::string::npos)
      << Text.str();
  EXPECT_NE(Text.str().find("note: rank 7 channel 0 step 1: the data was sent here"),
            std::string::npos)
      << Text.str();
}

} // namespace
