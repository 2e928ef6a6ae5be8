//===- MemoryLinks.cpp - Connections between ranks of one process ---------===//

#include "runtime/exec/MemoryLinks.h"
#include "plan/Assert.h"

#include <exception>
#include <mutex>
#include <new>
#include <thread>

namespace cclc::exec {

namespace {

/// FIFOs start on cache lines of their own.
constexpr size_t FifoAlign = 64;

} // namespace

void MemoryLinks::AlignedDelete::operator()(std::byte *Mem) const {
  ::operator delete(Mem, std::align_val_t(FifoAlign));
}

MemoryLinks::MemoryLinks(int NRanks, int NChannels, uint32_t NumSlots, size_t SlotBytes,
                         std::chrono::milliseconds Timeout)
    : NRanks(NRanks), NChannels(NChannels), SlotBytes(SlotBytes) {
  CCLC_ASSERT(NRanks >= 1 && NChannels >= 1 && NumSlots >= 1, "an empty network");
  Wait.Abort = &AbortFlag;
  Wait.Timeout = Timeout;
  const size_t Fifos = size_t(NRanks) * size_t(NRanks - 1) * size_t(NChannels);
  const size_t FifoBytes =
      (host::Fifo::bytesFor(NumSlots, SlotBytes) + FifoAlign - 1) / FifoAlign * FifoAlign;
  if (Fifos)
    Memory.reset(static_cast<std::byte *>(
        ::operator new(Fifos * FifoBytes, std::align_val_t(FifoAlign))));
  Outboxes.resize(Fifos);
  Inboxes.resize(Fifos);
  for (int Sender = 0; Sender < NRanks; ++Sender)
    for (int Receiver = 0; Receiver < NRanks; ++Receiver)
      for (int Channel = 0; Receiver != Sender && Channel < NChannels; ++Channel) {
        size_t I = fifoIndex(Sender, Receiver, Channel);
        host::Fifo Q = host::Fifo::place(Memory.get() + I * FifoBytes, NumSlots, SlotBytes, true);
        Outboxes[I] = {Q, Receiver, &Wait};
        Inboxes[I] = {Q, Sender, &Wait};
      }
  Ranks.reserve(NRanks);
  for (int Rank = 0; Rank < NRanks; ++Rank)
    Ranks.emplace_back(*this, Rank);
}

size_t MemoryLinks::fifoIndex(int Sender, int Receiver, int Channel) const {
  CCLC_ASSERT(Sender >= 0 && Sender < NRanks && Receiver >= 0 && Receiver < NRanks &&
                  Sender != Receiver,
              "a connection joins two different ranks of the network");
  CCLC_ASSERT(Channel >= 0 && Channel < NChannels, "the channel is not one of the network's");
  int Slot = Receiver < Sender ? Receiver : Receiver - 1;
  return (size_t(Sender) * size_t(NRanks - 1) + size_t(Slot)) * size_t(NChannels) +
         size_t(Channel);
}

host::Links &MemoryLinks::links(int Rank) {
  CCLC_ASSERT(Rank >= 0 && Rank < NRanks, "the rank is not one of the network's");
  return Ranks[Rank];
}

host::Outbox &MemoryLinks::RankLinks::out(int Peer, int Channel) {
  return Net->Outboxes[Net->fifoIndex(Rank, Peer, Channel)];
}

host::Inbox &MemoryLinks::RankLinks::in(int Peer, int Channel) {
  return Net->Inboxes[Net->fifoIndex(Peer, Rank, Channel)];
}

std::vector<std::optional<host::CommError>> runRanks(MemoryLinks &Net,
                                                     std::vector<host::KernelArgs> Args,
                                                     const ChannelFn &Run) {
  CCLC_ASSERT(static_cast<int>(Args.size()) == Net.nranks(), "one argument set per rank");
  std::vector<std::optional<host::CommError>> Errors(Args.size());
  std::exception_ptr Bug;
  std::mutex Lock;
  auto RunOne = [&](int Rank, int Channel) {
    try {
      Run(Args[Rank], Channel);
    } catch (const host::CommError &E) {
      Net.abort();
      std::lock_guard<std::mutex> Guard(Lock);
      std::optional<host::CommError> &Slot = Errors[Rank];
      if (!Slot || (Slot->status() == host::CommStatus::Aborted &&
                    E.status() != host::CommStatus::Aborted))
        Slot = E;
    } catch (...) {
      Net.abort();
      std::lock_guard<std::mutex> Guard(Lock);
      if (!Bug)
        Bug = std::current_exception();
    }
  };
  std::vector<std::jthread> Threads;
  Threads.reserve(Args.size() * size_t(Net.nchannels()));
  for (int Rank = 0; Rank < Net.nranks(); ++Rank) {
    CCLC_ASSERT(Args[Rank].SlotBytes == Net.slotBytes(),
                "kernels must pack messages into slots of the links' size");
    Args[Rank].Rank = Rank;
    Args[Rank].Net = &Net.links(Rank);
    for (int Channel = 0; Channel < Net.nchannels(); ++Channel)
      Threads.emplace_back(RunOne, Rank, Channel);
  }
  Threads.clear(); // joins
  if (Bug)
    std::rethrow_exception(Bug);
  return Errors;
}

} // namespace cclc::exec
