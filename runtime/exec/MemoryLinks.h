//===- MemoryLinks.h - Connections between ranks of one process -*- C++ -*-===//
//
// Ranks that are threads of one process connect through slot FIFOs
// (host/Connection.h) in process memory, one per (sender, receiver, channel).
// Every wait of every rank is bounded by one Waiter, whose abort flag stops
// all ranks when one of them fails: a collective in which a rank throws ends
// with an error on every rank, never with a hang.
//
// runRanks() runs a collective on such ranks with one thread per (rank,
// channel), the way the runtime calls a kernel once per channel. The
// executor is a plain function, so generated kernels, the plan interpreter
// and stand-ins that fail on purpose run the same way.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "host/Kernel.h"

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

namespace cclc::exec {

/// The connections of NRanks ranks on NChannels channels within one process.
class MemoryLinks {
public:
  /// FIFOs of NumSlots slots of SlotBytes; every wait gives up after Timeout.
  MemoryLinks(int NRanks, int NChannels, uint32_t NumSlots, size_t SlotBytes,
              std::chrono::milliseconds Timeout);
  MemoryLinks(const MemoryLinks &) = delete;
  MemoryLinks &operator=(const MemoryLinks &) = delete;

  int nranks() const { return NRanks; }
  int nchannels() const { return NChannels; }
  size_t slotBytes() const { return SlotBytes; }

  /// The connections rank Rank's kernels use.
  host::Links &links(int Rank);

  /// Makes every current and later wait throw CommError(Aborted). The FIFOs
  /// are left mid-collective, so the links cannot be used again.
  void abort() { AbortFlag.store(1, std::memory_order_relaxed); }
  bool aborted() const { return AbortFlag.load(std::memory_order_relaxed) != 0; }

private:
  /// One rank's view: its outboxes and inboxes.
  class RankLinks final : public host::Links {
  public:
    RankLinks(MemoryLinks &Net, int Rank) : Net(&Net), Rank(Rank) {}
    host::Outbox &out(int Peer, int Channel) override;
    host::Inbox &in(int Peer, int Channel) override;

  private:
    MemoryLinks *Net;
    int Rank;
  };

  struct AlignedDelete {
    void operator()(std::byte *Mem) const;
  };

  /// The FIFO from Sender to Receiver on Channel; no rank has one to itself.
  size_t fifoIndex(int Sender, int Receiver, int Channel) const;

  int NRanks;
  int NChannels;
  size_t SlotBytes;
  std::atomic<uint32_t> AbortFlag{0};
  host::Waiter Wait;
  std::unique_ptr<std::byte, AlignedDelete> Memory;
  /// Both ends of every FIFO, by fifoIndex.
  std::vector<host::Outbox> Outboxes;
  std::vector<host::Inbox> Inboxes;
  std::vector<RankLinks> Ranks;
};

/// Runs one channel of one rank's part of a collective (a host::KernelFn,
/// or the interpreter bound to a schedule, type and operator).
using ChannelFn = std::function<void(const host::KernelArgs &Args, int Channel)>;

/// Calls Run(Args[R], C) for every rank R of Net and channel C, each on a
/// thread of its own, with Args[R].Rank = R and Args[R].Net = Net.links(R),
/// and waits for all of them. The first exception raises Net's abort flag so
/// that the other ranks stop. Returns every rank's error: none where all its
/// channels finished, else the cause rather than the abort it led to where a
/// rank has both. Exceptions other than CommError are bugs, not
/// communication failures: the first is rethrown once every thread ended.
std::vector<std::optional<host::CommError>> runRanks(MemoryLinks &Net,
                                                     std::vector<host::KernelArgs> Args,
                                                     const ChannelFn &Run);

} // namespace cclc::exec
