//===- Connection.h - Bounded slot FIFOs between ranks (host) ----*- C++ -*-===//
//
// The connection model every executor shares: each (sender, receiver,
// channel) has a FIFO of NumSlots slots of SlotBytes, in memory both sides
// reach (process memory for threads, POSIX shared memory between processes,
// a local buffer drained by a network proxy for TCP). The sender advances
// Tail after filling a slot; the receiver advances Head after consuming one.
// Each counter has one writer, so the data path takes no lock. This is
// NCCL's simple protocol, with one message per slot.
//
// Every wait is bounded by a Waiter: its timeout, and an abort flag that a
// failing rank or the runtime raises so that all ranks stop instead of
// hanging. A wait that ends that way throws CommError.
//
// The runtime gives both ends of its connections the stamp of the call in
// progress (common/Fifo.h). The sender writes it beside the slot of the
// call's first message on the FIFO, while it fills the slot, and a digest
// of it into that message's size word; the receiver compares the word with
// its own call's before reading the message, so ranks that make different
// calls fail at their first message, with CallMismatch, before any data
// moves, and only then reads the peer's stamp, to name its call. Calls that
// agree on their stamps run the same schedule, so their later messages line
// up and carry plain sizes: a call costs the receiver no memory it does not
// read anyway. A receiver that meets a message other than the peer's first
// of the call finds no digest, or another call's. Ends without a stamp (in-process
// tests) neither write nor check one; point-to-point transfers read their
// slots themselves and check sizes only.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "common/Fifo.h"

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <new>
#include <stdexcept>
#include <string>
#include <thread>

namespace cclc::host {

enum class CommStatus {
  Timeout,  ///< A peer did not make progress within the timeout.
  Aborted,  ///< Another rank or the runtime stopped the collective.
  Mismatch, ///< A message had another size, or came from another call, than expected.
};

class CommError : public std::runtime_error {
public:
  CommError(CommStatus Status, const std::string &What)
      : std::runtime_error(What), Status(Status) {}
  CommStatus status() const { return Status; }

private:
  CommStatus Status;
};

/// A message of another call than the receiver's: Sent is the peer's call,
/// Expected the receiver's. The runtime rewrites the message with both
/// calls described.
class CallMismatch : public CommError {
public:
  CallMismatch(int Peer, const kern::CallStamp &Sent, const kern::CallStamp &Expected)
      : CommError(CommStatus::Mismatch,
                  "rank " + std::to_string(Peer) + " sent a message of another call (its call " +
                      std::to_string(Sent.Seq) + ", this rank's call " +
                      std::to_string(Expected.Seq) + "); every rank must make the same calls"),
        Peer(Peer), Sent(Sent), Expected(Expected) {}
  int Peer;
  kern::CallStamp Sent, Expected;
};

/// Bounds every blocking wait of one collective.
struct Waiter {
  /// Raised (nonzero) to stop every wait; may be null.
  const std::atomic<uint32_t> *Abort = nullptr;
  std::chrono::milliseconds Timeout{30000};

  /// Spins on Ready, then yields, until it holds; throws on timeout or abort.
  /// What and Peer name the wait in the error.
  template <class Pred> void until(Pred &&Ready, const char *What, int Peer) const {
    for (int Spin = 0; Spin < 2048; ++Spin)
      if (Ready())
        return;
    auto Deadline = std::chrono::steady_clock::now() + Timeout;
    for (uint32_t I = 0;; ++I) {
      if (Ready())
        return;
      if (Abort && Abort->load(std::memory_order_relaxed))
        throw CommError(CommStatus::Aborted, std::string("aborted while waiting to ") + What +
                                                 " rank " + std::to_string(Peer));
      if ((I & 63) == 0 && std::chrono::steady_clock::now() > Deadline)
        throw CommError(CommStatus::Timeout,
                        std::string("timed out after ") + std::to_string(Timeout.count()) +
                            " ms waiting to " + What + " rank " + std::to_string(Peer) +
                            "; the peer may have died or stalled");
      std::this_thread::yield();
    }
  }
};

/// The shared part of a FIFO: the counters, on cache lines of their own.
struct FifoHeader {
  alignas(64) std::atomic<uint64_t> Tail{0}; ///< Messages posted by the sender.
  alignas(64) std::atomic<uint64_t> Head{0}; ///< Messages consumed by the receiver.
};

/// A view of one FIFO laid out in a block of memory (common/Fifo.h).
struct Fifo : kern::FifoView<FifoHeader> {
  /// Views Mem (64-byte aligned, bytesFor bytes); Init constructs the
  /// counters, which exactly one side does before the other attaches.
  static Fifo place(void *Mem, uint32_t NumSlots, size_t SlotBytes, bool Init) {
    if (Init)
      new (Mem) FifoHeader();
    return {FifoView::place(Mem, NumSlots, SlotBytes)};
  }
};

/// The sending end of a FIFO.
struct Outbox {
  Fifo Q;
  int Peer = -1;
  const Waiter *Wait = nullptr;
  /// The call in progress, whose first message carries it; null for none.
  const kern::CallStamp *Call = nullptr;
  /// The number of the last call whose first message was stamped.
  uint64_t Stamped = 0;

  /// Waits for a free slot and returns it; the call's first also gets the
  /// call's stamp, written while the caller fills the slot.
  std::byte *acquire() {
    uint64_t Tail = Q.Header->Tail.load(std::memory_order_relaxed);
    Wait->until(
        [&] { return Tail - Q.Header->Head.load(std::memory_order_acquire) < Q.NumSlots; },
        "send to", Peer);
    if (Call && Call->Seq != Stamped)
      Q.Stamps[Tail % Q.NumSlots] = *Call;
    return Q.slot(Tail);
  }
  /// True when acquire() would not wait.
  bool ready() const {
    return Q.Header->Tail.load(std::memory_order_relaxed) -
               Q.Header->Head.load(std::memory_order_acquire) <
           Q.NumSlots;
  }
  /// Publishes the acquired slot holding Bytes bytes.
  void post(size_t Bytes) {
    uint64_t Tail = Q.Header->Tail.load(std::memory_order_relaxed);
    uint64_t Word = Bytes;
    if (Call && Call->Seq != Stamped) {
      Word = kern::stampDigest(*Call) | (Bytes & 0xffffffffull);
      Stamped = Call->Seq;
    }
    Q.Sizes[Tail % Q.NumSlots] = Word;
    Q.Header->Tail.store(Tail + 1, std::memory_order_release);
  }
};

/// The receiving end of a FIFO.
struct Inbox {
  Fifo Q;
  int Peer = -1;
  const Waiter *Wait = nullptr;
  /// The call in progress, whose first message must carry it; null for none.
  const kern::CallStamp *Call = nullptr;
  /// The number of the last call whose first message was checked.
  uint64_t Checked = 0;

  /// Waits for the next message and returns its slot; Bytes must be its
  /// size, and the call's first must carry Call's digest.
  const std::byte *peek(size_t Bytes) {
    uint64_t Head = Q.Header->Head.load(std::memory_order_relaxed);
    Wait->until([&] { return Q.Header->Tail.load(std::memory_order_acquire) != Head; },
                "receive from", Peer);
    uint64_t Word = Q.Sizes[Head % Q.NumSlots];
    if (Call && Call->Seq != Checked) {
      // The digest with another size than expected is the same call's, run
      // by two schedules whose plan hashes agree, unless the stamps differ:
      // the size check below names the former.
      const kern::CallStamp &Sent = Q.Stamps[Head % Q.NumSlots];
      if ((Word & ~0xffffffffull) != kern::stampDigest(*Call) ||
          (kern::wordBytes(Word) != Bytes && Sent != *Call))
        throw CallMismatch(Peer, Sent, *Call);
      Checked = Call->Seq;
    }
    uint64_t Got = kern::wordBytes(Word);
    if (Got != Bytes)
      throw CommError(CommStatus::Mismatch,
                      "received " + std::to_string(Got) + " bytes from rank " +
                          std::to_string(Peer) + " where the schedule expects " +
                          std::to_string(Bytes) +
                          "; the ranks run different plans or kernels");
    return Q.slot(Head);
  }
  /// True when peek() would not wait.
  bool ready() const {
    return Q.Header->Tail.load(std::memory_order_acquire) !=
           Q.Header->Head.load(std::memory_order_relaxed);
  }
  /// Frees the slot returned by peek().
  void release() { Q.Header->Head.fetch_add(1, std::memory_order_release); }
};

} // namespace cclc::host
