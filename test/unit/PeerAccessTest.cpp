//===- PeerAccessTest.cpp - Which GPU ranks of a host write each other ----===//
//
// GPU ranks of a host connect over CUDA IPC only where both GPUs write each
// other's memory, both ranks deciding alike from each one's own answer, and
// fall back on the TCP links' mapped host memory where either cannot or the
// environment turns peer access off. The idle TCP proxy must not sleep while
// GPU work is in flight.
//
//===----------------------------------------------------------------------===//

#include "runtime/transport/PeerAccess.h"
#include "runtime/transport/tcp/TcpTransport.h"

#include "NetTestSupport.h"

#include <cstdlib>
#include <gtest/gtest.h>

using namespace cclc;
using namespace cclc::net;
using namespace cclc::net::test;
using namespace std::chrono_literals;

namespace {

/// Rank R's GPU, as a bus id.
std::string busOf(int Rank) { return "0000:0" + std::to_string(Rank) + ":00.0"; }

/// Runs Body(Bootstrap, PeerAccess) in N forked ranks of one host, where the
/// GPU of rank Blind cannot write to that of rank Hidden (and every other
/// pair can); Env is set in rank EnvRank before it decides.
std::vector<int> decide(int N, int Blind, int Hidden, int EnvRank, const char *Env,
                        const std::function<void(Bootstrap &, const PeerAccess &)> &Body) {
  std::unique_ptr<Root> R = createRoot(10s);
  UniqueId Id = R->id();
  return forkRanks(N, [&](int Rank) {
    std::unique_ptr<Bootstrap> B = Bootstrap::init(Id, Rank, N, 5s);
    if (Rank == EnvRank && Env)
      ::setenv("CCLC_P2P_DISABLE", Env, 1);
    PeerAccess Access(*B, busOf(Rank), [&](const std::string &Peer) {
      return !(Rank == Blind && Peer == busOf(Hidden));
    });
    Body(*B, Access);
    return 0;
  });
}

TEST(PeerAccess, BothRanksOfAPairMustReachTheOther) {
  std::vector<int> Status =
      decide(3, /*Blind=*/2, /*Hidden=*/0, -1, nullptr, [](Bootstrap &B, const PeerAccess &A) {
        int Rank = B.rank();
        for (int Peer = 0; Peer < 3; ++Peer) {
          if (Peer == Rank)
            continue;
          bool Want = !((Rank == 0 && Peer == 2) || (Rank == 2 && Peer == 0));
          require(A.direct(Peer) == Want, "rank " + std::to_string(Rank) + " and rank " +
                                              std::to_string(Peer) + ": " + A.describe());
          require(A.busId(Peer) == busOf(Peer), "the bus id of rank " + std::to_string(Peer));
        }
        if (Rank == 0)
          require(A.describe().find("rank 2 (GPU 0000:02:00.0): mapped host memory over tcp, GPU "
                                    "0000:02:00.0 of rank 2 cannot write to GPU 0000:00:00.0") !=
                      std::string::npos,
                  "rank 0 says why: " + A.describe());
      });
  for (int S : Status)
    EXPECT_TRUE(exitedWith(S, 0));
}

TEST(PeerAccess, OneRankTurningItOffMovesItsPairsToMappedMemory) {
  std::vector<int> Status =
      decide(3, -1, -1, /*EnvRank=*/1, "1", [](Bootstrap &B, const PeerAccess &A) {
        int Rank = B.rank();
        for (int Peer = 0; Peer < 3; ++Peer)
          if (Peer != Rank)
            require(A.direct(Peer) == (Rank != 1 && Peer != 1),
                    "rank " + std::to_string(Rank) + " and rank " + std::to_string(Peer));
        if (Rank == 0)
          require(A.describe().find("peer access disabled on rank 1") != std::string::npos,
                  "rank 0 says why: " + A.describe());
      });
  for (int S : Status)
    EXPECT_TRUE(exitedWith(S, 0));
}

TEST(PeerAccess, EnvironmentIsReadAsNcclReadsIt) {
  ::unsetenv("CCLC_P2P_DISABLE");
  ::setenv("NCCL_P2P_DISABLE", "1", 1);
  EXPECT_TRUE(p2pDisabledByEnvironment());
  ::setenv("CCLC_P2P_DISABLE", "0", 1);
  EXPECT_FALSE(p2pDisabledByEnvironment()) << "cclc's own variable wins";
  ::setenv("CCLC_P2P_DISABLE", "yes", 1);
  try {
    p2pDisabledByEnvironment();
    ADD_FAILURE() << "a malformed value is refused";
  } catch (const NetError &E) {
    EXPECT_NE(std::string(E.what()).find("CCLC_P2P_DISABLE=yes"), std::string::npos) << E.what();
  }
  ::unsetenv("CCLC_P2P_DISABLE");
  ::unsetenv("NCCL_P2P_DISABLE");
  EXPECT_FALSE(p2pDisabledByEnvironment());
}

TEST(TcpProxy, NeverSleepsWhileGpuWorkIsInFlight) {
  std::atomic<uint32_t> Busy{0};
  EXPECT_FALSE(idleProxyMaySleep(ProxySpinRounds - 1, nullptr)) << "it spins a while first";
  EXPECT_TRUE(idleProxyMaySleep(ProxySpinRounds, nullptr));
  EXPECT_TRUE(idleProxyMaySleep(ProxySpinRounds, &Busy));
  Busy = 2;
  EXPECT_FALSE(idleProxyMaySleep(ProxySpinRounds * 100, &Busy));
}

} // namespace
