//===- CallBoardTest.cpp - What the two sides of a segment tell each other ===//
//
// Both sides' views of one board in process memory: a stalled wait is
// stopped only when the peer is at this call number with another stamp, or
// went past it while the wait is still unsatisfied; a reader never takes a
// half-published call for another; the first abort cause stays.
//
//===----------------------------------------------------------------------===//

#include "runtime/transport/shm/CallBoard.h"

#include <atomic>
#include <cstdlib>
#include <gtest/gtest.h>
#include <memory>
#include <optional>
#include <thread>

using namespace cclc;
using namespace cclc::net;

namespace {

/// A call whose fields follow from its number, so that a stamp mixed from
/// two calls is recognisable.
kern::CallStamp callNumbered(uint64_t Seq) {
  kern::CallStamp S;
  S.Seq = Seq;
  S.Count = Seq * 3;
  S.Plan = Seq * 7;
  S.Root = int32_t(Seq % 5);
  S.Collective = uint8_t(Seq % 3);
  return S;
}

bool consistent(const kern::CallStamp &S) { return S == callNumbered(S.Seq); }

/// Both sides of one board: side 0's call in progress is Mine, side 1's is
/// Theirs.
struct TwoSides {
  std::unique_ptr<std::byte, decltype(&std::free)> Memory{
      static_cast<std::byte *>(std::aligned_alloc(64, CallBoard::bytes())), &std::free};
  kern::CallStamp Mine, Theirs;
  CallBoard Here{(CallBoard::init(Memory.get()), Memory.get()), 0, &Mine};
  CallBoard There{Memory.get(), 1, &Theirs};

  void begin(kern::CallStamp &Side, CallBoard &Board, const kern::CallStamp &S) {
    Side = S;
    Board.publish(S);
  }
};

bool never(const void *) { return false; }
bool always(const void *) { return true; }

/// The mismatch Board's check finds with peer 1 for a wait that is Ready or
/// not; none when the check passes.
std::optional<host::CallMismatch> mismatchOf(const CallBoard &Board,
                                             bool (*Ready)(const void *)) {
  try {
    Board.check(1, Ready, nullptr);
  } catch (const host::CallMismatch &E) {
    return E;
  }
  return std::nullopt;
}

TEST(CallBoard, APeerNotYetAtTheCallIsWaitedFor) {
  TwoSides B;
  B.begin(B.Mine, B.Here, callNumbered(2));
  EXPECT_NO_THROW(B.Here.check(1, never, nullptr)); // nothing published
  B.begin(B.Theirs, B.There, callNumbered(1));
  EXPECT_NO_THROW(B.Here.check(1, never, nullptr));
  B.begin(B.Theirs, B.There, callNumbered(2));
  EXPECT_NO_THROW(B.Here.check(1, never, nullptr));
}

TEST(CallBoard, APeerAtTheSameNumberWithAnotherCallIsAMismatch) {
  TwoSides B;
  kern::CallStamp Other = callNumbered(4);
  Other.Root = 3;
  B.begin(B.Mine, B.Here, callNumbered(4));
  B.begin(B.Theirs, B.There, Other);
  std::optional<host::CallMismatch> E = mismatchOf(B.Here, always);
  ASSERT_TRUE(E);
  EXPECT_EQ(E->Peer, 1);
  EXPECT_EQ(E->Sent, Other);
  EXPECT_EQ(E->Expected, callNumbered(4));
  // The other side finds it too.
  EXPECT_THROW(B.There.check(0, never, nullptr), host::CallMismatch);
}

TEST(CallBoard, APeerThatWentPastAnUnsatisfiedWaitIsAMismatch) {
  TwoSides B;
  kern::CallStamp Skipped = callNumbered(5);
  Skipped.Count = 0;
  B.begin(B.Mine, B.Here, callNumbered(5));
  B.begin(B.Theirs, B.There, Skipped);
  B.begin(B.Theirs, B.There, callNumbered(6));
  // What the wait waited for came before the peer went on.
  EXPECT_NO_THROW(B.Here.check(1, always, nullptr));
  std::optional<host::CallMismatch> E = mismatchOf(B.Here, never);
  ASSERT_TRUE(E);
  // The peer's call of this number is still on the board.
  EXPECT_EQ(E->Sent, Skipped);
}

TEST(CallBoard, NoCallInProgressChecksNothing) {
  TwoSides B;
  B.begin(B.Theirs, B.There, callNumbered(9));
  EXPECT_NO_THROW(B.Here.check(1, never, nullptr));
}

TEST(CallBoard, AReaderNeverSeesAHalfPublishedCall) {
  TwoSides B;
  constexpr uint64_t Calls = 200000;
  std::atomic<bool> Done{false};
  std::thread Writer([&] {
    for (uint64_t Seq = 1; Seq <= Calls; ++Seq)
      B.There.publish(callNumbered(Seq));
    Done = true;
  });
  // Side 0 claims each number the writer may be at with a stamp that
  // differs from the writer's only if a read was torn.
  uint64_t Checks = 0, Torn = 0;
  while (!Done) {
    for (uint64_t Seq : {Calls / 4, Calls / 2, Calls}) {
      B.Mine = callNumbered(Seq);
      // Past the claimed number is a mismatch; a torn stamp is not
      // consistent with its own number.
      if (std::optional<host::CallMismatch> E = mismatchOf(B.Here, never))
        Torn += !consistent(E->Sent);
      ++Checks;
    }
  }
  Writer.join();
  EXPECT_EQ(Torn, 0u) << "of " << Checks << " checks";
}

TEST(CallBoard, TheFirstCauseStaysAndIsBounded) {
  TwoSides B;
  EXPECT_EQ(B.Here.peerCause(), "");
  B.There.recordCause(std::string(CallBoard::CauseCapacity + 10, 'x'));
  B.There.recordCause("a later cause");
  EXPECT_EQ(B.Here.peerCause(), std::string(CallBoard::CauseCapacity, 'x'));
  EXPECT_EQ(B.There.peerCause(), "");
}

} // namespace
