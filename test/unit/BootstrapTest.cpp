//===- BootstrapTest.cpp - Rank rendezvous and bootstrap messages ---------===//

#include "runtime/bootstrap/Bootstrap.h"

#include "NetTestSupport.h"

#include <csignal>
#include <cstring>
#include <limits>
#include <poll.h>
#include <sys/resource.h>
#include <gtest/gtest.h>

using namespace cclc::net;
using namespace cclc::net::test;
using namespace std::chrono_literals;

namespace {

/// Every rank's allgather part, p2p messages with tags out of order, a
/// message larger than socket buffers, and barriers.
int exerciseBootstrap(Bootstrap &B) {
  int Rank = B.rank(), N = B.size();
  constexpr int Words = 6;
  std::vector<uint32_t> All(size_t(N) * Words, 0);
  for (int I = 0; I < Words; ++I)
    All[size_t(Rank * Words + I)] = uint32_t(Rank * 1000 + I);
  B.allgather(All.data(), Words * sizeof(uint32_t));
  for (int R = 0; R < N; ++R) {
    for (int I = 0; I < Words; ++I)
      require(All[size_t(R * Words + I)] == uint32_t(R * 1000 + I),
              "allgather part of rank " + std::to_string(R));
    require(B.hostId(R) == B.hostId(Rank) && !B.hostId(R).empty(), "one host for all ranks");
  }
  if (N > 1) {
    int Next = (Rank + 1) % N, Prev = (Rank + N - 1) % N;
    // Tag 7 goes first but is received last: streams of different tags are independent.
    uint64_t Seven = 7000 + uint64_t(Rank), Three = 3000 + uint64_t(Rank), Got = 0;
    B.send(Next, 7, &Seven, sizeof Seven);
    B.send(Next, 3, &Three, sizeof Three);
    B.recv(Prev, 3, &Got, sizeof Got);
    require(Got == 3000 + uint64_t(Prev), "tag 3 from the previous rank");
    B.recv(Prev, 7, &Got, sizeof Got);
    require(Got == 7000 + uint64_t(Prev), "tag 7 from the previous rank");
    // Pairs exchange a message larger than the socket buffers.
    int Partner = Rank ^ 1;
    if (Partner < N) {
      std::vector<uint32_t> Out(1 << 20), In(Out.size());
      for (size_t I = 0; I < Out.size(); ++I)
        Out[I] = uint32_t(I * 2654435761u) ^ uint32_t(Rank);
      auto Send = [&] { B.send(Partner, 1, Out.data(), Out.size() * sizeof(uint32_t)); };
      auto Recv = [&] { B.recv(Partner, 1, In.data(), In.size() * sizeof(uint32_t)); };
      if (Rank < Partner) {
        Send();
        Recv();
      } else {
        Recv();
        Send();
      }
      for (size_t I = 0; I < In.size(); ++I)
        require(In[I] == (uint32_t(I * 2654435761u) ^ uint32_t(Partner)), "large message");
    }
  }
  for (int I = 0; I < 3; ++I)
    B.barrier();
  return 0;
}

class BootstrapRanks : public ::testing::TestWithParam<int> {};

} // namespace

TEST_P(BootstrapRanks, AllgatherMessagesAndBarrier) {
  int N = GetParam();
  std::unique_ptr<Root> R = createRoot(10s);
  UniqueId Id = R->id();
  std::vector<int> Status =
      forkRanks(N, [&](int Rank) { return exerciseBootstrap(*Bootstrap::init(Id, Rank, N, 10s)); });
  for (int Rank = 0; Rank < N; ++Rank)
    EXPECT_TRUE(exitedWith(Status[size_t(Rank)], 0)) << "rank " << Rank;
}

INSTANTIATE_TEST_SUITE_P(Net, BootstrapRanks, ::testing::Range(1, 9));

TEST(Bootstrap, RefusesConnectionsWithoutTheSecret) {
  constexpr int N = 3;
  SocketAddress At = findInterface().Addr;
  At.setPort(freePort());
  testing::internal::CaptureStderr();
  uint64_t Secret = randomSecret();
  Root R(At, At, Secret, 10s);
  UniqueId Genuine = R.id(), Forged = makeUniqueId(At, Secret + 1);
  // A stranger that speaks another protocol, and one that says nothing.
  Socket Stranger = Socket::connect(At, Deadline(5s), "reach the root");
  const char Request[] = "GET / HTTP/1.0\r\n\r\n........................";
  Stranger.sendAll(Request, sizeof Request, Deadline(5s), "send to the root");
  Socket Silent = Socket::connect(At, Deadline(5s), "reach the root");
  Silent.close();
  constexpr int Refused = 7;
  std::vector<int> Status = forkRanks(N + 1, [&](int Rank) {
    if (Rank == N) {
      // Impersonates rank 0 with the wrong secret.
      try {
        Bootstrap::init(Forged, 0, N, 2s);
      } catch (const NetError &) {
        return Refused;
      }
      return 1;
    }
    return exerciseBootstrap(*Bootstrap::init(Genuine, Rank, N, 10s));
  });
  std::string Log = testing::internal::GetCapturedStderr();
  for (int Rank = 0; Rank < N; ++Rank)
    EXPECT_TRUE(exitedWith(Status[size_t(Rank)], 0)) << "rank " << Rank << "\n" << Log;
  EXPECT_TRUE(exitedWith(Status[N], Refused)) << Log;
  EXPECT_NE(Log.find("refused a connection from"), std::string::npos) << Log;
  EXPECT_NE(Log.find("did not present this job's secret"), std::string::npos) << Log;
  EXPECT_NE(Log.find("closed the connection before presenting a secret"), std::string::npos) << Log;
}

namespace {

/// Starts ranks 0 and 1 of a job of three whose rank 2 never comes; returns
/// the messages they failed with, after checking they failed within Limit.
std::string initWithoutRankTwo(std::chrono::milliseconds RootTimeout,
                               std::chrono::milliseconds RankTimeout,
                               std::chrono::milliseconds Limit) {
  SocketAddress At = findInterface().Addr;
  Root R(At, At, randomSecret(), RootTimeout);
  UniqueId Id = R.id();
  constexpr int FailedInTime = 7;
  testing::internal::CaptureStderr();
  std::vector<int> Status = forkRanks(2, [&](int Rank) {
    auto Start = std::chrono::steady_clock::now();
    try {
      Bootstrap::init(Id, Rank, 3, RankTimeout);
    } catch (const NetError &E) {
      std::fprintf(stderr, "init failed: %s\n", E.what());
      return std::chrono::steady_clock::now() - Start < Limit ? FailedInTime : 2;
    }
    return 1;
  });
  std::string Log = testing::internal::GetCapturedStderr();
  EXPECT_TRUE(exitedWith(Status[0], FailedInTime)) << Log;
  EXPECT_TRUE(exitedWith(Status[1], FailedInTime)) << Log;
  return Log;
}

} // namespace

TEST(Bootstrap, MissingRankReportedByTheRoot) {
  std::string Log = initWithoutRankTwo(1000ms, 5000ms, 3000ms);
  EXPECT_NE(Log.find("1 of 3 ranks (rank 2 among them) never reached"), std::string::npos) << Log;
}

TEST(Bootstrap, MissingRankTimesOutOnTheRanks) {
  std::string Log = initWithoutRankTwo(30000ms, 1000ms, 3000ms);
  EXPECT_NE(Log.find("timed out after 1000 ms"), std::string::npos) << Log;
}

TEST(Bootstrap, RejectsBadArguments) {
  std::unique_ptr<Root> R = createRoot(1s);
  EXPECT_THROW(Bootstrap::init(R->id(), 3, 3, 1s), NetError);
  UniqueId Garbage{};
  EXPECT_THROW(Bootstrap::init(Garbage, 0, 1, 1s), NetError);
  try {
    Bootstrap::init(R->id(), 0, std::numeric_limits<int>::max(), 1s);
    ADD_FAILURE() << "joined a job of 2^31 - 1 ranks";
  } catch (const NetError &E) {
    EXPECT_NE(std::string(E.what()).find("a job has 1 to 65536 ranks"), std::string::npos)
        << E.what();
  }
}

TEST(Bootstrap, InterfaceFromEnvironment) {
  {
    ScopedEnv Lo("CCLC_SOCKET_IFNAME", "lo");
    EXPECT_EQ(findInterface().Name, "lo");
  }
  ScopedEnv Missing("CCLC_SOCKET_IFNAME", "=no-such-interface");
  EXPECT_THROW(findInterface(), NetError);
}

/// A launched job's root listens on loopback alone where MASTER_ADDR is
/// loopback (bootstrapFromRendezvous), so this must tell such addresses.
TEST(Bootstrap, LoopbackAddressesAreKnown) {
  for (const char *Host : {"127.0.0.1", "127.1.2.3", "::1"})
    EXPECT_TRUE(SocketAddress::resolve(Host, 29500).isLoopback()) << Host;
  for (const char *Host : {"10.77.0.1", "192.0.2.1", "fd00::1"})
    EXPECT_FALSE(SocketAddress::resolve(Host, 29500).isLoopback()) << Host;
  EXPECT_FALSE(SocketAddress::any(AF_INET, 29500).isLoopback());
  EXPECT_FALSE(SocketAddress::any(AF_INET6, 29500).isLoopback());
}

namespace {

class LoopbackJob : public ::testing::TestWithParam<const char *> {};

} // namespace

TEST_P(LoopbackJob, RunsOverLoopback) {
  ScopedEnv Lo("CCLC_SOCKET_IFNAME", "lo");
  ScopedEnv Family("CCLC_SOCKET_FAMILY", GetParam());
  try {
    findInterface();
  } catch (const NetError &E) {
    GTEST_SKIP() << E.what();
  }
  std::unique_ptr<Root> R = createRoot(10s);
  UniqueId Id = R->id();
  std::vector<int> Status =
      forkRanks(3, [&](int Rank) { return exerciseBootstrap(*Bootstrap::init(Id, Rank, 3, 10s)); });
  for (int S : Status)
    EXPECT_TRUE(exitedWith(S, 0));
}

INSTANTIATE_TEST_SUITE_P(Net, LoopbackJob, ::testing::Values("AF_INET", "AF_INET6"));

TEST(Bootstrap, AbortStopsAWaitInAnotherThread) {
  std::unique_ptr<Root> R = createRoot(10s);
  UniqueId Id = R->id();
  // Two ranks of one job in two threads of this process.
  std::unique_ptr<Bootstrap> Other;
  std::thread Joiner([&] { Other = Bootstrap::init(Id, 1, 2, 10s); });
  std::unique_ptr<Bootstrap> B = Bootstrap::init(Id, 0, 2, 10s);
  Joiner.join();
  std::thread Aborter([&] {
    std::this_thread::sleep_for(100ms);
    B->abort();
  });
  auto Start = std::chrono::steady_clock::now();
  uint64_t Never = 0;
  try {
    B->recv(1, 5, &Never, sizeof Never);
    ADD_FAILURE() << "received a message nobody sent";
  } catch (const NetError &E) {
    EXPECT_NE(std::string(E.what()).find("aborted while waiting to receive"), std::string::npos)
        << E.what();
  }
  EXPECT_LT(std::chrono::steady_clock::now() - Start, 2s);
  Aborter.join();
}

namespace {

/// A root started in this process on a known address, and a two-rank job
/// that must come through it after whatever the test did to it.
struct Served {
  SocketAddress At = findInterface().Addr;
  uint64_t Secret = randomSecret();
  Served() { At.setPort(freePort()); }

  void expectAJobRuns() const {
    UniqueId Id = makeUniqueId(At, Secret);
    std::vector<int> Status = forkRanks(
        2, [&](int Rank) { return exerciseBootstrap(*Bootstrap::init(Id, Rank, 2, 10s)); });
    for (int Rank = 0; Rank < 2; ++Rank)
      EXPECT_TRUE(exitedWith(Status[size_t(Rank)], 0)) << "rank " << Rank;
  }
};

/// Whether the peer of S closed it within Limit.
bool closedWithin(Socket &S, std::chrono::milliseconds Limit) {
  pollfd P{S.fd(), POLLIN, 0};
  if (::poll(&P, 1, int(Limit.count())) <= 0)
    return false;
  char Byte;
  return ::recv(S.fd(), &Byte, 1, MSG_DONTWAIT) <= 0;
}

} // namespace

/// Before any rank registers, the root waits for ranks without a limit; a
/// connection that says nothing is still closed after HelloTimeout.
TEST(Bootstrap, SilentConnectionsAreClosedQuickly) {
  Served Job;
  testing::internal::CaptureStderr();
  Root R(Job.At, Job.At, Job.Secret, 30s);
  Socket Silent = Socket::connect(Job.At, Deadline(5s), "reach the root");
  auto Start = std::chrono::steady_clock::now();
  bool Closed = closedWithin(Silent, HelloTimeout + 2s);
  auto Took = std::chrono::steady_clock::now() - Start;
  Job.expectAJobRuns();
  std::string Log = testing::internal::GetCapturedStderr();
  EXPECT_TRUE(Closed) << Log;
  EXPECT_GE(Took, HelloTimeout - 100ms);
  EXPECT_NE(Log.find("presented no secret within 2000 ms"), std::string::npos) << Log;
}

/// A root in a process with few descriptors left survives a flood of silent
/// connections (more than its open-file limit) and serves the job after it.
TEST(Bootstrap, RootSurvivesAFloodOfSilentConnections) {
  Served Job;
  testing::internal::CaptureStderr();
  int Ready[2], Done[2];
  ASSERT_EQ(::pipe(Ready), 0);
  ASSERT_EQ(::pipe(Done), 0);
  std::fflush(nullptr);
  pid_t RootProcess = ::fork();
  if (RootProcess == 0) {
    // The root's process: too few descriptors for the flood.
    ::close(Ready[0]);
    ::close(Done[1]);
    rlimit Files{128, 128};
    int Code = 1;
    if (::setrlimit(RLIMIT_NOFILE, &Files) == 0) {
      Root R(Job.At, Job.At, Job.Secret, 10s);
      char Byte = 1;
      if (::write(Ready[1], &Byte, 1) == 1 && ::read(Done[0], &Byte, 1) == 0)
        Code = 0;
    }
    std::fflush(nullptr);
    ::_exit(Code);
  }
  ::close(Ready[1]);
  ::close(Done[0]);
  char Byte = 0;
  ASSERT_EQ(::read(Ready[0], &Byte, 1), 1);
  ::close(Ready[0]);
  std::vector<Socket> Flood;
  for (int I = 0; I < 300; ++I)
    Flood.push_back(Socket::connect(Job.At, Deadline(5s), "flood the root"));
  Job.expectAJobRuns();
  // The root closed the connections it had to drop to make room.
  int Closed = 0;
  for (Socket &S : Flood)
    Closed += closedWithin(S, 0ms);
  EXPECT_GT(Closed, 0);
  ::close(Done[1]);
  std::vector<int> Status = waitForChildren({RootProcess}, 10s);
  std::string Log = testing::internal::GetCapturedStderr();
  EXPECT_TRUE(exitedWith(Status[0], 0));
  EXPECT_NE(Log.find("no descriptor was left (Too many open files)"), std::string::npos) << Log;
}

/// A registration that claims more ranks than a job may have is refused,
/// not allocated for, and the root goes on serving.
TEST(Bootstrap, RootRefusesAHugeRankCount) {
  Served Job;
  testing::internal::CaptureStderr();
  Root R(Job.At, Job.At, Job.Secret, 10s);
  Socket Claim = connectWithHello(
      Job.At, Hello::make(Job.Secret, HelloKind::Register, 0, std::numeric_limits<int>::max(), 0),
      Deadline(5s), "reach the root");
  SocketAddress Nowhere;
  Claim.sendAll(&Nowhere, sizeof Nowhere, Deadline(5s), "register");
  Job.expectAJobRuns();
  std::string Log = testing::internal::GetCapturedStderr();
  EXPECT_NE(Log.find("it registers a job of 2147483647 ranks; the most is 65536"), std::string::npos)
      << Log;
}
