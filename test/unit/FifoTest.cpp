//===- FifoTest.cpp - A message's trailer in its slot ---------------------===//
//
// One FIFO in process memory, both ends in one thread: a receiver that
// expects a message of some size finds it by the flag in the trailer after
// its data, without the sender's Tail; a message of another size is still
// found (by Tail) and refused; and a trailer left in the memory by an earlier
// FIFO never passes for a message of a new one.
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

/// FIFO memory that outlives the FIFOs placed in it.
struct Memory {
  std::vector<std::byte> Bytes = std::vector<std::byte>(host::Fifo::bytesFor(NumSlots, SlotBytes) + 64);
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
    host::Fifo Q = host::Fifo::place(Mem.base(), NumSlots, SlotBytes, /*Init=*/true);
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

} // namespace
