//===- TransportTest.cpp - FIFO traffic over shared memory and TCP --------===//

#include "runtime/transport/Transport.h"
#include "runtime/transport/shm/ShmTransport.h"

#include "NetTestSupport.h"

#include <atomic>
#include <filesystem>
#include <gtest/gtest.h>
#include <mutex>
#include <sched.h>
#include <sys/resource.h>
#include <thread>

using namespace cclc;
using namespace cclc::net;
using namespace cclc::net::test;
using namespace std::chrono_literals;

namespace {

/// Runs Body in N forked ranks of one job whose waits last Timeout.
std::vector<int> forkJob(int N, std::chrono::milliseconds Timeout,
                         const std::function<int(Bootstrap &)> &Body) {
  std::unique_ptr<Root> R = createRoot(10s);
  UniqueId Id = R->id();
  return forkRanks(N, [&](int Rank) { return Body(*Bootstrap::init(Id, Rank, N, Timeout)); });
}

/// Message Seq from Src to Dst on Channel: its size varies over the whole
/// slot, and every byte tells where it belongs.
size_t messageBytes(int Channel, uint64_t Seq, size_t SlotBytes) {
  return (Seq * 37 + uint64_t(Channel) * 11) % SlotBytes + 1;
}
std::byte pattern(int Src, int Dst, int Channel, uint64_t Seq, size_t I) {
  return std::byte(uint64_t(Src) * 31 + uint64_t(Dst) * 17 + uint64_t(Channel) * 7 + Seq * 13 +
                   I * 3 + (I >> 8));
}

void sendMessage(host::Outbox &Out, int Src, int Channel, uint64_t Seq) {
  size_t Bytes = messageBytes(Channel, Seq, Out.Q.SlotBytes);
  std::byte *Slot = Out.acquire();
  for (size_t I = 0; I < Bytes; ++I)
    Slot[I] = pattern(Src, Out.Peer, Channel, Seq, I);
  Out.post(Bytes);
}

void recvMessage(host::Inbox &In, int Dst, int Channel, uint64_t Seq) {
  size_t Bytes = messageBytes(Channel, Seq, In.Q.SlotBytes);
  const std::byte *Slot = In.peek(Bytes);
  for (size_t I = 0; I < Bytes; ++I)
    require(Slot[I] == pattern(In.Peer, Dst, Channel, Seq, I),
            "byte " + std::to_string(I) + " of message " + std::to_string(Seq) + " from rank " +
                std::to_string(In.Peer) + " on channel " + std::to_string(Channel));
  In.release();
}

/// The shared-memory names this process created that still exist.
std::vector<std::string> leftoverSegments() {
  std::string Prefix = "cclc-" + std::to_string(::getpid()) + "-";
  std::vector<std::string> Names;
  for (const auto &Entry : std::filesystem::directory_iterator("/dev/shm"))
    if (Entry.path().filename().string().rfind(Prefix, 0) == 0)
      Names.push_back(Entry.path().filename().string());
  return Names;
}

/// Every test runs once over shared memory and once over TCP.
class Transport : public ::testing::TestWithParam<TransportKind> {
protected:
  void SetUp() override { ::setenv("CCLC_TRANSPORT", transportName(GetParam()), 1); }
  void TearDown() override { ::unsetenv("CCLC_TRANSPORT"); }
};

std::string kindName(const ::testing::TestParamInfo<TransportKind> &Info) {
  return transportName(Info.param);
}

} // namespace

TEST_P(Transport, EveryPairEveryDirectionSeveralChannels) {
  constexpr int N = 3, Channels = 3;
  constexpr uint64_t Messages = 300; // Many times the 4 slots, with every slot size.
  const LinkOptions Options{4, 1024};
  TransportKind Kind = GetParam();
  std::vector<int> Status = forkJob(N, 10s, [&](Bootstrap &B) {
    int Me = B.rank();
    std::vector<Link> Links;
    for (int Peer = 0; Peer < N; ++Peer)
      for (int Channel = 0; Channel < Channels && Peer != Me; ++Channel)
        Links.push_back({Peer, Channel});
    auto C = std::make_unique<Connections>(B, Links, Links, Options);
    for (int Peer = 0; Peer < N; ++Peer)
      require(Peer == Me || C->transport(Peer) == Kind, "the forced transport");
    require(leftoverSegments().empty(), "segment names removed once both sides mapped them");
    bool Omitted = false;
    try {
      C->out((Me + 1) % N, Channels);
    } catch (const NetError &) {
      Omitted = true;
    }
    require(Omitted, "a link the plan omits is an error");

    // One thread per channel, as executors run them: it sends message Seq
    // to every peer, then receives message Seq from every peer.
    std::mutex Lock;
    std::string Error;
    std::vector<std::thread> Threads;
    for (int Channel = 0; Channel < Channels; ++Channel)
      Threads.emplace_back([&, Channel] {
        try {
          for (uint64_t Seq = 0; Seq < Messages; ++Seq) {
            for (int Peer = 0; Peer < N; ++Peer)
              if (Peer != Me)
                sendMessage(C->out(Peer, Channel), Me, Channel, Seq);
            for (int Peer = 0; Peer < N; ++Peer)
              if (Peer != Me)
                recvMessage(C->in(Peer, Channel), Me, Channel, Seq);
          }
        } catch (const std::exception &E) {
          std::lock_guard<std::mutex> Guard(Lock);
          Error = E.what();
        }
      });
    for (std::thread &T : Threads)
      T.join();
    require(Error.empty(), Error);

    // Rank 0 leaves first: its goodbye must not look like a failure to the others.
    B.barrier();
    if (Me == 0) {
      C.reset();
    } else {
      std::this_thread::sleep_for(200ms);
      require(C->failure().empty(), "no failure after a peer left: " + C->failure());
    }
    B.barrier();
    return 0;
  });
  for (int Rank = 0; Rank < N; ++Rank)
    EXPECT_TRUE(exitedWith(Status[size_t(Rank)], 0)) << "rank " << Rank;
}

TEST_P(Transport, AbortReachesThePeer) {
  std::vector<int> Status = forkJob(2, 5s, [&](Bootstrap &B) {
    int Me = B.rank();
    std::vector<Link> Stream{{1 - Me, 0}}, None;
    Connections C(B, Me == 0 ? Stream : None, Me == 0 ? None : Stream);
    B.barrier();
    if (Me == 0) {
      std::this_thread::sleep_for(100ms);
      C.abort("rank 0 stopped the test");
      require(C.failure() == "rank 0 stopped the test", "the recorded cause");
      return 0;
    }
    auto Start = std::chrono::steady_clock::now();
    try {
      C.in(0, 0).peek(1);
    } catch (const host::CommError &E) {
      require(E.status() == host::CommStatus::Aborted, std::string("aborted: ") + E.what());
      require(std::chrono::steady_clock::now() - Start < 2s, "stopped long before the timeout");
      // The segment's call board, or the proxy's abort frame, carries
      // rank 0's cause.
      std::string Cause = C.failure();
      require(Cause == "rank 0 stopped the test", "rank 0's cause: " + Cause);
      return 0;
    }
    return 1;
  });
  EXPECT_TRUE(exitedWith(Status[0], 0));
  EXPECT_TRUE(exitedWith(Status[1], 0));
}

TEST_P(Transport, DisagreeingPlansAreAnError) {
  constexpr int Detected = 7;
  std::vector<int> Status = forkJob(2, 5s, [](Bootstrap &B) {
    std::vector<Link> Two{{1, 0}, {1, 1}}, One{{0, 0}}, None;
    try {
      if (B.rank() == 0)
        Connections C(B, Two, None);
      else
        Connections C(B, None, One);
    } catch (const NetError &E) {
      std::string What = E.what();
      return What.find("the ranks run different plans") != std::string::npos ? Detected : 1;
    }
    return 2;
  });
  EXPECT_TRUE(exitedWith(Status[0], Detected));
  EXPECT_TRUE(exitedWith(Status[1], Detected));
}

INSTANTIATE_TEST_SUITE_P(Net, Transport, ::testing::Values(TransportKind::Shm, TransportKind::Tcp),
                         kindName);

namespace {

/// The calling thread's CPU time.
std::chrono::nanoseconds threadCpuTime() {
  timespec T{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &T);
  return std::chrono::seconds(T.tv_sec) + std::chrono::nanoseconds(T.tv_nsec);
}

/// Runs Wait, which lasts about Stall, and requires that it returned and
/// spent under a quarter of its time on the CPU: a waiter that polled for
/// all of it would spend most of it there.
void requireSlept(const char *What, const std::function<void()> &Wait) {
  auto Cpu = threadCpuTime();
  auto Start = std::chrono::steady_clock::now();
  Wait();
  auto Wall = std::chrono::steady_clock::now() - Start;
  auto Busy = threadCpuTime() - Cpu;
  require(Busy * 4 < Wall, std::string(What) + " used " +
                               std::to_string(Busy.count() / 1000) + " us of CPU in " +
                               std::to_string(Wall.count() / 1000) + " us; it should sleep");
}

} // namespace

/// Runs Body(B, Me, Peer, Out, In) on two ranks joined over shared memory by
/// a FIFO of 2 slots of 256 bytes each way, with CCLC_SPIN_US=Patience, and
/// requires that both return within Bound.
template <class F> void onSleepingPair(const char *Patience, std::chrono::seconds Bound, F Body) {
  ScopedEnv Shm("CCLC_TRANSPORT", "shm");
  ScopedEnv Spin("CCLC_SPIN_US", Patience);
  std::vector<int> Status = forkJob(2, Bound, [&](Bootstrap &B) {
    int Me = B.rank(), Peer = 1 - Me;
    std::vector<Link> Both{{Peer, 0}};
    Connections C(B, Both, Both, LinkOptions{2, 256});
    B.barrier();
    Body(B, Me, Peer, C.out(Peer, 0), C.in(Peer, 0));
    B.barrier();
    return 0;
  });
  EXPECT_TRUE(exitedWith(Status[0], 0));
  EXPECT_TRUE(exitedWith(Status[1], 0));
}

/// Over shared memory a wait that outlasts CCLC_SPIN_US sleeps until the
/// peer moves the counter it waits on, and wakes when it does: a receiver
/// waiting for a message, a sender waiting for a free slot, and a rank
/// exchanging that waits for either. Each wait outlasts the patience by far
/// (the peer stalls 300 ms), and must leave the core to others.
TEST(SleepingWaits, WakeWhenThePeerMoves) {
  onSleepingPair("50", 10s, [](Bootstrap &B, int Me, int Peer, host::Outbox &Out,
                               host::Inbox &In) {
    // Rank 1 waits to receive while rank 0 stalls, then to send into a full
    // FIFO while rank 0 stalls before draining it.
    uint64_t Seq = 0;
    if (Me == 1) {
      requireSlept("a receive", [&] { recvMessage(In, 1, 0, 0); });
      for (; Seq < 2; ++Seq)
        sendMessage(Out, 1, 0, Seq);
      requireSlept("a send into a full FIFO", [&] { sendMessage(Out, 1, 0, Seq++); });
    } else {
      std::this_thread::sleep_for(300ms);
      sendMessage(Out, 0, 0, 0);
      std::this_thread::sleep_for(300ms);
      for (; Seq < 3; ++Seq)
        recvMessage(In, 0, 0, Seq);
    }
    B.barrier();
    // Rank 0, its FIFO to rank 1 full, waits until it may send or receive;
    // rank 1 stalls, then only drains, moving the counter of rank 0's send.
    if (Me == 0) {
      for (Seq = 1; Seq < 3; ++Seq)
        sendMessage(Out, 0, 0, Seq);
      requireSlept("an exchange", [&] {
        Out.Wait->until([&] { return Out.ready() || In.ready(); }, "exchange with", Peer,
                        {&Out.Q.Header->Head, &In.Q.Header->Tail});
      });
    } else {
      std::this_thread::sleep_for(300ms);
      for (Seq = 1; Seq < 3; ++Seq)
        recvMessage(In, 1, 0, Seq);
    }
  });
}

/// A sender's advance skips the store-load fence (host::Bell) where the
/// sleeper issues a global memory barrier for it: every advance must still
/// wake a rank that sleeps on it. Two ranks that sleep at once on every wait
/// (CCLC_SPIN_US=0) pass a message back and forth 20000 times; a lost
/// wake-up costs its sleeper a whole nap (1 ms), so losing them, or most of
/// them, runs the job past its bound, where a sleep per message takes a few
/// microseconds.
TEST(SleepingWaits, EveryAdvanceWakesItsSleeper) {
  onSleepingPair("0", 15s, [](Bootstrap &, int Me, int, host::Outbox &Out, host::Inbox &In) {
    for (uint64_t Seq = 0; Seq < 20000; ++Seq) {
      if (Me == 0) {
        sendMessage(Out, Me, 0, Seq);
        recvMessage(In, Me, 0, Seq);
      } else {
        recvMessage(In, Me, 0, Seq);
        sendMessage(Out, Me, 0, Seq);
      }
    }
  });
}

namespace {

/// Checks that connections refuse each of Bad as the value of the variable
/// Name, naming it.
void expectRefused(const char *Name, std::initializer_list<const char *> Bad) {
  for (const char *Value : Bad) {
    ScopedEnv Malformed(Name, Value);
    std::vector<int> Status = forkJob(1, 5s, [Name](Bootstrap &B) {
      try {
        Connections C(B, {}, {});
      } catch (const NetError &E) {
        return std::string(E.what()).find(Name) != std::string::npos ? 0 : 2;
      }
      return 1;
    });
    EXPECT_TRUE(exitedWith(Status[0], 0)) << Name << "=" << Value;
  }
}

} // namespace

/// A malformed CCLC_SPIN_US is refused, naming the variable.
TEST(SleepingWaits, MalformedPatienceIsRefused) {
  expectRefused("CCLC_SPIN_US", {"soon", "-1", "60000001", "12us"});
}

/// Waits yield their core where the host's ranks outnumber the cores the
/// process may run on, and only there, unless CCLC_WAIT_YIELD decides; a
/// malformed setting is refused, naming the variable.
TEST(YieldingWaits, WhereRanksOutnumberCores) {
  cpu_set_t Set;
  ASSERT_EQ(::sched_getaffinity(0, sizeof Set, &Set), 0);
  int Cores = CPU_COUNT(&Set);
  auto Yields = [](int NRanks) {
    return forkJob(NRanks, 10s, [](Bootstrap &B) { return waitsYield(B) ? 1 : 0; });
  };
  for (int Status : Yields(Cores))
    EXPECT_TRUE(exitedWith(Status, 0)) << Cores << " ranks on " << Cores << " cores";
  for (int Status : Yields(Cores + 1))
    EXPECT_TRUE(exitedWith(Status, 1)) << Cores + 1 << " ranks on " << Cores << " cores";
  {
    ScopedEnv Never("CCLC_WAIT_YIELD", "0");
    for (int Status : Yields(Cores + 1))
      EXPECT_TRUE(exitedWith(Status, 0));
  }
  {
    ScopedEnv Always("CCLC_WAIT_YIELD", "1");
    for (int Status : Yields(1))
      EXPECT_TRUE(exitedWith(Status, 1));
  }
  expectRefused("CCLC_WAIT_YIELD", {"yes", "2", "-1"});
}

namespace {

enum class Victim { Sender, Receiver };

class DeadPeer : public ::testing::TestWithParam<std::tuple<TransportKind, Victim>> {
protected:
  void SetUp() override { ::setenv("CCLC_TRANSPORT", transportName(std::get<0>(GetParam())), 1); }
  void TearDown() override { ::unsetenv("CCLC_TRANSPORT"); }
};

std::string deadPeerName(const ::testing::TestParamInfo<std::tuple<TransportKind, Victim>> &Info) {
  return std::string(transportName(std::get<0>(Info.param))) +
         (std::get<1>(Info.param) == Victim::Sender ? "SenderKilled" : "ReceiverKilled");
}

} // namespace

/// Rank 1 is killed in the middle of a stream; rank 0 must fail with an
/// error within the timeout: at once over TCP, where the proxy sees the
/// connection drop, and after the timeout over shared memory.
TEST_P(DeadPeer, FailsWithinTheTimeout) {
  auto [Kind, Killed] = GetParam();
  constexpr auto Timeout = 2000ms;
  std::vector<int> Status = forkJob(2, Timeout, [&](Bootstrap &B) {
    int Me = B.rank();
    bool Sends = (Me == 1) == (Killed == Victim::Sender);
    std::vector<Link> Stream{{1 - Me, 0}}, None;
    Connections C(B, Sends ? Stream : None, Sends ? None : Stream, LinkOptions{4, 256});
    B.barrier();
    if (Me == 1) {
      for (uint64_t Seq = 0; Seq < (Sends ? 20 : 5); ++Seq)
        Sends ? sendMessage(C.out(0, 0), 1, 0, Seq) : recvMessage(C.in(0, 0), 1, 0, Seq);
      std::raise(SIGKILL);
    }
    auto Start = std::chrono::steady_clock::now();
    try {
      for (uint64_t Seq = 0;; ++Seq)
        Sends ? sendMessage(C.out(1, 0), 0, 0, Seq) : recvMessage(C.in(1, 0), 0, 0, Seq);
    } catch (const host::CommError &E) {
      std::fprintf(stderr, "rank 0 stopped: %s (%s)\n", E.what(), C.failure().c_str());
      require(std::chrono::steady_clock::now() - Start < Timeout + 1500ms,
              "failed within the timeout");
      if (Kind == TransportKind::Tcp) {
        require(E.status() == host::CommStatus::Aborted, "the proxy aborts");
        require(C.failure().find("rank 1") != std::string::npos, "the cause names rank 1");
      } else {
        require(E.status() == host::CommStatus::Timeout, "the wait times out");
      }
      return 0;
    }
  });
  EXPECT_TRUE(exitedWith(Status[0], 0));
  EXPECT_TRUE(killedBy(Status[1], SIGKILL));
}

INSTANTIATE_TEST_SUITE_P(Net, DeadPeer,
                         ::testing::Combine(::testing::Values(TransportKind::Shm,
                                                              TransportKind::Tcp),
                                            ::testing::Values(Victim::Sender, Victim::Receiver)),
                         deadPeerName);

namespace {

/// Where a test's rank writes a line for the test process to read.
class LinePipe {
public:
  LinePipe() { require(::pipe(Fds) == 0, "a pipe"); }
  ~LinePipe() {
    ::close(Fds[0]);
    ::close(Fds[1]);
  }
  void write(const std::string &Line) {
    std::string Text = Line + "\n";
    require(::write(Fds[1], Text.data(), Text.size()) == ssize_t(Text.size()), "a write");
  }
  /// What the ranks wrote, once they ended.
  std::string read() {
    ::close(Fds[1]);
    Fds[1] = -1;
    std::string Text;
    char Buf[256];
    for (ssize_t N; (N = ::read(Fds[0], Buf, sizeof Buf)) > 0;)
      Text.append(Buf, size_t(N));
    if (!Text.empty())
      Text.pop_back();
    return Text;
  }

private:
  int Fds[2] = {-1, -1};
};

/// The tag of the first message of the first collective setup of a job:
/// what a peer sends first when it describes its links.
constexpr uint32_t FirstDescriptionTag = 0x80000000u;

} // namespace

/// A peer that describes more channels, or a larger offer, than this rank's
/// links have is refused before anything is allocated for it: the claim of
/// one 40-byte message would otherwise cost gigabytes.
TEST(PeerDescription, BoundedByTheLocalLinks) {
  constexpr int Refused = 7;
  for (bool HugeOffer : {false, true}) {
    testing::internal::CaptureStderr();
    std::vector<int> Status = forkJob(2, 5s, [&](Bootstrap &B) {
      if (B.rank() == 1) {
        Description D;
        D.Kind = TransportKind::Shm;
        D.NumSlots = LinkOptions().NumSlots;
        D.SlotBytes = LinkOptions().SlotBytes;
        D.NumSockets = 2;
        D.NumSends = HugeOffer ? 1 : 0x7fffffffu;
        D.NumRecvs = HugeOffer ? 0 : 0x7fffffffu;
        D.OfferBytes = HugeOffer ? 0xffffffffu : 0;
        B.send(0, FirstDescriptionTag, &D, sizeof D);
        std::this_thread::sleep_for(500ms);
        return 0;
      }
      // A rank's virtual memory is far below this; the claims are above it.
      rlimit Memory{size_t(4) << 30, size_t(4) << 30};
      require(::setrlimit(RLIMIT_AS, &Memory) == 0, "a memory limit");
      std::vector<Link> FromOne{{1, 0}}, None;
      try {
        Connections C(B, None, FromOne);
      } catch (const NetError &E) {
        std::fprintf(stderr, "rank 0: %s\n", E.what());
        return Refused;
      }
      return 1;
    });
    std::string Log = testing::internal::GetCapturedStderr();
    EXPECT_TRUE(exitedWith(Status[0], Refused)) << Log;
    EXPECT_TRUE(exitedWith(Status[1], 0)) << Log;
    EXPECT_NE(Log.find(HugeOffer ? "rank 1 offers 4294967295 bytes"
                                 : "rank 1 describes 2147483647 and"),
              std::string::npos)
        << Log;
  }
}

/// A rank killed during the setup of shared-memory links leaves no segment
/// behind: neither when it was the receiver (which created the segment and
/// offered it) nor when it was the sender (which never mapped it).
TEST(ShmSetup, AKilledRankLeavesNoSegment) {
  ::setenv("CCLC_TRANSPORT", "shm", 1);
  for (int Killed : {0, 1}) {
    LinePipe Offers;
    testing::internal::CaptureStderr();
    // Rank 0 sends to rank 1, which receives in a segment it creates.
    std::vector<int> Status = forkJob(2, 2s, [&](Bootstrap &B) {
      std::vector<Link> ToOne{{1, 0}}, FromZero{{0, 0}}, None;
      int Me = B.rank();
      if (Me != Killed) {
        try {
          Connections C(B, Me == 0 ? ToOne : None, Me == 0 ? None : FromZero);
          B.barrier();
        } catch (const NetError &E) {
          std::fprintf(stderr, "rank %d: %s\n", Me, E.what());
        }
        return 0;
      }
      // The victim does what Connections does up to the offer, then dies.
      LinkSetup Setup(B, Me == 0 ? ToOne : None, Me == 0 ? None : FromZero, LinkOptions(),
                      TransportKind::Shm);
      std::unique_ptr<ShmSegment> Seg;
      if (Me == 1) {
        Seg = ShmSegment::create(ShmSegment::uniqueName(1, 0), 1, LinkOptions().NumSlots,
                                 LinkOptions().SlotBytes, /*SingleCopyMin=*/0);
        Setup.peers().at(0).Offer = Seg->name();
      }
      Setup.describe();
      Offers.write(Me == 1 ? Seg->name() : Setup.peers().at(1).PeerOffer);
      std::raise(SIGKILL);
      return 1;
    });
    std::string Log = testing::internal::GetCapturedStderr();
    std::string Name = Offers.read();
    EXPECT_TRUE(exitedWith(Status[size_t(1 - Killed)], 0)) << Log;
    EXPECT_TRUE(killedBy(Status[size_t(Killed)], SIGKILL)) << Log;
    ASSERT_EQ(Name.rfind("/cclc-", 0), 0u) << Name;
    EXPECT_FALSE(std::filesystem::exists("/dev/shm" + Name)) << "rank " << Killed << " killed\n"
                                                             << Log;
  }
  ::unsetenv("CCLC_TRANSPORT");
}
