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
// A message that leaves room in its slot also carries its size word and a
// flag after its data (a trailer, MessageTrailer), written last, so that a
// receiver expecting a message of that size polls the slot itself and finds
// the data, the size and the flag in the lines it must read anyway: it
// learns of the message without reading the sender's Tail and the size
// array, two cache misses that otherwise come one after the other, before
// the data's. This is NCCL's low-latency idea for one flag per message. The
// sender still writes the size array and Tail, which sleepers, proxies and
// point-to-point transfers read, so a receiver that never finds the flag
// (its peer sent another size) finds the message by Tail as before.
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
#include <bit>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstring>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <algorithm>
#include <initializer_list>
#include <span>
#include <linux/futex.h>
#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <thread>
#include <type_traits>
#include <time.h>
#include <unistd.h>

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

/// Whether this process's advances of FIFO counters may skip the store-load
/// fence that a sleeper's wake-up otherwise needs (Bell): the process is
/// registered for expedited global memory barriers, which a sleeper issues
/// on the advancers' behalf. Registered on the first call; every FIFO calls
/// it when it is placed, before either side advances a counter.
inline bool advancesSkipFence() {
  static const bool Registered =
      ::syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED, 0, 0) == 0;
  return Registered;
}

/// A FIFO counter that one side advances and the other may sleep on: the
/// counter, and how many waiters sleep on its low 32 bits, a futex word
/// that every process mapping the FIFO shares. Advancing it costs a store
/// and a load while nobody sleeps, and a wake-up syscall only when somebody
/// does.
///
/// A waiter that counts itself in and then finds the counter unchanged must
/// not miss the advance that follows: one side's store and then load must
/// not pass the other's. The classic answer is a full fence on both sides,
/// but on the advancer's side, which runs once per message, that fence
/// waits until the message's lines have left for the receiver's core (0.1
/// us of a 0.7 us broadcast in a stream at 2 ranks). So, as RCU and
/// liburcu do, the fence is asymmetric: where the advancer's process is
/// registered (advancesSkipFence()), the sleeper, about to make a system
/// call anyway, makes every running thread of registered processes execute
/// a barrier (membarrier), and the advancer needs only the compiler's.
struct Bell {
  std::atomic<uint64_t> Value{0};
  /// Waiters see the bell read-only; counting themselves in changes no
  /// counter.
  mutable std::atomic<uint32_t> Sleepers{0};

  uint64_t load(std::memory_order Order) const { return Value.load(Order); }
  /// Sets the counter to V (a release) and wakes whoever sleeps on it.
  void publish(uint64_t V) {
    if (advancesSkipFence()) {
      Value.store(V, std::memory_order_release);
      std::atomic_signal_fence(std::memory_order_seq_cst);
    } else {
      Value.store(V, std::memory_order_seq_cst);
    }
    if (Sleepers.load(std::memory_order_seq_cst))
      ::syscall(SYS_futex, word(), FUTEX_WAKE, INT32_MAX, nullptr, nullptr, 0);
  }
  /// Counts a waiter in, and returns the counter's low half as seen after
  /// every advancer's earlier store is visible.
  uint32_t countIn() const {
    Sleepers.fetch_add(1, std::memory_order_seq_cst);
    // Orders the advancers' stores and loads around this point; where it
    // fails (no such kernel), so did their registration, and they fence.
    ::syscall(SYS_membarrier, MEMBARRIER_CMD_GLOBAL_EXPEDITED, 0, 0);
    return uint32_t(Value.load(std::memory_order_seq_cst));
  }
  /// The counter's low half, which changes on every advance.
  uint32_t *word() const {
    static_assert(std::endian::native == std::endian::little, "the futex word is the low half");
    return reinterpret_cast<uint32_t *>(const_cast<std::atomic<uint64_t> *>(&Value));
  }
};
static_assert(sizeof(std::atomic<uint64_t>) == 8 && sizeof(Bell) <= 64,
              "a counter and its sleepers share a cache line");

/// What a wait that has outlasted its patience asks about its peer: the
/// runtime can see, for peers on the same host, which call the peer is in,
/// and so tell a slow peer from one that makes another call (it waits on
/// other connections, or went on past what this rank waits for) and will
/// never satisfy the wait.
class StallCheck {
public:
  /// Throws CommError (CallMismatch where the peer's call is known) when
  /// Peer cannot satisfy the wait any more; Ready(Arg) re-checks the wait
  /// after the peer's progress was read, since a peer that went on may have
  /// posted what was waited for first.
  virtual void check(int Peer, bool (*Ready)(const void *), const void *Arg) const = 0;

protected:
  ~StallCheck() = default;
};

/// Bounds every blocking wait of one collective.
struct Waiter {
  /// Raised (nonzero) to stop every wait; may be null.
  const std::atomic<uint32_t> *Abort = nullptr;
  std::chrono::milliseconds Timeout{30000};
  /// How long a wait polls before it sleeps until its counters move; max
  /// (the default) never sleeps, for FIFOs whose other side cannot wake a
  /// sleeper (a GPU kernel's).
  std::chrono::microseconds Patience = std::chrono::microseconds::max();
  /// Asked on every round of sleep which peer a wait is stuck on; may be
  /// null.
  const StallCheck *Stall = nullptr;
  /// The longest sleep: an abort or a timeout is noticed within it.
  static constexpr std::chrono::milliseconds Nap{1};
  /// Polls before a wait starts yielding its core between polls. A message
  /// from a peer on a core of its own arrives within a few dozen; where
  /// ranks outnumber cores, every poll more delays the peer that shares
  /// the core (4 ranks on 2 cores: 2048 polls made a small allreduce take
  /// 8-12 us, 64 make it 3-6 us), and with a core per rank a yield returns
  /// at once, so the polls after these cost one system call each.
  static constexpr int SpinPolls = 64;
  /// Whether the polls after SpinPolls yield the core. Where every rank has
  /// a core of its own, a yield returns at once and only puts a system call
  /// between a message's arrival and its discovery (most of a small call's
  /// time at 2 ranks on 2 cores), so the runtime turns yielding off there
  /// and a wait polls until its patience runs out.
  bool Yields = true;

  /// Spins on Ready, then polls (yielding the core between polls where
  /// Yields), then sleeps until one of the counters Bells moves (Ready
  /// depends on no other memory), until it holds; throws on timeout or
  /// abort. What and Peer name the wait in the error.
  template <class Pred>
  void until(Pred &&Ready, const char *What, int Peer,
             std::initializer_list<const Bell *> Bells = {}) const {
    for (int Spin = 0; Spin < SpinPolls; ++Spin)
      if (Ready())
        return;
    auto Start = std::chrono::steady_clock::now();
    auto Deadline = Start + Timeout;
    bool MaySleep = Bells.size() && Patience != std::chrono::microseconds::max();
    auto SleepAt = MaySleep ? Start + Patience : Deadline;
    for (uint32_t I = 0;; ++I) {
      if (Ready())
        return;
      if (Abort && Abort->load(std::memory_order_relaxed))
        throw CommError(CommStatus::Aborted, std::string("aborted while waiting to ") + What +
                                                 " rank " + std::to_string(Peer));
      bool Sleepy = false;
      if ((I & 63) == 0 || I > 1u << 30) {
        auto Now = std::chrono::steady_clock::now();
        if (Now > Deadline)
          throw CommError(CommStatus::Timeout,
                          std::string("timed out after ") + std::to_string(Timeout.count()) +
                              " ms waiting to " + What + " rank " + std::to_string(Peer) +
                              "; the peer may have died or stalled");
        Sleepy = Now >= SleepAt;
      }
      if (Sleepy) {
        // Past the patience every round sleeps, and checks the clock.
        I = 1u << 30 | 1;
        if (Stall)
          Stall->check(
              Peer,
              [](const void *P) {
                return (*static_cast<const std::remove_reference_t<Pred> *>(P))();
              },
              &Ready);
        sleep(Bells, Ready);
      } else if (Yields) {
        std::this_thread::yield();
      }
    }
  }

private:
  /// Sleeps until a counter of Bells moves, for at most Nap, unless Ready
  /// already holds once this waiter is counted among the sleepers.
  template <class Pred>
  static void sleep(std::initializer_list<const Bell *> Bells, Pred &Ready) {
    struct Watched {
      const Bell *B;
      uint32_t Seen;
    } W[2] = {};
    size_t N = 0;
    for (const Bell *B : Bells)
      if (N < 2)
        W[N++] = {B, B->countIn()};
    if (!Ready()) {
      timespec Nap{0, long(std::chrono::nanoseconds(Waiter::Nap).count())};
      if (N == 1)
        ::syscall(SYS_futex, W[0].B->word(), FUTEX_WAIT, W[0].Seen, &Nap, nullptr, 0);
      else
        waitEither(W[0].B, W[0].Seen, W[1].B, W[1].Seen, Nap);
    }
    for (size_t I = 0; I < N; ++I)
      W[I].B->Sleepers.fetch_sub(1, std::memory_order_seq_cst);
  }

  /// Sleeps until A's or B's word differs from what was seen, for at most
  /// Nap: futex_waitv where the kernel has it (Linux 5.16), else a sleep on
  /// A alone, so that B's moves are noticed within Nap.
  static void waitEither(const Bell *A, uint32_t SeenA, const Bell *B, uint32_t SeenB,
                         timespec Nap) {
#ifdef SYS_futex_waitv
    futex_waitv Waits[2] = {{SeenA, uint64_t(uintptr_t(A->word())), FUTEX_32, 0},
                            {SeenB, uint64_t(uintptr_t(B->word())), FUTEX_32, 0}};
    timespec Until;
    ::clock_gettime(CLOCK_MONOTONIC, &Until);
    Until.tv_nsec += Nap.tv_nsec;
    Until.tv_sec += Until.tv_nsec / 1000000000;
    Until.tv_nsec %= 1000000000;
    if (::syscall(SYS_futex_waitv, Waits, 2u, 0u, &Until, CLOCK_MONOTONIC) >= 0 ||
        errno != ENOSYS)
      return;
#endif
    ::syscall(SYS_futex, A->word(), FUTEX_WAIT, SeenA, &Nap, nullptr, 0);
  }
};

/// One contiguous run of memory a message covers.
struct Run {
  const void *Ptr;
  size_t Bytes;
};

/// A buffer of the receiver's process that a sender of its host may map
/// (memory from cclcMemAlloc): its id in that process, where that process
/// maps it, its size, and that process's descriptor of it. Id 0: none.
struct SharedSpan {
  uint64_t Id = 0;
  uint64_t Base = 0;
  uint64_t Bytes = 0;
  int32_t Fd = -1;
};

/// The receiver's side of mapped buffers: which of its buffers, if any,
/// holds every run of a message.
class SharedIndex {
public:
  virtual bool find(std::span<const Run> Runs, SharedSpan &Span) const = 0;

protected:
  ~SharedIndex() = default;
};

/// One side's mappings of its peer's buffers: the sender's, of the
/// receiver's buffers it writes into, and the receiver's, of the sender's
/// buffers it reads messages from (MessageReference).
class PeerMemory {
public:
  /// Whether the peer's buffers can be mapped at all.
  virtual bool usable() = 0;
  /// This process's mapping of the peer's buffer Span, or null where it
  /// cannot be mapped. The mapping lasts while the pointer is held.
  virtual std::shared_ptr<std::byte> map(const SharedSpan &Span) = 0;

protected:
  ~PeerMemory() = default;
};

/// What the slot of a message that stays in the sender's buffer holds: the
/// buffer, as the sender maps it, and the message's address there.
struct MessageReference {
  SharedSpan Buffer;
  uint64_t Addr = 0;
  /// The smallest message sent so: its trailer (MessageTrailer) lies past
  /// the reference.
  static constexpr size_t MinBytes = 64;
};

/// Where a receiver asks the sender to write its next message: up to two
/// runs of the receiver's memory (a slice's runs), the number of that
/// message plus one (0: no offer), the digest of the receiver's call if
/// the message is its call's first, and the receiver's buffer holding the
/// runs where the sender may map it. The sender takes the offer only when
/// its message is that one, of that size, of the same call, and claims it
/// first, so that a receiver giving up can withdraw an offer safely.
struct DirectOffer {
  std::atomic<uint64_t> Seq{0};
  uint64_t Digest = 0;
  uint64_t Addr[2] = {0, 0};
  uint64_t Bytes[2] = {0, 0};
  SharedSpan Shared;
  /// Raised once the receiver can map the sender's buffers: the sender may
  /// then leave large messages there (MessageReference).
  std::atomic<uint32_t> ReadsSender{0};
};
/// The bit of DirectOffer::Seq a sender sets while it writes.
inline constexpr uint64_t OfferClaimed = uint64_t(1) << 63;

/// The shared part of a FIFO: the counters, on cache lines of their own,
/// each with what its writer alone writes.
struct FifoHeader {
  alignas(64) Bell Tail; ///< Messages posted by the sender.
  /// Drawn when the FIFO is made, so that message flags (MessageTrailer)
  /// left in reused memory by an earlier FIFO never pass for this one's.
  uint64_t Epoch = 0;
  alignas(64) Bell Head; ///< Messages consumed by the receiver.
  DirectOffer Offer;     ///< Written by the receiver, beside Head.
};
static_assert(sizeof(FifoHeader) == 192, "the counters and the offer fill three cache lines");

/// Where a message of Bytes bytes keeps its trailer in its slot: the size
/// word, then the flag of its message number, 16 bytes 8-aligned after the
/// data and within one cache line; none (nullopt) where the slot has no
/// room. Both sides compute it from the size they expect.
struct MessageTrailer {
  size_t Offset = 0;
  bool Present = false;

  MessageTrailer(size_t Bytes, size_t SlotBytes) {
    size_t At = (Bytes + 7) / 8 * 8;
    if (At % 64 > 48)
      At = (At + 63) / 64 * 64;
    Offset = At;
    Present = At + 16 <= SlotBytes;
  }
  /// The flag of message number Seq (its counter value plus one) of a FIFO
  /// of epoch Epoch: never zero, as fresh slots are, and unlikely as data.
  static uint64_t flag(uint64_t Seq, uint64_t Epoch) { return Seq ^ Epoch; }
};

/// A view of one FIFO laid out in a block of memory (common/Fifo.h).
struct Fifo : kern::FifoView<FifoHeader> {
  /// The header's epoch, read once, so that neither side reads the header's
  /// lines for it again.
  uint64_t Epoch = 0;

  /// Views Mem (64-byte aligned, bytesFor bytes); Init constructs the
  /// counters and draws the epoch, which exactly one side does before the
  /// other attaches.
  static Fifo place(void *Mem, uint32_t NumSlots, size_t SlotBytes, bool Init) {
    advancesSkipFence();
    if (Init)
      (new (Mem) FifoHeader())->Epoch = freshEpoch();
    Fifo F{FifoView::place(Mem, NumSlots, SlotBytes)};
    F.Epoch = F.Header->Epoch;
    return F;
  }

private:
  /// A value no FIFO made before in any process is likely to have, with the
  /// top bit set, so that a flag (a message number, below 2^63, XOR it) is
  /// never zero.
  static uint64_t freshEpoch() {
    static std::atomic<uint64_t> Made{0};
    uint64_t X = uint64_t(std::chrono::steady_clock::now().time_since_epoch().count()) ^
                 (uint64_t(::getpid()) << 32) ^ Made.fetch_add(0x9e3779b97f4a7c15ull);
    X = (X ^ (X >> 30)) * 0xbf58476d1ce4e5b9ull;
    X = (X ^ (X >> 27)) * 0x94d049bb133111ebull;
    return (X ^ (X >> 31)) | (uint64_t(1) << 63);
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
  /// The receiving process, whose memory this side may write
  /// (process_vm_writev) where the receiver offers it; 0 for none.
  pid_t DirectPid = 0;
  /// The smallest message the receiver offers its buffer for (its
  /// Inbox::DirectMin): smaller ones go through slots at once.
  size_t DirectMin = 0;
  /// Maps the receiver's buffers where it offers mapped memory, so that a
  /// message is copied into them without a system call; may be null.
  PeerMemory *Mapped = nullptr;
  /// This process's buffers, where a receiver that maps them may read a
  /// message the sender leaves in place; null where none may (TCP).
  const SharedIndex *Own = nullptr;
  /// The Tail after the last message left in the sender's buffer whose
  /// read has not been awaited; 0 for none.
  uint64_t ReadsPending = 0;
  /// The receiver's Head as last read: while it leaves a slot free, the
  /// sender does not read the receiver's cache line.
  uint64_t SeenHead = 0;
  /// How long a sender whose receiver has taken every message (or is
  /// reading the last one, left in this side's buffer) waits for the
  /// receiver's offer before it copies into a slot: about the time a rank
  /// takes between receives (forwarding one large message).
  static constexpr std::chrono::microseconds OfferWait{20};

  /// Writes the message of Bytes bytes in Src (its first two runs) straight
  /// into the receiver's buffer and posts it, when the receiver has offered
  /// that buffer for it (waiting up to OfferWait for the offer when MayWait
  /// and the receiver has taken every message, or reads the last one in
  /// this side's buffer); false, having done nothing, when it has not.
  /// Throws CommError when the receiver's memory cannot be written.
  bool sendDirect(std::span<const Run> Src, size_t Bytes, bool MayWait) {
    if (!DirectPid || Bytes < DirectMin)
      return false;
    uint64_t Tail = Q.Header->Tail.load(std::memory_order_relaxed);
    DirectOffer &O = Q.Header->Offer;
    uint64_t Want = Tail + 1;
    // A receiver that has taken every message is about to say whether it
    // wants this one (an offer, or a decline), unless it works on something
    // else: give it a moment. So is one still reading the message this side
    // left it last (sendReference), as a halving-doubling allreduce's peer
    // reads the half it combines: without the wait this message went by a
    // reference too, and read rather than written took a 2-rank 1 MiB
    // allreduce 95 us where it takes 46.
    auto ReceiverIsNext = [&] {
      uint64_t Head = Q.Header->Head.load(std::memory_order_acquire);
      return Head == Tail || (ReadsPending == Tail && Head + 1 == Tail);
    };
    if (MayWait && O.Seq.load(std::memory_order_acquire) != Want && ReceiverIsNext()) {
      auto Until = std::chrono::steady_clock::now() + OfferWait;
      while (O.Seq.load(std::memory_order_acquire) != Want &&
             std::chrono::steady_clock::now() < Until)
        std::this_thread::yield();
    }
    if (O.Seq.load(std::memory_order_acquire) != Want ||
        O.Digest != (Call && Call->Seq != Stamped ? kern::stampDigest(*Call) : 0) ||
        O.Bytes[0] + O.Bytes[1] != Bytes ||
        !O.Seq.compare_exchange_strong(Want, Want | OfferClaimed, std::memory_order_acq_rel))
      return false;
    iovec Local[2], Remote[2];
    unsigned NLocal = 0, NRemote = 0;
    for (const Run &R : Src.first(std::min<size_t>(Src.size(), 2)))
      if (R.Bytes)
        Local[NLocal++] = {const_cast<void *>(R.Ptr), R.Bytes};
    for (int I = 0; I < 2; ++I)
      if (O.Bytes[I])
        Remote[NRemote++] = {reinterpret_cast<void *>(uintptr_t(O.Addr[I])), size_t(O.Bytes[I])};
    if (writeMapped(O.Shared, Local, NLocal, Remote, NRemote)) {
      acquire();
      post(Bytes, kern::DirectWord);
      return true;
    }
    ssize_t Written = ::process_vm_writev(DirectPid, Local, NLocal, Remote, NRemote, 0);
    if (Written != ssize_t(Bytes))
      throw CommError(CommStatus::Aborted,
                      "could not write " + std::to_string(Bytes) + " bytes into rank " +
                          std::to_string(Peer) + "'s buffer (" +
                          (Written < 0 ? std::string(std::strerror(errno))
                                       : std::to_string(Written) + " written") +
                          "); it has probably died");
    acquire();
    post(Bytes, kern::DirectWord);
    return true;
  }

  /// Leaves the message R in this process's buffer for the receiver to
  /// read, posting where it lies, when the receiver maps this process's
  /// buffers, R lies in one and is large; false, having done nothing,
  /// otherwise. The caller must leave R unwritten until awaitReads().
  bool sendReference(const Run &R) {
    if (!Own || R.Bytes < DirectMin || R.Bytes < MessageReference::MinBytes ||
        Q.SlotBytes < R.Bytes || !Q.Header->Offer.ReadsSender.load(std::memory_order_relaxed))
      return false;
    MessageReference Ref;
    if (!Own->find({&R, 1}, Ref.Buffer))
      return false;
    Ref.Addr = uint64_t(uintptr_t(R.Ptr));
    std::memcpy(acquire(), &Ref, sizeof Ref);
    post(R.Bytes, kern::ReferenceWord);
    ReadsPending = Q.Header->Tail.load(std::memory_order_relaxed);
    return true;
  }
  /// Waits until the receiver has read every message left in this
  /// process's buffers (sendReference): before the call that sent them
  /// returns and its caller may change them.
  void awaitReads() {
    if (!ReadsPending)
      return;
    Wait->until(
        [&] {
          SeenHead = Q.Header->Head.load(std::memory_order_acquire);
          return SeenHead >= ReadsPending;
        },
        "have its buffer read by", Peer, {&Q.Header->Head});
    ReadsPending = 0;
  }

  /// Copies the runs Local into the receiver's runs Remote through this
  /// process's mapping of the receiver's buffer Span, where the receiver
  /// offered one, this side maps it, and every run lies in it; false, having
  /// written nothing, otherwise.
  bool writeMapped(const SharedSpan &Span, const iovec *Local, unsigned NLocal,
                   const iovec *Remote, unsigned NRemote) {
    if (!Mapped || !Span.Id)
      return false;
    for (unsigned I = 0; I < NRemote; ++I) {
      uint64_t At = uint64_t(uintptr_t(Remote[I].iov_base));
      if (At < Span.Base || At - Span.Base > Span.Bytes ||
          Remote[I].iov_len > Span.Bytes - (At - Span.Base))
        return false;
    }
    std::shared_ptr<std::byte> View = Mapped->map(Span);
    if (!View)
      return false;
    unsigned To = 0;
    size_t ToDone = 0;
    for (unsigned From = 0; From < NLocal; ++From)
      for (size_t Done = 0; Done < Local[From].iov_len;) {
        size_t N = std::min(Local[From].iov_len - Done, Remote[To].iov_len - ToDone);
        std::memcpy(View.get() + (uintptr_t(Remote[To].iov_base) - Span.Base) + ToDone,
                    static_cast<const std::byte *>(Local[From].iov_base) + Done, N);
        Done += N;
        ToDone += N;
        if (ToDone == Remote[To].iov_len) {
          ++To;
          ToDone = 0;
        }
      }
    return true;
  }

  /// Waits for a free slot and returns it; the call's first also gets the
  /// call's stamp, written while the caller fills the slot.
  std::byte *acquire() {
    uint64_t Tail = Q.Header->Tail.load(std::memory_order_relaxed);
    if (Tail - SeenHead >= Q.NumSlots)
      Wait->until(
          [&] {
            SeenHead = Q.Header->Head.load(std::memory_order_acquire);
            return Tail - SeenHead < Q.NumSlots;
          },
          "send to", Peer, {&Q.Header->Head});
    if (Call && Call->Seq != Stamped)
      Q.Stamps[Tail % Q.NumSlots] = *Call;
    return Q.slot(Tail);
  }
  /// True when acquire() would not wait. Reads the receiver's Head only
  /// when the one last seen leaves no slot free: an exchange asks before
  /// every send, and reading the line the receiver writes on every release
  /// moved it between the cores twice per message.
  bool ready() {
    uint64_t Tail = Q.Header->Tail.load(std::memory_order_relaxed);
    if (Tail - SeenHead < Q.NumSlots)
      return true;
    SeenHead = Q.Header->Head.load(std::memory_order_acquire);
    return Tail - SeenHead < Q.NumSlots;
  }
  /// Publishes the acquired slot holding Bytes bytes, or a message of Bytes
  /// bytes already in the receiver's buffer (Where: kern::DirectWord), or
  /// left in the sender's (kern::ReferenceWord, the slot saying where).
  void post(size_t Bytes, uint64_t Where = 0) {
    bool Direct = Where == kern::DirectWord;
    uint64_t Tail = Q.Header->Tail.load(std::memory_order_relaxed);
    uint64_t Word = Bytes;
    if (Call && Call->Seq != Stamped) {
      Word = kern::stampDigest(*Call) | (Bytes & 0xffffffffull);
      Stamped = Call->Seq;
    }
    Word |= Where;
    Q.Sizes[Tail % Q.NumSlots] = Word;
    if (MessageTrailer T(Bytes, Q.SlotBytes); T.Present && !Direct) {
      std::byte *At = Q.slot(Tail) + T.Offset;
      std::memcpy(At, &Word, sizeof Word);
      __atomic_store_n(reinterpret_cast<uint64_t *>(At + 8), MessageTrailer::flag(Tail + 1, Q.Epoch),
                       __ATOMIC_RELEASE);
    }
    Q.Header->Tail.publish(Tail + 1);
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
  /// The smallest message this side offers the sender to write straight
  /// into its buffer; 0 for none.
  size_t DirectMin = 0;
  /// Tells which offered buffers the sender may map; may be null.
  const SharedIndex *Shared = nullptr;
  /// Maps the sender's buffers, to read the messages it leaves there
  /// (MessageReference); null where none may be read (TCP).
  PeerMemory *SenderMemory = nullptr;
  /// Whether this side has asked whether it can map the sender's buffers
  /// (and said so in DirectOffer::ReadsSender).
  bool AskedReads = false;
  /// The mapping the message peek() returned lies in, if it is a reference.
  std::shared_ptr<std::byte> Reading{};
  /// The offer last made (DirectOffer::Seq), withdrawn if the receive fails.
  uint64_t Offered = 0;
  /// The size word of the message peek() returned.
  uint64_t Word = 0;
  /// Where the trailer of the message peek() returned lies in its slot.
  size_t LastTrailer = 0;

  /// Offers the sender Dst (at most two runs, Bytes in all) for the next
  /// message, unless it is small, has already come, or was offered.
  void offer(std::span<const Run> Dst, size_t Bytes) {
    uint64_t Head = Q.Header->Head.load(std::memory_order_relaxed);
    if (!DirectMin || Bytes < DirectMin || Dst.size() > 2 || Offered == Head + 1 ||
        Q.Header->Tail.load(std::memory_order_acquire) > Head)
      return;
    DirectOffer &O = Q.Header->Offer;
    O.Digest = Call && Call->Seq != Checked ? kern::stampDigest(*Call) : 0;
    size_t I = 0;
    for (const Run &R : Dst) {
      O.Addr[I] = uint64_t(uintptr_t(R.Ptr));
      O.Bytes[I++] = R.Bytes;
    }
    for (; I < 2; ++I)
      O.Addr[I] = O.Bytes[I] = 0;
    if (!Shared || !Shared->find(Dst, O.Shared))
      O.Shared = SharedSpan{};
    Offered = Head + 1;
    O.Seq.store(Offered, std::memory_order_release);
  }
  /// Tells the sender that the next message, of Bytes bytes, goes through
  /// a slot (the receiver combines it with its own data), so that a sender
  /// waiting for an offer sends it at once.
  void decline(size_t Bytes) {
    uint64_t Head = Q.Header->Head.load(std::memory_order_relaxed);
    if (!DirectMin || Bytes < DirectMin || Offered == Head + 1 ||
        Q.Header->Tail.load(std::memory_order_acquire) > Head)
      return;
    DirectOffer &O = Q.Header->Offer;
    O.Bytes[0] = O.Bytes[1] = 0;
    Offered = Head + 1;
    O.Seq.store(Offered, std::memory_order_release);
  }
  /// Withdraws the offer of a receive that failed, so that no sender writes
  /// into the buffer after the call has returned. A sender that already
  /// claimed it is writing: it is waited for until it posts, for at most a
  /// second, the abort notwithstanding (a writer that takes longer died).
  void withdraw() noexcept {
    uint64_t Want = Offered;
    if (!Want || Q.Header->Offer.Seq.compare_exchange_strong(Want, 0) ||
        Want != (Offered | OfferClaimed))
      return;
    uint64_t Head = Offered - 1;
    Waiter Brief{nullptr, std::min<std::chrono::milliseconds>(Wait->Timeout, WriterGrace)};
    try {
      Brief.until([&] { return Q.Header->Tail.load(std::memory_order_acquire) > Head; },
                  "finish writing for", Peer);
    } catch (const CommError &) {
      // The writer died or stalled: it writes nothing more.
    }
  }
  /// How long a failed receive waits for a sender that is writing into its buffer.
  static constexpr std::chrono::milliseconds WriterGrace{1000};

  /// Waits for the next message and returns its slot; Bytes must be its
  /// size, and the call's first must carry Call's digest. A message the
  /// sender wrote into the offered buffer has no data in its slot
  /// (direct() says so).
  const std::byte *peek(size_t Bytes) {
    uint64_t Head = Q.Header->Head.load(std::memory_order_relaxed);
    MessageTrailer T(Bytes, Q.SlotBytes);
    LastTrailer = T.Present ? T.Offset : 0;
    const std::byte *At = Q.slot(Head) + T.Offset;
    // The sender's flag comes with the message's last line; Tail after it,
    // or alone for a message of another size than expected, or one written
    // into the offered buffer. Where a flag is expected and nothing was
    // offered, Tail is read on every 16th poll only: a receiver polling it
    // keeps taking the line the sender is about to write.
    auto Flagged = [&] {
      return T.Present && __atomic_load_n(reinterpret_cast<const uint64_t *>(At + 8),
                                          __ATOMIC_ACQUIRE) == MessageTrailer::flag(Head + 1, Q.Epoch);
    };
    bool ByFlag = false;
    bool FlagExpected = T.Present && Offered != Head + 1;
    uint32_t Polls = 0;
    Wait->until(
        [&] {
          ByFlag = Flagged();
          return ByFlag || ((!FlagExpected || ++Polls % 16 == 0) &&
                            Q.Header->Tail.load(std::memory_order_acquire) > Head);
        },
        "receive from", Peer, {&Q.Header->Tail});
    if (ByFlag)
      std::memcpy(&Word, At, sizeof Word);
    else
      Word = Q.Sizes[Head % Q.NumSlots];
    if (Call && Call->Seq != Checked) {
      // The digest with another size than expected is the same call's, run
      // by two schedules whose plan hashes agree, unless the stamps differ:
      // the size check below names the former.
      const kern::CallStamp &Sent = Q.Stamps[Head % Q.NumSlots];
      if (kern::wordDigest(Word) != kern::stampDigest(*Call) ||
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
    if (!AskedReads && SenderMemory && DirectMin && Bytes >= DirectMin) {
      // The sender has posted, so it has said who it is: whether its
      // buffers can be mapped is known now.
      AskedReads = true;
      if (SenderMemory->usable())
        Q.Header->Offer.ReadsSender.store(1, std::memory_order_relaxed);
    }
    if (kern::wordReference(Word))
      return referenced(Q.slot(Head), Bytes);
    return Q.slot(Head);
  }
  /// Where the message of Bytes bytes that Slot refers to lies in this
  /// process's mapping of the sender's buffer.
  const std::byte *referenced(const std::byte *Slot, size_t Bytes) {
    MessageReference Ref;
    std::memcpy(&Ref, Slot, sizeof Ref);
    const SharedSpan &B = Ref.Buffer;
    uint64_t At = Ref.Addr - B.Base;
    if (SenderMemory && Ref.Addr >= B.Base && At <= B.Bytes && Bytes <= B.Bytes - At)
      Reading = SenderMemory->map(B);
    if (!Reading)
      throw CommError(CommStatus::Aborted,
                      "cannot map the buffer of rank " + std::to_string(Peer) +
                          " that holds its message of " + std::to_string(Bytes) +
                          " bytes; it has probably died");
    return Reading.get() + At;
  }
  /// True when a message has come whatever its size (by Tail: messages
  /// taken by their flags may run ahead of it).
  bool ready() const {
    return Q.Header->Tail.load(std::memory_order_acquire) >
           Q.Header->Head.load(std::memory_order_relaxed);
  }
  /// Whether the message peek() returned is already in the offered buffer.
  bool direct() const { return kern::wordDirect(Word); }
  /// Frees the slot returned by peek(), and tells a sender that left the
  /// message in its buffer that it has been read.
  void release() {
    Reading.reset();
    uint64_t Head = Q.Header->Head.load(std::memory_order_relaxed) + 1;
    Q.Header->Head.publish(Head);
    // Where the sender runs ahead (a root broadcasting a stream of small
    // messages), the next message is already in its slot: start moving its
    // first line, and its trailer's if it has the size of this one, while
    // this rank finishes its call. At 2 ranks this took a stream of 4-byte
    // broadcasts from 0.60 to 0.30-0.47 us a call. The sender does not
    // prefetch its next slot for writing: that took the line away from the
    // receiver's prefetch and cost the stream as much as this saved.
    __builtin_prefetch(Q.slot(Head));
    __builtin_prefetch(Q.slot(Head) + LastTrailer);
  }
};

} // namespace cclc::host
