//===- Connection.cuh - Bounded slot FIFOs between ranks (CUDA) -*- CUDA -*-===//
//
// The connection model of host/Connection.h, on the device: each (sender,
// receiver, channel) has a FIFO of NumSlots slots of SlotBytes, in memory
// both sides reach (device memory mapped into the peer over CUDA IPC, or
// mapped pinned host memory that a network proxy drains). The sender
// advances Tail after filling a slot; the receiver advances Head after
// consuming one. The memory layout is common/Fifo.h's, so host code (a proxy
// thread using host::Outbox, or the runtime initialising a FIFO) and device
// code share one FIFO.
//
// Tail counts every message up to the last one sent the simple way: LL
// messages advance no Tail, so a receiver waits for Tail to pass the
// messages it has taken, not to differ from them.
//
// Each side polls only memory near itself. Tail lies in the FIFO's header,
// in the receiver's memory with the slots it guards; Head lies wherever the
// connection says (Outbox::Head, Inbox::Head): over CUDA IPC in the
// sender's memory, which the receiver writes across the link, so that a
// sender waiting for room reads its own GPU's memory instead of the peer's.
// Where a host proxy shares the FIFO, Head is the header's own word, as
// host/Connection.h expects. Each side also keeps its own counter (the
// messages it posted or consumed) in Step, so that it never reads back a
// word it alone writes.
//
// A thread block runs one channel. Thread 0 waits on the counters with
// system-scope acquire loads, the block synchronizes and every thread moves
// data; publishing is a barrier followed by thread 0's system-scope release
// store, which orders every thread's data writes before it.
//
// The launch carries its call's stamp (common/Fifo.h), as host executors
// do: the first message of the call on each FIFO carries the stamp beside
// its slot and its digest in its size word, and the receiver compares the
// digest before it reads the message, so ranks that make different calls
// fail with a mismatch naming the peer's call instead of combining the
// wrong data.
//
// A step of a line protocol (LL or LL128, common/Protocol.h) writes small
// and medium messages as lines that carry their own flags: the threads
// write their lines with no barrier or fence before it, and the threads of
// the receiving block poll their own lines (by LL each thread alone, by
// LL128 each warp for the lines it holds), so the message costs neither
// side a handshake. The block stages the message in shared memory, so that
// the primitives move it with the loops of the simple protocol. Only FIFOs
// that both ends' kernels reach carry lines (LowLatency): a host proxy
// waits for Tail; and only those whose 128-byte stores arrive whole carry
// LL128's (WholeLines).
//
// Every wait is bounded by an abort flag in mapped memory, and, when the
// launch sets one, by a timeout measured on the global timer. A wait that
// ends that way records why in the kernel's status word, raises the abort
// flag so the kernel's other blocks (and every rank watching the flag) stop
// too, and makes the block's remaining waits fail at once, so the kernel
// returns instead of hanging or trapping.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "common/Fifo.h"
#include "common/Protocol.h"
#include "cuda/Device.cuh"

#include <cstddef>
#include <cstdint>

namespace cclc::cuda {

enum class CommStatus : uint32_t {
  Ok,       ///< Every wait of the kernel completed.
  Timeout,  ///< A peer did not make progress within the timeout.
  Aborted,  ///< Another block, rank or the runtime stopped the collective.
  Mismatch, ///< A message had a different size, or came from another call, than expected.
};

/// What a failed wait waited for.
enum class WaitKind : uint32_t { Send, Receive, Exchange };

/// The outcome of a kernel, in device memory (device-scope atomics pick the
/// first failure, which mapped host memory does not promise). The runtime
/// zeroes it before a launch; the first failing block claims it, fills in
/// the details and sets Code last, so that the host, which may read it while
/// kernels run, never sees a code with another failure's details.
struct KernelStatus {
  uint32_t Code;     ///< A CommStatus; Ok until the details are complete.
  uint32_t Claimed;  ///< Nonzero once a block has claimed the record.
  int32_t Channel;   ///< The failing block's channel.
  int32_t Peer;      ///< The rank it waited for.
  uint32_t Wait;     ///< A WaitKind.
  uint64_t Got;      ///< Mismatch: the size of the message that arrived,
  uint64_t Expected; ///< and the size the step expected.
  /// A mismatch of calls: the call of the message that arrived, and the
  /// launch's own; zero for a mismatch of sizes alone.
  kern::CallStamp Sent, Called;
};

//===----------------------------------------------------------------------===//
// System-scope memory operations on the FIFO counters and the abort flag
//===----------------------------------------------------------------------===//

__device__ __forceinline__ uint64_t loadAcquire(const uint64_t *P) {
  uint64_t V;
  asm volatile("ld.acquire.sys.u64 %0, [%1];" : "=l"(V) : "l"(P) : "memory");
  return V;
}
/// Loads a counter (64 bits) or the abort flag (32 bits).
template <class T> __device__ __forceinline__ T loadRelaxed(const T *P) {
  static_assert(sizeof(T) == 8 || sizeof(T) == 4, "a counter or the abort flag");
  T V;
  if constexpr (sizeof(T) == 8)
    asm volatile("ld.relaxed.sys.u64 %0, [%1];" : "=l"(V) : "l"(P) : "memory");
  else
    asm volatile("ld.relaxed.sys.u32 %0, [%1];" : "=r"(V) : "l"(P) : "memory");
  return V;
}
__device__ __forceinline__ void storeRelease(uint64_t *P, uint64_t V) {
  asm volatile("st.release.sys.u64 [%0], %1;" ::"l"(P), "l"(V) : "memory");
}
/// Publishes a counter that orders nothing before it: the LL protocol's
/// Head, whose lines the block has read into registers already.
__device__ __forceinline__ void storeRelaxed(uint64_t *P, uint64_t V) {
  asm volatile("st.relaxed.sys.u64 [%0], %1;" ::"l"(P), "l"(V) : "memory");
}
/// One LL line, stored and loaded as one 16-byte access, volatile: every
/// poll reads memory again, and the compiler keeps every store.
__device__ __forceinline__ void storeLine(uint4 *P, uint4 V) {
  asm volatile("st.volatile.global.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(P), "r"(V.x), "r"(V.y),
               "r"(V.z), "r"(V.w)
               : "memory");
}
__device__ __forceinline__ uint4 loadLine(const uint4 *P) {
  uint4 V;
  asm volatile("ld.volatile.global.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(V.x), "=r"(V.y), "=r"(V.z), "=r"(V.w)
               : "l"(P)
               : "memory");
  return V;
}
/// Raises the abort flag after every earlier write of the thread (the
/// status word above all) is visible: the host reads the status once it
/// sees the flag.
__device__ __forceinline__ void storeRelease(uint32_t *P, uint32_t V) {
  asm volatile("st.release.sys.u32 [%0], %1;" ::"l"(P), "r"(V) : "memory");
}
/// Nanoseconds of the GPU's global timer, which ticks at a fixed rate
/// whatever the SM clock does.
__device__ __forceinline__ uint64_t globalTimer() {
  uint64_t T;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(T));
  return T;
}

//===----------------------------------------------------------------------===//
// Bounded waits of a thread block
//===----------------------------------------------------------------------===//

/// Bounds every wait of one kernel launch.
struct Waiter {
  /// Raised (nonzero) to stop every wait; may be null.
  uint32_t *Abort;
  /// Where the first failure is recorded; may be null.
  KernelStatus *Status;
  /// How long one wait may last; 0 waits without a limit, until the abort
  /// flag is raised.
  uint64_t TimeoutNs;
  /// The call the launch runs, which its first message on each FIFO
  /// carries; a zero Seq stamps and checks nothing.
  kern::CallStamp Call;
};

/// What a block's waits share. Only thread 0 of the block reads or writes
/// it, so it needs no synchronization.
struct BlockWaits {
  Waiter Wait;
  int32_t Channel;
  /// The block's first failure; once set every later wait fails at once.
  CommStatus Failure;
};

/// The calling block's wait state, in shared memory. A __shared__ variable
/// takes no initializer, and the call stamp in the state has default member
/// initializers, so the state lives in raw words that enterChannel() copies
/// it into (copying creates an object of such an aggregate).
__device__ __forceinline__ BlockWaits &blockWaits() {
  static_assert(alignof(BlockWaits) <= alignof(uint64_t), "the words hold the state aligned");
  __shared__ uint64_t Storage[(sizeof(BlockWaits) + 7) / 8];
  return *reinterpret_cast<BlockWaits *>(Storage);
}

/// Starts the calling block's waits for Channel; every thread may call it,
/// and it must come before the block's first wait.
__device__ __forceinline__ void enterChannel(const Waiter &Wait, int32_t Channel) {
  if (threadIdx.x == 0) {
    BlockWaits State{Wait, Channel, CommStatus::Ok};
    __builtin_memcpy(&blockWaits(), &State, sizeof State);
  }
}

/// Records a failed wait (thread 0 only): the first failure of the kernel
/// fills the status word, and the abort flag stops everyone else. Waits
/// rarely fail, so this and keepWaiting() stay out of line.
__device__ __noinline__ inline void fail(CommStatus Code, WaitKind What, int32_t Peer,
                                         uint64_t Got = 0, uint64_t Expected = 0,
                                         const kern::CallStamp *Sent = nullptr) {
  BlockWaits &B = blockWaits();
  B.Failure = Code;
  if (KernelStatus *S = B.Wait.Status; S && atomicCAS(&S->Claimed, 0u, 1u) == 0u) {
    S->Channel = B.Channel;
    S->Peer = Peer;
    S->Wait = uint32_t(What);
    S->Got = Got;
    S->Expected = Expected;
    if (Sent) {
      S->Sent = *Sent;
      S->Called = B.Wait.Call;
    }
    __threadfence_system();
    atomicExch(&S->Code, uint32_t(Code));
  }
  if (B.Wait.Abort && Code != CommStatus::Aborted)
    storeRelease(B.Wait.Abort, 1);
}

/// Whether a wait that has polled for a while goes on (thread 0): it ends,
/// recorded, once the abort flag is raised or a nonzero TimeoutNs passed
/// since Start, the global timer at the first call (0 before it).
__device__ __noinline__ inline bool keepWaiting(uint64_t &Start, WaitKind What, int32_t Peer) {
  const Waiter &W = blockWaits().Wait;
  if (W.Abort && loadRelaxed(W.Abort)) {
    fail(CommStatus::Aborted, What, Peer);
    return false;
  }
  if (W.TimeoutNs == 0)
    return true;
  uint64_t Now = globalTimer();
  if (Start == 0)
    Start = Now;
  else if (Now - Start > W.TimeoutNs) {
    fail(CommStatus::Timeout, What, Peer);
    return false;
  }
  return true;
}

/// Whether a wait of any thread of the block (an LL line's) goes on: as
/// keepWaiting(), but recording nothing, since only thread 0 records; Why
/// becomes the failure's CommStatus when it does not. The block's own
/// failure ends it too.
__device__ __forceinline__ bool lineWaitGoesOn(uint64_t &Start, CommStatus &Why) {
  const BlockWaits &B = blockWaits();
  if (*static_cast<const volatile CommStatus *>(&B.Failure) != CommStatus::Ok ||
      (B.Wait.Abort && loadRelaxed(B.Wait.Abort))) {
    Why = CommStatus::Aborted;
    return false;
  }
  if (B.Wait.TimeoutNs == 0)
    return true;
  uint64_t Now = globalTimer();
  if (Start == 0)
    Start = Now;
  else if (Now - Start > B.Wait.TimeoutNs) {
    Why = CommStatus::Timeout;
    return false;
  }
  return true;
}

/// Thread 0 polls until Ready() returns a nonzero value and returns it, or
/// returns zero once the wait failed. The clock and the abort flag (which may
/// sit across PCIe) are read every CheckEvery polls only.
template <class Pred>
__device__ auto spinUntil(Pred &&Ready, WaitKind What, int32_t Peer) -> decltype(Ready()) {
  constexpr uint32_t CheckEvery = 1024;
  if (blockWaits().Failure != CommStatus::Ok)
    return {};
  uint64_t Start = 0;
  for (uint32_t Spin = 1;; ++Spin) {
    if (auto Got = Ready())
      return Got;
    if (Spin % CheckEvery == 0 && !keepWaiting(Start, What, Peer))
      return {};
  }
}

/// Runs Wait on thread 0 and gives its result to every thread of the block:
/// a nonzero value, or zero on every thread when the wait failed.
///
/// Thread 0 hands the result over in shared memory, one variable per kind of
/// wait, and writes it only when it changes. Every primitive passes a barrier
/// after reading a successful result, so the next write to the variable never
/// meets a thread still reading it; after a failure the variable stays zero.
template <class R, class F> __device__ R blockWait(F &&Wait) {
  __shared__ R Result;
  if (threadIdx.x == 0) {
    R Mine = Wait();
    if (Mine != Result)
      Result = Mine;
  }
  __syncthreads();
  return Result;
}

/// True on every thread once a wait of the block has failed.
__device__ __forceinline__ bool blockFailed() {
  return __syncthreads_or(threadIdx.x == 0 && blockWaits().Failure != CommStatus::Ok);
}

//===----------------------------------------------------------------------===//
// FIFOs
//===----------------------------------------------------------------------===//

/// The shared part of a FIFO: the counters, on cache lines of their own
/// (host FifoHeader's layout). Over CUDA IPC, Head stays zero: the
/// connection's Head word lies in the sender's memory instead. The host
/// layout is kept so that a proxy and the runtime use one view of every FIFO.
struct FifoHeader {
  alignas(64) uint64_t Tail; ///< Messages posted by the sender.
  alignas(64) uint64_t Head; ///< Messages consumed by the receiver (host proxies).
  /// Where host receivers offer their buffers; device FIFOs leave it be.
  alignas(64) uint64_t Offer[8];
};

/// A view of one FIFO laid out in a block of memory (common/Fifo.h). A FIFO
/// starts empty when its first slotsOffset(NumSlots) bytes are zero; host
/// code zeroes them (cudaMemset, or memset for host memory) before either
/// side uses it.
using Fifo = kern::FifoView<FifoHeader>;

/// Bytes of the block a Head word lies in when it is not the FIFO's own: a
/// cache line of its own, since the peer writes it.
inline constexpr size_t HeadWordBytes = 64;

/// The LL line of message Seq that carries the 8 bytes V.
__device__ __forceinline__ uint4 llLine(uint64_t V, kern::LLFlags F) {
  return {uint32_t(V), F.First, uint32_t(V >> 32), F.Second};
}
/// Whether Line is whole for flags F, and then its 8 bytes in V.
__device__ __forceinline__ bool llWhole(uint4 Line, kern::LLFlags F, uint64_t &V) {
  V = uint64_t(Line.x) | uint64_t(Line.z) << 32;
  return Line.y == F.First && Line.w == F.Second;
}

/// 16 bytes of an LL128 line, its 8-byte words A then B.
__device__ __forceinline__ uint4 wordPair(uint64_t A, uint64_t B) {
  return {uint32_t(A), uint32_t(A >> 32), uint32_t(B), uint32_t(B >> 32)};
}
__device__ __forceinline__ uint64_t firstWord(uint4 V) {
  return uint64_t(V.x) | uint64_t(V.y) << 32;
}
__device__ __forceinline__ uint64_t secondWord(uint4 V) {
  return uint64_t(V.z) | uint64_t(V.w) << 32;
}

/// An LL128 line is eight 16-byte parts, which eight threads of a warp
/// store and load at once; the last part's second word is the flag. The
/// message's words (the size word first) fill the other 15 words of each
/// line in order: Part's first word is word ll128Word(Part) of the message.
inline constexpr size_t LL128Parts = 8;
__device__ __forceinline__ size_t ll128Word(size_t Part) {
  return Part / LL128Parts * (LL128Parts * 2 - 1) + Part % LL128Parts * 2;
}
/// Whether Part holds its line's flag.
__device__ __forceinline__ bool holdsFlag(size_t Part) {
  return Part % LL128Parts == LL128Parts - 1;
}

/// Whether a message of Bytes bytes of a step of line protocol P goes as
/// lines through Q, from a sender to a receiver with LowLatency and
/// WholeLines (Outbox, Inbox); both ends decide alike.
__device__ __forceinline__ bool carriedByLines(const Fifo &Q, bool LowLatency, bool WholeLines,
                                               kern::Protocol P, size_t Bytes) {
  return LowLatency && (P != kern::Protocol::LL128 || WholeLines) &&
         kern::linesCarry(P, Bytes, Q.SlotBytes);
}

/// The sending end of a FIFO. Every thread of the block calls its members;
/// only thread 0 reads or writes Step.
struct Outbox {
  Fifo Q;
  int32_t Peer = -1;
  /// The receiver's Head: in this rank's memory where the receiver writes it
  /// across a link, or Q's header.
  const uint64_t *Head = nullptr;
  /// Messages this side posted: Tail, as only this side writes it.
  uint64_t Step = 0;
  /// The number of the last call whose first message was stamped.
  uint64_t Stamped = 0;
  /// Whether the receiver's kernel reads the slots itself, so that steps
  /// of the line protocols send by them (common/Protocol.h); false where a
  /// host proxy drains the FIFO.
  bool LowLatency = false;
  /// Whether the 128 bytes a warp stores at once reach the receiver whole
  /// (the FIFO lies in this GPU's memory, or across NVLink), so that steps
  /// of LL128 send by it.
  bool WholeLines = false;

  /// A FIFO whose counters both lie in its header (mapped memory a host
  /// proxy shares, or a FIFO on the one device).
  __host__ __device__ static Outbox inHeader(const Fifo &Q, int32_t Peer) {
    return Outbox{Q, Peer, Q.Header ? &Q.Header->Head : nullptr, 0};
  }

  /// Whether a message of Bytes bytes of a step of line protocol P goes as
  /// lines.
  __device__ bool carriesLines(kern::Protocol P, size_t Bytes) const {
    return carriedByLines(Q, LowLatency, WholeLines, P, Bytes);
  }
  /// The size word of the message this side posts next, with the call's
  /// stamp beside its slot when it is the call's first (thread 0).
  __device__ uint64_t stampedWord(size_t Bytes) {
    uint64_t Word = Bytes;
    const kern::CallStamp &Call = blockWaits().Wait.Call;
    if (Call.Seq && Call.Seq != Stamped) {
      Q.Stamps[Step % Q.NumSlots] = Call;
      Word = kern::stampDigest(Call) | (Bytes & 0xffffffffull);
      Stamped = Call.Seq;
    }
    return Word;
  }

  /// True when a slot is free (thread 0).
  __device__ bool ready() const { return Step - loadAcquire(Head) < Q.NumSlots; }
  /// Waits for a free slot and returns it, or null once the wait failed.
  __device__ std::byte *acquire() {
    return blockWait<std::byte *>([&] {
      uint64_t Posted = Step;
      return spinUntil(
          [&]() -> std::byte * {
            return Posted - loadAcquire(Head) < Q.NumSlots ? Q.slot(Posted) : nullptr;
          },
          WaitKind::Send, Peer);
    });
  }
  /// Publishes the acquired slot holding Bytes bytes, once every thread has
  /// written its part; the call's first also carries the call's stamp.
  __device__ void post(size_t Bytes) {
    __syncthreads();
    if (threadIdx.x == 0) {
      uint64_t Posted = Step;
      Q.Sizes[Posted % Q.NumSlots] = stampedWord(Bytes);
      storeRelease(&Q.Header->Tail, Posted + 1);
      Step = Posted + 1;
    }
  }

  /// Waits for a free slot and returns, on every thread, the number of the
  /// message it will hold (never zero), or zero once the wait failed.
  __device__ uint64_t acquireNumber() {
    return blockWait<uint64_t>([&] {
      uint64_t Posted = Step;
      return spinUntil(
          [&]() -> uint64_t { return Posted - loadAcquire(Head) < Q.NumSlots ? Posted + 1 : 0; },
          WaitKind::Send, Peer);
    });
  }
  /// Writes message Seq (from acquireNumber) of Bytes bytes, staged in
  /// Stage by the block, as lines of protocol P: each thread writes its own
  /// parts as soon as the stage is complete, with no fence. Thread 0 writes
  /// the size word, the message's word 0.
  __device__ void postLines(kern::Protocol P, uint64_t Seq, const uint64_t *Stage, size_t Bytes) {
    __syncthreads();
    uint4 *Parts = reinterpret_cast<uint4 *>(Q.slot(Seq - 1));
    const size_t Words = (Bytes + 7) / 8;
    auto Word = [&](size_t I) -> uint64_t {
      return I == 0 ? stampedWord(Bytes) : I <= Words ? Stage[I - 1] : 0;
    };
    if (P == kern::Protocol::LL128) {
      // A warp's threads hold consecutive parts, eight to a line, so each
      // line is one warp's store.
      const uint64_t Flag = kern::ll128Flag(Seq);
      const size_t Count = kern::lineSlotBytes(P, Bytes) / sizeof(uint4);
      for (size_t Part = threadIdx.x; Part < Count; Part += blockDim.x) {
        size_t First = ll128Word(Part);
        storeLine(Parts + Part, wordPair(Word(First), holdsFlag(Part) ? Flag : Word(First + 1)));
      }
    } else {
      kern::LLFlags F = kern::LLFlags::of(Seq);
      for (size_t L = threadIdx.x; L <= Words; L += blockDim.x)
        storeLine(Parts + L, llLine(Word(L), F));
    }
    if (threadIdx.x == 0)
      Step = Seq;
  }
};

/// The receiving end of a FIFO. Every thread of the block calls its members;
/// only thread 0 reads or writes Step.
struct Inbox {
  Fifo Q;
  int32_t Peer = -1;
  /// Where this side publishes Head: the sender's memory across a link, or
  /// Q's header.
  uint64_t *Head = nullptr;
  /// Messages this side consumed: Head, as only this side writes it.
  uint64_t Step = 0;
  /// The number of the last call whose first message was checked.
  uint64_t Checked = 0;
  /// Whether this side's kernel reads the slots itself (Outbox::LowLatency).
  bool LowLatency = false;
  /// Whether LL128's lines arrive whole (Outbox::WholeLines).
  bool WholeLines = false;

  /// A FIFO whose counters both lie in its header (see Outbox::inHeader).
  __host__ __device__ static Inbox inHeader(const Fifo &Q, int32_t Peer) {
    return Inbox{Q, Peer, Q.Header ? &Q.Header->Head : nullptr, 0};
  }

  /// Whether a message of Bytes bytes of a step of line protocol P comes as
  /// lines.
  __device__ bool carriesLines(kern::Protocol P, size_t Bytes) const {
    return carriedByLines(Q, LowLatency, WholeLines, P, Bytes);
  }
  /// Whether message Seq came as lines of a line protocol other than Mine
  /// (Simple for none), and then its size word (thread 0). An LL128
  /// header's word is read apart from its flag, which is enough to tell
  /// that the message came that way.
  __device__ bool linesOtherThan(kern::Protocol Mine, uint64_t Seq, uint64_t &Word) const {
    if (!LowLatency)
      return false;
    const uint4 *Parts = reinterpret_cast<const uint4 *>(Q.slot(Seq - 1));
    if (Mine != kern::Protocol::LL && llWhole(loadLine(Parts), kern::LLFlags::of(Seq), Word))
      return true;
    if (Mine == kern::Protocol::LL128 ||
        secondWord(loadLine(Parts + LL128Parts - 1)) != kern::ll128Flag(Seq))
      return false;
    Word = firstWord(loadLine(Parts));
    return true;
  }
  /// Whether message Seq came by another protocol than the line protocol
  /// Mine (plans that disagree), and then its size word (thread 0).
  __device__ bool cameOtherwise(kern::Protocol Mine, uint64_t Seq, uint64_t &Word) const {
    if (loadAcquire(&Q.Header->Tail) >= Seq) {
      Word = Q.Sizes[(Seq - 1) % Q.NumSlots];
      return true;
    }
    return linesOtherThan(Mine, Seq, Word);
  }
  /// True when a message waits, by any protocol (thread 0).
  __device__ bool ready() const {
    uint64_t Word;
    return loadAcquire(&Q.Header->Tail) > Step ||
           linesOtherThan(kern::Protocol::Simple, Step + 1, Word);
  }
  /// Checks the size word of the next message, which must be of Bytes bytes
  /// and carry the call's digest if the call's first (thread 0); records
  /// the failure and returns false where it does not. A sender stamps the
  /// slot before it writes an LL message's word, with no fence between, so
  /// the stamp is read until it is the one the word digests, for a while.
  __device__ bool checkWord(uint64_t Word, size_t Bytes) {
    uint64_t Got = kern::wordBytes(Word);
    const kern::CallStamp &Call = blockWaits().Wait.Call;
    if (Call.Seq && Call.Seq != Checked) {
      // As on the host: another size under the same digest is the same
      // call, run by schedules whose plan hashes agree.
      if (kern::wordDigest(Word) != kern::stampDigest(Call) || Got != Bytes) {
        kern::CallStamp Theirs;
        uint64_t Words[sizeof Theirs / 8], Ours[sizeof Theirs / 8];
        const volatile uint64_t *From =
            reinterpret_cast<const volatile uint64_t *>(&Q.Stamps[Step % Q.NumSlots]);
        for (uint32_t Tries = 0; Tries < 1u << 16; ++Tries) {
          for (size_t I = 0; I < sizeof Theirs / 8; ++I)
            Words[I] = From[I];
          __builtin_memcpy(&Theirs, Words, sizeof Theirs);
          if (kern::stampDigest(Theirs) == kern::wordDigest(Word))
            break;
        }
        __builtin_memcpy(Ours, &Call, sizeof Ours);
        bool Same = kern::wordDigest(Word) == kern::stampDigest(Call);
        for (size_t I = 0; I < sizeof Theirs / 8; ++I)
          Same &= Words[I] == Ours[I];
        if (!Same) {
          fail(CommStatus::Mismatch, WaitKind::Receive, Peer, Got, Bytes, &Theirs);
          return false;
        }
      }
      Checked = Call.Seq;
    }
    if (Got != Bytes) {
      fail(CommStatus::Mismatch, WaitKind::Receive, Peer, Got, Bytes);
      return false;
    }
    return true;
  }
  /// Waits for the next message and returns its slot, or null once the wait
  /// failed; Bytes must be the message's size, and the call's first must
  /// carry the call's digest.
  __device__ const std::byte *peek(size_t Bytes) {
    return blockWait<const std::byte *>([&]() -> const std::byte * {
      uint64_t Consumed = Step;
      // A peer whose step took a line protocol (it expects another size)
      // posts no Tail: its size word is found in the first line.
      uint64_t Word = 0;
      bool ByLine = false;
      uint32_t Polls = 0;
      if (!spinUntil(
              [&] {
                return loadAcquire(&Q.Header->Tail) > Consumed ||
                       (++Polls % 16 == 0 &&
                        (ByLine = linesOtherThan(kern::Protocol::Simple, Consumed + 1, Word)));
              },
              WaitKind::Receive, Peer))
        return nullptr;
      if (!ByLine)
        Word = Q.Sizes[Consumed % Q.NumSlots];
      if (!checkWord(Word, Bytes))
        return nullptr;
      if (ByLine) {
        fail(CommStatus::Mismatch, WaitKind::Receive, Peer, Bytes, Bytes);
        return nullptr;
      }
      return Q.slot(Consumed);
    });
  }

  /// The number of the next message (never zero) on every thread, or zero
  /// once a wait of the block has failed.
  __device__ uint64_t nextNumber() {
    return blockWait<uint64_t>(
        [&]() -> uint64_t { return blockWaits().Failure == CommStatus::Ok ? Step + 1 : 0; });
  }
  /// How a thread's wait for its lines ended.
  struct LineWait {
    /// Ok, or why the wait failed (the same on every thread of a warp by
    /// LL128).
    CommStatus Why = CommStatus::Ok;
    /// The thread stopped waiting for lines that would never come: thread
    /// 0 found the message came by another protocol (Otherwise) or with
    /// another size, and raised the block's stop flag.
    bool Stopped = false;
    bool Otherwise = false;
    uint64_t Word = 0; ///< The message's size word (thread 0).
  };

  /// Waits for LL message Seq of Bytes bytes, every thread for its own
  /// lines, and stages it in Stage (see takeLines).
  __device__ void waitLL(uint64_t Seq, uint64_t *Stage, size_t Bytes, volatile uint32_t &Stop,
                         LineWait &W) {
    const uint4 *Lines = reinterpret_cast<const uint4 *>(Q.slot(Seq - 1));
    kern::LLFlags F = kern::LLFlags::of(Seq);
    size_t Last = (Bytes + 7) / 8;
    for (size_t L = threadIdx.x; L <= Last && W.Why == CommStatus::Ok && !W.Stopped;
         L += blockDim.x) {
      uint64_t Start = 0, V;
      for (uint32_t Spin = 1; !llWhole(loadLine(Lines + L), F, V); ++Spin) {
        if (Spin % 16 == 0) {
          if (L == 0 && cameOtherwise(kern::Protocol::LL, Seq, V)) {
            W.Otherwise = W.Stopped = true;
            Stop = 1;
            break;
          }
          if (Stop) {
            W.Stopped = true;
            break;
          }
        }
        if (Spin % 1024 == 0 && !lineWaitGoesOn(Start, W.Why))
          break;
      }
      if (L == 0) {
        W.Word = V;
        if (!W.Stopped && W.Why == CommStatus::Ok && kern::wordBytes(V) != Bytes) {
          W.Stopped = true;
          Stop = 1;
        }
      } else if (!W.Stopped) {
        Stage[L - 1] = V;
      }
    }
  }

  /// Waits for LL128 message Seq of Bytes bytes and stages it in Stage (see
  /// takeLines). Each warp loads the parts of its threads, and loads them
  /// all again until every line among them holds its flag: a line's parts
  /// are one warp's store, so a line whose flag came came whole. Every
  /// decision to stop is the warp's, so that its threads keep polling
  /// together.
  __device__ void waitLL128(uint64_t Seq, uint64_t *Stage, size_t Bytes, volatile uint32_t &Stop,
                            LineWait &W) {
    constexpr unsigned Warp = 0xffffffffu;
    const uint4 *Parts = reinterpret_cast<const uint4 *>(Q.slot(Seq - 1));
    const uint64_t Flag = kern::ll128Flag(Seq);
    const size_t Count = kern::lineSlotBytes(kern::Protocol::LL128, Bytes) / sizeof(uint4);
    const size_t Words = (Bytes + 7) / 8;
    // Thread 0 holds the first line's first part, whose first word is the
    // size word; its warp watches that line while it waits for the others.
    const bool Lead = threadIdx.x == 0;
    const bool FirstWarp = threadIdx.x < 32;
    for (size_t Base = 0; Base < Count; Base += blockDim.x) {
      const size_t Part = Base + threadIdx.x;
      const bool Mine = Part < Count;
      uint4 V{};
      uint64_t Start = 0;
      for (uint32_t Spin = 1;; ++Spin) {
        bool Missing = false;
        if (Mine) {
          V = loadLine(Parts + Part);
          Missing = holdsFlag(Part) && secondWord(V) != Flag;
        }
        if (!__any_sync(Warp, Missing))
          break;
        if (Spin % 16 == 0) {
          if (FirstWarp && Base == 0) {
            bool FirstLine = __shfl_sync(Warp, !Missing, LL128Parts - 1);
            if (Lead && cameOtherwise(kern::Protocol::LL128, Seq, W.Word)) {
              W.Otherwise = true;
              Stop = 1;
            } else if (Lead && FirstLine && kern::wordBytes(firstWord(V)) != Bytes) {
              W.Word = firstWord(V);
              Stop = 1;
            }
          }
          if (__shfl_sync(Warp, Stop, 0)) {
            W.Stopped = true;
            break;
          }
        }
        if (Spin % 1024 == 0) {
          CommStatus Why = CommStatus::Ok;
          lineWaitGoesOn(Start, Why);
          W.Why = CommStatus(__shfl_sync(Warp, uint32_t(Why), 0));
          if (W.Why != CommStatus::Ok)
            return;
        }
      }
      if (W.Stopped)
        return;
      if (Lead && Base == 0)
        W.Word = firstWord(V);
      if (__shfl_sync(Warp, Lead && Base == 0 && kern::wordBytes(W.Word) != Bytes, 0)) {
        W.Stopped = true;
        Stop = 1;
        return;
      }
      if (!Mine)
        continue;
      size_t First = ll128Word(Part);
      if (First >= 1 && First <= Words)
        Stage[First - 1] = firstWord(V);
      if (!holdsFlag(Part) && First + 1 <= Words)
        Stage[First] = secondWord(V);
    }
  }

  /// Waits for message Seq (from nextNumber) of Bytes bytes as lines of
  /// protocol P, every thread for its own, and stages it in Stage; true on
  /// every thread when it came whole, false once a wait failed. The slot is
  /// free again once this returns true: the block has released it.
  __device__ bool takeLines(kern::Protocol P, uint64_t Seq, uint64_t *Stage, size_t Bytes) {
    // Stop: thread 0 found a message of another protocol, or a size word of
    // another size, so that lines past the message's end would never come;
    // TimedOut: some thread's wait ran out of time.
    __shared__ uint32_t Stop, TimedOut;
    if (threadIdx.x == 0)
      Stop = TimedOut = 0;
    __syncthreads();
    LineWait W;
    if (P == kern::Protocol::LL128)
      waitLL128(Seq, Stage, Bytes, Stop, W);
    else
      waitLL(Seq, Stage, Bytes, Stop, W);
    if (W.Why == CommStatus::Timeout)
      TimedOut = 1;
    if (__syncthreads_or(W.Why != CommStatus::Ok)) {
      if (threadIdx.x == 0 && blockWaits().Failure == CommStatus::Ok)
        fail(TimedOut ? CommStatus::Timeout : CommStatus::Aborted, WaitKind::Receive, Peer);
    } else if (threadIdx.x == 0 && checkWord(W.Word, Bytes)) {
      if (W.Otherwise)
        fail(CommStatus::Mismatch, WaitKind::Receive, Peer, Bytes, Bytes);
      else {
        storeRelaxed(Head, Seq);
        Step = Seq;
      }
    }
    return !blockFailed();
  }
  /// Frees the slot returned by peek(), once every thread has read its part.
  __device__ void release() {
    __syncthreads();
    if (threadIdx.x == 0) {
      storeRelease(Head, Step + 1);
      ++Step;
    }
  }
};

/// Which side of an exchange goes first.
inline constexpr uint32_t SendFirst = 1, ReceiveFirst = 2;

/// Waits until Out has a free slot or In a message and returns SendFirst or
/// ReceiveFirst accordingly, or zero once the wait failed.
__device__ inline uint32_t waitEither(const Outbox &Out, const Inbox &In) {
  return blockWait<uint32_t>([&] {
    return spinUntil([&] { return Out.ready()  ? SendFirst
                                  : In.ready() ? ReceiveFirst
                                               : 0u; },
                     WaitKind::Exchange, Out.Peer);
  });
}

} // namespace cclc::cuda
