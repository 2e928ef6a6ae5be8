//===- HostAbortTest.cpp - The abort word the ranks of a host share -------===//

#include "runtime/transport/shm/HostAbort.h"

#include "NetTestSupport.h"

#include <filesystem>
#include <functional>
#include <gtest/gtest.h>
#include <unistd.h>

using namespace cclc;
using namespace cclc::net;
using namespace cclc::net::test;
using namespace std::chrono_literals;

namespace {

/// Segments that process Pid created and left in /dev/shm.
size_t leftoverSegments(pid_t Pid) {
  std::string Prefix = "cclc-" + std::to_string(Pid) + "-";
  size_t Count = 0;
  for (const auto &Entry : std::filesystem::directory_iterator("/dev/shm"))
    Count += Entry.path().filename().string().rfind(Prefix, 0) == 0;
  return Count;
}

constexpr auto Timeout = 5s;

/// Runs Body in three forked ranks of one host, whose waits last Timeout,
/// and expects each to succeed.
void onThreeRanks(const std::function<void(Bootstrap &, int Rank)> &Body) {
  std::unique_ptr<Root> R = createRoot(10s);
  UniqueId Id = R->id();
  std::vector<int> Status = forkRanks(3, [&](int Rank) {
    Body(*Bootstrap::init(Id, Rank, 3, Timeout), Rank);
    return 0;
  });
  for (int S : Status)
    EXPECT_TRUE(exitedWith(S, 0));
}

/// Checks what every rank's word promises (it starts a page, which CUDA can
/// map, and no name is left in /dev/shm), then rank 1 raises Word to Value
/// between two barriers; returns what this rank reads after them.
uint32_t raisedByRankOne(Bootstrap &B, int Rank, HostAbortWord &Word, uint32_t Value) {
  require(reinterpret_cast<uintptr_t>(Word.page()) % HostAbortWord::pageBytes() == 0,
          "the word starts a page, which CUDA can map");
  require(leftoverSegments(::getpid()) == 0, "no name left in /dev/shm");
  B.barrier();
  if (Rank == 1)
    Word.word().store(Value);
  B.barrier();
  return Word.word().load();
}

/// One rank's raise reaches every rank of the host, two communicators'
/// words stay apart, and no name outlives the setup.
TEST(HostAbortWord, OneRankStopsEveryRankOfTheHost) {
  onThreeRanks([](Bootstrap &B, int Rank) {
    HostAbortWord First(B), Second(B);
    require(First.shared() && Second.shared(), "the ranks of one host share the page: " +
                                                   First.whyNotShared());
    // The host's leader made both pages, and removed their names once every
    // rank had mapped them.
    require(raisedByRankOne(B, Rank, First, 2) == 2,
            "rank 1's raise reached rank " + std::to_string(Rank));
    require(Second.word().load() == 0, "the other communicator's word stays down");
  });
}

/// A host leader that cannot create the page (a full /dev/shm) still joins
/// the name exchange: every rank of the host falls back on a page of its
/// own at once, instead of waiting for the bootstrap's timeout, and says
/// why.
TEST(HostAbortWord, LeaderWithoutPageLetsEveryRankFallBack) {
  onThreeRanks([](Bootstrap &B, int Rank) {
    auto Start = std::chrono::steady_clock::now();
    HostAbortWord Word(B, [](const std::string &) -> std::unique_ptr<ShmSegment> {
      throw NetError("no space left on /dev/shm");
    });
    require(std::chrono::steady_clock::now() - Start < Timeout / 2,
            "rank " + std::to_string(Rank) + " set up without waiting for a timeout");
    require(!Word.shared(), "rank " + std::to_string(Rank) + " uses a page of its own");
    std::string Expected = Rank == 0 ? "no space left" : "rank 0, the first of this host";
    require(Word.whyNotShared().find(Expected) != std::string::npos,
            "rank " + std::to_string(Rank) + " says why: " + Word.whyNotShared());
    require(raisedByRankOne(B, Rank, Word, 1) == (Rank == 1 ? 1u : 0u),
            "private words stay apart");
  });
}

} // namespace
