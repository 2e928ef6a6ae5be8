//===- PointToPointTest.cpp - Groups of sends and receives, in one process -===//
//
// exec::runTransfers on FIFOs in process memory, each rank a thread: messages
// of 0 bytes, of one slot, of several slots and of more than the whole FIFO
// arrive whole and in order; a group that sends to and receives from every
// peer at once finishes; a receive of another size than the send fails at
// its first slot without writing; a silent peer times out and an abort stops
// the wait, each naming the peer.
//
//===----------------------------------------------------------------------===//

#include "runtime/exec/MemoryLinks.h"
#include "runtime/exec/PointToPoint.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace cclc::exec {
namespace {

using std::chrono::milliseconds;

constexpr uint32_t NumSlots = 4;
constexpr size_t SlotBytes = 64;

std::vector<std::byte> pattern(size_t Bytes, int Seed) {
  std::vector<std::byte> Data(Bytes);
  for (size_t I = 0; I < Bytes; ++I)
    Data[I] = std::byte(uint8_t(I * 7 + size_t(Seed) * 31 + 1));
  return Data;
}

/// Runs Body(Rank) for every rank of Net on a thread of its own; the error
/// each threw, if any.
std::vector<std::optional<host::CommError>> onRanks(MemoryLinks &Net,
                                                    const std::function<void(int)> &Body) {
  std::vector<std::optional<host::CommError>> Errors(size_t(Net.nranks()));
  std::vector<std::thread> Threads;
  for (int Rank = 0; Rank < Net.nranks(); ++Rank)
    Threads.emplace_back([&, Rank] {
      try {
        Body(Rank);
      } catch (const host::CommError &E) {
        Errors[size_t(Rank)] = E;
        Net.abort();
      }
    });
  for (std::thread &T : Threads)
    T.join();
  return Errors;
}

TEST(PointToPoint, MessagesOfEverySizeArriveWholeAndInOrder) {
  MemoryLinks Net(2, 1, NumSlots, SlotBytes, milliseconds(5000));
  const std::vector<size_t> Sizes = {
      0, 1, 63, SlotBytes, SlotBytes + 1, 3 * SlotBytes, NumSlots * SlotBytes * 5 + 17};
  std::vector<std::vector<std::byte>> Got(Sizes.size());
  auto Errors = onRanks(Net, [&](int Rank) {
    // Every message is queued on the one FIFO: each starts when the one
    // before it has ended.
    std::vector<std::vector<std::byte>> Sent;
    std::vector<Transfer> Group;
    for (size_t I = 0; I < Sizes.size(); ++I) {
      if (Rank == 0) {
        Sent.push_back(pattern(Sizes[I], int(I)));
        Group.push_back(Transfer::send(Net.links(0).out(1, 0), Sent.back().data(), Sizes[I]));
      } else {
        Got[I].assign(Sizes[I] + 1, std::byte(0xee));
        Group.push_back(Transfer::receive(Net.links(1).in(0, 0), Got[I].data(), Sizes[I]));
      }
      Group.back().After = int32_t(I) - 1;
    }
    runTransfers(Group, Rank);
  });
  ASSERT_FALSE(Errors[0] || Errors[1]) << (Errors[0] ? Errors[0] : Errors[1])->what();
  for (size_t I = 0; I < Sizes.size(); ++I) {
    std::vector<std::byte> Want = pattern(Sizes[I], int(I));
    Want.push_back(std::byte(0xee)); // Nothing is written past the buffer.
    EXPECT_EQ(Got[I], Want) << "message " << I << " of " << Sizes[I] << " bytes";
  }
}

TEST(PointToPoint, EveryRankSendsToAndReceivesFromEveryOtherAtOnce) {
  constexpr int NRanks = 4;
  MemoryLinks Net(NRanks, 1, NumSlots, SlotBytes, milliseconds(5000));
  // Each message outgrows the FIFO, so no rank could finish its sends
  // before the others receive.
  auto Size = [](int From, int To) { return size_t(2000 + From * 300 + To * 7); };
  std::vector<std::vector<std::vector<std::byte>>> Got(NRanks);
  auto Errors = onRanks(Net, [&](int Rank) {
    std::vector<std::vector<std::byte>> Sent;
    std::vector<Transfer> Group;
    Got[size_t(Rank)].resize(NRanks);
    for (int Peer = 0; Peer < NRanks; ++Peer) {
      if (Peer == Rank)
        continue;
      Sent.push_back(pattern(Size(Rank, Peer), Rank));
      Got[size_t(Rank)][size_t(Peer)].resize(Size(Peer, Rank));
      Group.push_back(
          Transfer::send(Net.links(Rank).out(Peer, 0), Sent.back().data(), Sent.back().size()));
      Group.push_back(Transfer::receive(Net.links(Rank).in(Peer, 0),
                                        Got[size_t(Rank)][size_t(Peer)].data(), Size(Peer, Rank)));
    }
    runTransfers(Group, Rank);
  });
  for (int Rank = 0; Rank < NRanks; ++Rank) {
    ASSERT_FALSE(Errors[size_t(Rank)]) << Errors[size_t(Rank)]->what();
    for (int Peer = 0; Peer < NRanks; ++Peer)
      if (Peer != Rank) {
        EXPECT_EQ(Got[size_t(Rank)][size_t(Peer)], pattern(Size(Peer, Rank), Peer))
            << "rank " << Rank << " from rank " << Peer;
      }
  }
}

TEST(PointToPoint, AReceiveOfAnotherSizeFailsAtOnceWithoutWriting) {
  for (size_t Receives : {size_t(200), size_t(3000)}) {
    MemoryLinks Net(2, 1, NumSlots, SlotBytes, milliseconds(5000));
    std::vector<std::byte> Sent = pattern(300, 1), Got(Receives, std::byte(0xee));
    auto Errors = onRanks(Net, [&](int Rank) {
      std::vector<Transfer> Group = {
          Rank == 0 ? Transfer::send(Net.links(0).out(1, 0), Sent.data(), Sent.size())
                    : Transfer::receive(Net.links(1).in(0, 0), Got.data(), Receives)};
      runTransfers(Group, Rank);
    });
    ASSERT_TRUE(Errors[1]);
    EXPECT_EQ(Errors[1]->status(), host::CommStatus::Mismatch);
    EXPECT_NE(std::string(Errors[1]->what())
                  .find("rank 0 sent 300 bytes where rank 1 receives " + std::to_string(Receives)),
              std::string::npos)
        << Errors[1]->what();
    EXPECT_EQ(Got, std::vector<std::byte>(Receives, std::byte(0xee)));
  }
}

TEST(PointToPoint, ASilentPeerTimesOutAndAnAbortStopsTheWaitNamingThePeer) {
  MemoryLinks Net(3, 1, NumSlots, SlotBytes, milliseconds(100));
  // More than the FIFO holds: the send waits once it is full.
  std::vector<std::byte> Buffer(NumSlots * SlotBytes * 2);
  std::vector<Transfer> Group = {Transfer::receive(Net.links(0).in(2, 0), Buffer.data(), 10)};
  try {
    runTransfers(Group, 0);
    FAIL() << "a receive from a silent peer returned";
  } catch (const host::CommError &E) {
    EXPECT_EQ(E.status(), host::CommStatus::Timeout);
    EXPECT_NE(std::string(E.what()).find("receive from rank 2"), std::string::npos) << E.what();
  }
  Net.abort();
  Group = {Transfer::send(Net.links(1).out(2, 0), Buffer.data(), Buffer.size())};
  try {
    runTransfers(Group, 1);
    FAIL() << "an aborted send returned";
  } catch (const host::CommError &E) {
    EXPECT_EQ(E.status(), host::CommStatus::Aborted);
    EXPECT_NE(std::string(E.what()).find("send to rank 2"), std::string::npos) << E.what();
  }
}

} // namespace
} // namespace cclc::exec
