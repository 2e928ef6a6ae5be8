//===- SharedBuffersTest.cpp - Buffers a peer process maps ----------------===//
//
// cclcMemAlloc's buffers as the transport sees them: a receiver finds the
// buffer holding a message's runs, and a sender in another process maps it
// and writes into it; a sender refuses a buffer that is not what the offer
// says (another id, another size, a descriptor that is no such buffer).
//
//===----------------------------------------------------------------------===//

#include "NetTestSupport.h"

#include "runtime/transport/shm/SharedBuffers.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <sys/mman.h>
#include <unistd.h>

namespace cclc::net {
namespace {

using MessageRun = host::Run;
using host::SharedSpan;

TEST(SharedBuffers, AllocatesZeroedPagesAndFindsTheBufferOfEveryRun) {
  SharedBuffers &Buffers = SharedBuffers::process();
  auto *A = static_cast<std::byte *>(Buffers.allocate(10000));
  auto *B = static_cast<std::byte *>(Buffers.allocate(1));
  ASSERT_EQ(uintptr_t(A) % size_t(::sysconf(_SC_PAGESIZE)), 0u);
  EXPECT_TRUE(std::all_of(A, A + 10000, [](std::byte X) { return X == std::byte(0); }));
  EXPECT_TRUE(Buffers.owns(A));
  EXPECT_FALSE(Buffers.owns(A + 1));

  SharedSpan Span;
  MessageRun Two[] = {{A + 100, 1000}, {A + 5000, 3000}};
  ASSERT_TRUE(Buffers.find(Two, Span));
  EXPECT_EQ(Span.Base, uint64_t(uintptr_t(A)));
  EXPECT_GE(Span.Bytes, 10000u);
  EXPECT_NE(Span.Id, 0u);
  EXPECT_GE(Span.Fd, 0);

  // A run past the buffer's end, runs in two buffers, memory of no buffer.
  MessageRun Past[] = {{A + Span.Bytes - 10, 20}};
  EXPECT_FALSE(Buffers.find(Past, Span));
  MessageRun Apart[] = {{A, 10}, {B, 10}};
  EXPECT_FALSE(Buffers.find(Apart, Span));
  int Local = 0;
  MessageRun Stack[] = {{&Local, sizeof Local}};
  EXPECT_FALSE(Buffers.find(Stack, Span));

  EXPECT_TRUE(Buffers.release(A));
  EXPECT_FALSE(Buffers.release(A));
  EXPECT_FALSE(Buffers.owns(A));
  EXPECT_TRUE(Buffers.release(B));
}

/// What a child tells its parent about a buffer it allocated.
struct Offered {
  SharedSpan Span;
  int ProbeFd;
};

TEST(SharedBuffers, AnotherProcessMapsABufferAndWritesIntoIt) {
  int ToParent[2], ToChild[2];
  ASSERT_EQ(::pipe(ToParent), 0);
  ASSERT_EQ(::pipe(ToChild), 0);
  std::fflush(nullptr);
  pid_t Child = ::fork();
  if (Child == 0) {
    // The receiver: offers a buffer, then checks what its parent wrote.
    SharedBuffers &Buffers = SharedBuffers::process();
    auto *Buffer = static_cast<char *>(Buffers.allocate(1 << 16));
    Offered O{};
    MessageRun All[] = {{Buffer, 1 << 16}};
    bool Found = Buffers.find(All, O.Span);
    O.ProbeFd = Buffers.probeFd();
    ssize_t Sent = ::write(ToParent[1], &O, sizeof O);
    char Done = 0;
    ssize_t Got = ::read(ToChild[0], &Done, 1);
    bool Written = std::memcmp(Buffer + 4096, "mapped", 6) == 0 && Buffer[0] == 0;
    ::_exit(Found && Sent == sizeof O && Got == 1 && Written ? 0 : 1);
  }
  Offered O{};
  ASSERT_EQ(::read(ToParent[0], &O, sizeof O), ssize_t(sizeof O));
  {
    PeerBuffers Peer(Child, O.ProbeFd);
    EXPECT_EQ(Peer.whyNot(), "");
    SharedSpan OtherId = O.Span, OtherSize = O.Span, OtherFd = O.Span;
    ++OtherId.Id;
    OtherSize.Bytes *= 2;
    OtherFd.Fd = O.ProbeFd;
    EXPECT_EQ(Peer.map(OtherId), nullptr);
    EXPECT_EQ(Peer.map(OtherSize), nullptr);
    EXPECT_EQ(Peer.map(OtherFd), nullptr);
    std::shared_ptr<std::byte> View = Peer.map(O.Span);
    ASSERT_NE(View, nullptr);
    EXPECT_EQ(Peer.map(O.Span), View) << "a buffer is mapped once";
    std::memcpy(View.get() + 4096, "mapped", 6);
  }
  char Done = 1;
  ASSERT_EQ(::write(ToChild[1], &Done, 1), 1);
  int Status = 0;
  ASSERT_EQ(::waitpid(Child, &Status, 0), Child);
  EXPECT_TRUE(WIFEXITED(Status) && WEXITSTATUS(Status) == 0) << "the child did not see the write";
  for (int Fd : {ToParent[0], ToParent[1], ToChild[0], ToChild[1]})
    ::close(Fd);
}

TEST(SharedBuffers, APeerWhoseProbeIsNoMemoryFileIsNotMapped) {
  // This process's standard error is a descriptor, but no probe.
  PeerBuffers Self(::getpid(), STDERR_FILENO);
  EXPECT_NE(Self.whyNot().find("is not the memory file"), std::string::npos) << Self.whyNot();
  EXPECT_EQ(Self.map(SharedSpan{1, 4096, 4096, STDERR_FILENO}), nullptr);
  PeerBuffers None(::getpid(), -1);
  EXPECT_NE(None.whyNot(), "");
}

} // namespace
} // namespace cclc::net
