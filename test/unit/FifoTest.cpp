//===- FifoTest.cpp - A message's trailer in its slot ---------------------===//
//
// One FIFO in process memory, both ends in one thread: a receiver that
// expects a message of some size finds it by the flag in the trailer after
// its data, without the sender's Tail; a message of another size is still
// found (by Tail) and refused; a trailer left in the memory by an earlier
// FIFO never passes for a message of a new one; and the small cut of the
// slots holds more messages in the same memory, the sender waiting at a
// change of cut until the receiver has taken the old cut's messages.
//
//===----------------------------------------------------------------------===//

#include "host/Connection.h"

#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <vector>

using namespace cclc;
using namespace std::chrono_literals;

namespace {

constexpr uint32_t NumSlots = 4;
constexpr size_t SlotBytes = 256;

/// The default FIFO's shape, which has a small cut.
constexpr uint32_t DefaultSlots = 8;
constexpr size_t DefaultSlotBytes = size_t(128) << 10;

/// FIFO memory that outlives the FIFOs placed in it: Slots slots of Bytes,
/// with room for the records of its small cut where it has one.
struct Memory {
  uint32_t Slots;
  size_t SlotBytes;
  uint32_t Records = host::Fifo::recordsWithSmallCut(Slots, SlotBytes);
  std::vector<std::byte> Bytes =
      std::vector<std::byte>(host::Fifo::bytesFor(Slots, SlotBytes, Records) + 64);
  explicit Memory(uint32_t Slots = NumSlots, size_t SlotBytes = ::SlotBytes)
      : Slots(Slots), SlotBytes(SlotBytes) {}
  void *base() {
    auto At = reinterpret_cast<uintptr_t>(Bytes.data());
    return reinterpret_cast<void *>((At + 63) / 64 * 64);
  }
};

/// Both ends of a FIFO made in Mem, whose waits last 100 ms.
struct Ends {
  host::Waiter Wait{nullptr, 100ms};
  host::Outbox Out;
  host::Inbox In;
  explicit Ends(Memory &Mem) {
    host::Fifo Q =
        host::Fifo::place(Mem.base(), Mem.Slots, Mem.SlotBytes, /*Init=*/true, Mem.Records);
    Out = host::Outbox{Q, 1, &Wait};
    In = host::Inbox{Q, 0, &Wait};
  }
  void send(uint32_t Value, size_t Bytes) {
    std::byte *Slot = Out.acquire();
    std::memset(Slot, 0, Bytes);
    std::memcpy(Slot, &Value, sizeof Value);
    Out.post(Bytes);
  }
  uint32_t receive(size_t Bytes) {
    uint32_t Value;
    std::memcpy(&Value, In.peek(Bytes), sizeof Value);
    In.release();
    return Value;
  }
};

TEST(MessageTrailer, FollowsTheDataWithinACacheLine) {
  EXPECT_EQ(8u, host::MessageTrailer(4, SlotBytes).Offset);
  EXPECT_EQ(48u, host::MessageTrailer(41, SlotBytes).Offset);
  EXPECT_EQ(64u, host::MessageTrailer(56, SlotBytes).Offset);
  EXPECT_EQ(128u, host::MessageTrailer(128, SlotBytes).Offset);
  EXPECT_TRUE(host::MessageTrailer(240, SlotBytes).Present);
  EXPECT_FALSE(host::MessageTrailer(241, SlotBytes).Present);
  EXPECT_FALSE(host::MessageTrailer(SlotBytes, SlotBytes).Present);
}

TEST(Fifo, TheFlagDeliversAMessageBeforeTail) {
  Memory Mem;
  Ends E(Mem);
  E.send(7, 4);
  // Hide the message from Tail: only the trailer tells of it.
  E.In.Q.Header->Tail.Value.store(0);
  EXPECT_EQ(7u, E.receive(4));
  // Messages without room for a trailer come by Tail.
  E.In.Q.Header->Tail.Value.store(1);
  E.send(8, SlotBytes);
  EXPECT_EQ(8u, E.receive(SlotBytes));
}

TEST(Fifo, AMessageOfAnotherSizeIsFoundByTailAndRefused) {
  Memory Mem;
  Ends E(Mem);
  E.send(7, 100);
  try {
    E.receive(4);
    FAIL() << "a message of 100 bytes passed for one of 4";
  } catch (const host::CommError &Err) {
    EXPECT_EQ(host::CommStatus::Mismatch, Err.status()) << Err.what();
  }
}

TEST(Fifo, ATrailerOfAnEarlierFifoInTheSameMemoryIsNoMessage) {
  Memory Mem;
  {
    Ends Earlier(Mem);
    Earlier.send(7, 4);
  }
  Ends Now(Mem);
  try {
    Now.receive(4);
    FAIL() << "the earlier FIFO's message was received";
  } catch (const host::CommError &Err) {
    EXPECT_EQ(host::CommStatus::Timeout, Err.status()) << Err.what();
  }
}

TEST(Fifo, TheSmallCutHoldsMoreMessagesInTheSameMemory) {
  Memory Mem(DefaultSlots, DefaultSlotBytes);
  Ends E(Mem);
  ASSERT_EQ(host::Fifo::SmallSlots, E.Out.Q.Small.NumSlots);
  EXPECT_EQ(NumSlots, Memory().Records) << "a FIFO too small for the small cut has none";
  E.Out.cut(true);
  E.In.cut(true);
  for (uint32_t I = 0; I < host::Fifo::SmallSlots; ++I) {
    ASSERT_TRUE(E.Out.ready()) << "message " << I;
    E.send(I, 4);
  }
  EXPECT_FALSE(E.Out.ready());
  for (uint32_t I = 0; I < host::Fifo::SmallSlots; ++I)
    ASSERT_EQ(I, E.receive(4));
  // The small cut's slots hold what their size allows, with the trailer.
  E.send(99, host::Fifo::SmallSlotBytes - 16);
  EXPECT_EQ(99u, E.receive(host::Fifo::SmallSlotBytes - 16));
}

TEST(Fifo, ASenderThatCutsAnewWaitsForTheOldCutsMessagesToBeTaken) {
  Memory Mem(DefaultSlots, DefaultSlotBytes);
  Ends E(Mem);
  E.Out.cut(true);
  E.In.cut(true);
  for (uint32_t I = 0; I < 3; ++I)
    E.send(I, 4);
  // The large cut's first slot holds the small cut's first eight.
  E.Out.cut(false);
  EXPECT_FALSE(E.Out.ready());
  try {
    E.Out.acquire();
    FAIL() << "a slot of the large cut was handed out over unread messages of the small";
  } catch (const host::CommError &Err) {
    EXPECT_EQ(host::CommStatus::Timeout, Err.status()) << Err.what();
  }
  EXPECT_EQ(0u, E.receive(4));
  EXPECT_EQ(1u, E.receive(4));
  EXPECT_FALSE(E.Out.ready());
  EXPECT_EQ(2u, E.receive(4));
  EXPECT_TRUE(E.Out.ready());
  E.In.cut(false);
  E.send(7, DefaultSlotBytes - 16);
  EXPECT_EQ(7u, E.receive(DefaultSlotBytes - 16));
  // Cutting as before is no change: nothing to wait for.
  E.send(8, 4);
  E.Out.cut(false);
  EXPECT_TRUE(E.Out.ready());
  EXPECT_EQ(8u, E.receive(4));
}

} // namespace
