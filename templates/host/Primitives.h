//===- Primitives.h - Copy, reduce, send and receive (host) ------*- C++ -*-===//
//
// The host primitives that generated kernels and the plan interpreter call,
// one per operation of the language. Each moves one slice: a run of chunks
// of a buffer, which may be several pieces of memory. A message is one slice
// packed into one slot.
//
// Copy and reduce work on aligned blocks the compiler turns into vector
// instructions; the element loop is the same for every type and operator, so
// results do not depend on alignment.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "common/Primitive.h"
#include "common/Slice.h"
#include "host/Connection.h"
#include "host/Types.h"

#include <cstdint>
#include <cstring>
#include <span>

namespace cclc::host {

/// The slices the primitives move, and their walks (common/Slice.h).
using kern::Slice;
using kern::zipRuns;

/// Dst = Src, element by element.
/// Copies N elements; a copy onto itself (an input copied to the output of
/// an in-place call) moves nothing.
template <class T> inline void copyElems(const T *Src, T *Dst, size_t N) {
  if (Src != Dst)
    std::memcpy(Dst, Src, N * sizeof(T));
}

namespace detail {

/// How the element loops load and store T: as itself, except half-precision
/// types, which go through their bits because GCC vectorizes no loop that
/// copies a struct. The operator still sees T, so results do not change.
template <class T> struct ElemBits {
  using Storage = T;
  static T get(T V) { return V; }
  static T put(T V) { return V; }
};
template <class T>
  requires IsHalf<T>
struct ElemBits<T> {
  using Storage = uint16_t;
  static T get(uint16_t Bits) {
    T V;
    V.Bits = Bits;
    return V;
  }
  static uint16_t put(T V) { return V.Bits; }
};

/// The element loop of reduceElems, in blocks the compiler turns into vector
/// instructions; Out is written when WithOut. The loads and stores must be
/// in this function, whose restrict parameters tell the vectorizer that the
/// buffers do not overlap.
template <class T, class Op, bool WithOut, class S>
[[gnu::always_inline]] inline void reduceLoop(const S *__restrict Src, S *__restrict Acc,
                                              S *__restrict Out, size_t N) {
  using Bits = ElemBits<T>;
  Op Fn;
  constexpr size_t Block = 64 / sizeof(T) ? 64 / sizeof(T) : 1;
  // Converting half-precision types makes the loop slow enough that the
  // hardware prefetcher falls behind on buffers in memory; loading 4 KiB
  // ahead keeps the data streaming. Cheaper loops lose by it.
  constexpr size_t Ahead = 4096 / sizeof(T);
  size_t I = 0;
  for (; I + Block <= N; I += Block) {
    if constexpr (IsHalf<T>)
      if (I + Ahead < N) {
        __builtin_prefetch(Src + I + Ahead);
        __builtin_prefetch(Acc + I + Ahead, 1);
      }
    // nvcc's front end, which reads this header in .cu files that use host
    // FIFOs, knows no GCC pragma; those files call no element loop.
#if !defined(__CUDACC__)
#pragma GCC unroll 16
#endif
    for (size_t J = 0; J < Block; ++J) {
      S R = Bits::put(Fn(Bits::get(Acc[I + J]), Bits::get(Src[I + J])));
      Acc[I + J] = R;
      if constexpr (WithOut)
        Out[I + J] = R;
    }
  }
  for (; I < N; ++I) {
    S R = Bits::put(Fn(Bits::get(Acc[I]), Bits::get(Src[I])));
    Acc[I] = R;
    if constexpr (WithOut)
      Out[I] = R;
  }
}

// Builds for the x86-64 baseline (SSE2) also carry the loop compiled for
// AVX2 and F16C, chosen at run time: twice the vector width, the 32-to-16-bit
// packs that half-precision results need, and f16 conversions in hardware
// rather than in library calls. Every path applies the same operator to the
// same elements, so the results are the same bits.
#if defined(__x86_64__) && defined(__GNUC__) && !(defined(__AVX2__) && defined(__F16C__))
#define CCLC_HOST_REDUCE_AVX2 1
template <class T, class Op, bool WithOut, class S>
__attribute__((target("avx2,f16c"))) void reduceLoopAvx2(const S *Src, S *Acc, S *Out,
                                                          size_t N) {
  reduceLoop<T, Op, WithOut>(Src, Acc, Out, N);
}
#endif

template <class T, class Op, bool WithOut>
inline void reduceRun(const T *Src, T *Acc, T *Out, size_t N) {
  using S = typename ElemBits<T>::Storage;
  const S *From = reinterpret_cast<const S *>(Src);
  S *Into = reinterpret_cast<S *>(Acc);
  S *Copy = reinterpret_cast<S *>(Out);
#ifdef CCLC_HOST_REDUCE_AVX2
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("f16c"))
    return reduceLoopAvx2<T, Op, WithOut>(From, Into, Copy, N);
#endif
  reduceLoop<T, Op, WithOut>(From, Into, Copy, N);
}
#undef CCLC_HOST_REDUCE_AVX2

} // namespace detail

/// Acc[i] = Op(Acc[i], Src[i]); when Out is set, also Out[i] = the result.
template <class T, class Op>
inline void reduceElems(const T *__restrict Src, T *__restrict Acc, T *__restrict Out, size_t N) {
  if (Out)
    detail::reduceRun<T, Op, true>(Src, Acc, Out, N);
  else
    detail::reduceRun<T, Op, false>(Src, Acc, Out, N);
}

/// Bytes of Out that reduceCopyElems copies and then combines into, while
/// they stay in the first-level cache.
inline constexpr size_t ReduceCopyBlockBytes = 16384;

/// Out[i] = Op(Local[i], Src[i]), leaving Local as it is. Block by block,
/// Local is copied into Out and Src combined into it while the block is in
/// the first-level cache: memcpy writes whole lines without reading them
/// first, which a loop writing Out from the other two does not, so this
/// moves a 256 KiB f32 sum 1.2-1.3x as fast as that loop and as a copy then
/// a reduce of the whole (cclc-host-prims-bench). Local may be Out itself,
/// not part of it.
template <class T, class Op>
inline void reduceCopyElems(const T *Src, const T *Local, T *Out, size_t N) {
  constexpr size_t Block = ReduceCopyBlockBytes / sizeof(T);
  for (size_t I = 0; I < N; I += Block) {
    size_t M = std::min(Block, N - I);
    copyElems(Local + I, Out + I, M);
    detail::reduceRun<T, Op, false>(Src + I, Out + I, nullptr, M);
  }
}

/// The runs of S as a direct write covers them: at most two, or none.
template <class T> struct DirectRuns {
  Run Runs[2];
  size_t N = 0;
  size_t Bytes = 0;

  explicit DirectRuns(const Slice<T> &S) {
    for (kern::RunCursor<T> R(S); R.next();) {
      if (N == 2) {
        N = 0;
        return;
      }
      Runs[N++] = {R.ptr(), R.elems() * sizeof(T)};
      Bytes += R.elems() * sizeof(T);
    }
  }
  std::span<const Run> runs() const { return {Runs, N}; }
};

/// Writes Src straight into the receiver's buffer where the receiver
/// offered one; else leaves it where it lies for the receiver to read,
/// where it is Stable and the receiver maps this process's buffers; else
/// packs it into a free slot of Out and posts it. A sender that forwards or
/// exchanges has a receiver that is about to offer (it waits for what this
/// rank sends, or offered before its own send), so it may wait a moment for
/// the offer, or for the decline of a receiver that combines the message
/// (Outbox::OfferWait); a plain send may not, since its receiver may be
/// sending to it in turn. Writing comes first: two ranks exchanging 1 MiB
/// took 45-51 us writing into each other's buffers against 83-85 us reading
/// each other's (docs/performance.md). Reading pays where the receiver
/// combines the message, which saves the copy into a slot, and where it has
/// not offered yet, which lets this rank go on at once.
template <class T> void sendOrWrite(Outbox &Out, const Slice<const T> &Src, bool MayWait) {
  if (Out.DirectPid) {
    DirectRuns<const T> Runs(Src);
    if (Runs.N && Out.sendDirect(Runs.runs(), Runs.Bytes, MayWait))
      return;
    if (Src.Stable && Runs.N == 1 && Out.sendReference(Runs.Runs[0]))
      return;
  }
  kern::sendRuns(Out, Src, [](const T *P, T *Part, size_t N) { copyElems(P, Part, N); });
}

/// Packs Src into a free slot of Out and posts it, or writes it straight
/// into the receiver's buffer where the receiver offered one.
template <class T, class Op>
CCLC_PRIMITIVE("send", "send")
void send(Outbox &Out, Slice<const T> Src) {
  sendOrWrite(Out, Src, /*MayWait=*/false);
}

/// Offers Dst to the sender of In's next message, and waits for it: true
/// when the sender wrote it there, false when it is in its slot (or Dst,
/// in more than two runs, was declined). A failed wait withdraws the offer.
template <class T> bool receiveOffered(Inbox &In, const Slice<T> &Dst) {
  if (!In.DirectMin)
    return false;
  DirectRuns<T> Runs(Dst);
  if (!Runs.N) {
    In.decline(Dst.bytes());
    return false;
  }
  if (Runs.Bytes < In.DirectMin)
    return false;
  In.offer(Runs.runs(), Runs.Bytes);
  try {
    In.peek(Runs.Bytes);
  } catch (...) {
    In.withdraw();
    throw;
  }
  if (!In.direct())
    return false;
  In.release();
  return true;
}

/// Offers Dst to the sender of In's next message before this rank gets to
/// the receive, when Dst is large and in at most two runs; the receive
/// (receiveOffered) then finds the offer made.
template <class T> void offerAhead(Inbox &In, const Slice<T> &Dst) {
  if (!In.DirectMin)
    return;
  DirectRuns<T> Runs(Dst);
  if (Runs.N && Runs.Bytes >= In.DirectMin)
    In.offer(Runs.runs(), Runs.Bytes);
}

/// Tells the sender of In's next message, which is combined into Acc, not
/// to wait for an offer.
template <class T> void declineOffer(Inbox &In, const Slice<T> &Acc) {
  if (In.DirectMin)
    In.decline(Acc.bytes());
}

/// Receives the next message of In into Dst.
template <class T, class Op>
CCLC_PRIMITIVE("recv", "recv")
void recv(Inbox &In, Slice<T> Dst) {
  if (receiveOffered(In, Dst))
    return;
  kern::receiveRuns(In, Dst, [](const T *Part, T *P, size_t N) { copyElems(Part, P, N); });
}

/// Combines the next message of In into Acc.
template <class T, class Op>
CCLC_PRIMITIVE("recv_reduce", "recv_reduce")
void recvReduce(Inbox &In, Slice<T> Acc) {
  declineOffer(In, Acc);
  kern::receiveRuns(In, Acc,
                    [](const T *Part, T *P, size_t N) { reduceElems<T, Op>(Part, P, nullptr, N); });
}

/// Dst = Src (op) the next message of In, block by block (reduceCopyElems):
/// where a copy of Src into Dst and a recv_reduce into Dst pass over Dst
/// twice, each block of Dst is combined while the copy has it in cache.
template <class T, class Op>
CCLC_PRIMITIVE("recv_reduce_copy", "recv_reduce_copy")
void recvReduceCopy(Inbox &In, Slice<const T> Src, Slice<T> Dst) {
  declineOffer(In, Dst);
  const T *Msg = reinterpret_cast<const T *>(In.peek(Dst.bytes()));
  // Both slices walk their runs in chunk order, as the message holds them.
  size_t At = 0;
  zipRuns(Src, Dst, [&](const T *Local, T *Out, size_t N) {
    reduceCopyElems<T, Op>(Msg + At, Local, Out, N);
    At += N;
  });
  In.release();
}

/// Dst = Src locally.
template <class T, class Op>
CCLC_PRIMITIVE("copy", "copy")
void copy(Slice<const T> Src, Slice<T> Dst) {
  zipRuns(Src, Dst, [](const T *S, T *D, size_t N) { copyElems(S, D, N); });
}

/// Acc = Acc (op) Src locally.
template <class T, class Op>
CCLC_PRIMITIVE("reduce", "reduce")
void reduce(Slice<const T> Src, Slice<T> Acc) {
  zipRuns(Src, Acc, [](const T *S, T *A, size_t N) { reduceElems<T, Op>(S, A, nullptr, N); });
}

/// Combines the next message of In into Acc and sends the result to Out, in
/// one pass over the data.
template <class T, class Op>
CCLC_PRIMITIVE("recv_reduce_send", "recv_reduce_send")
void recvReduceSend(Inbox &In, Outbox &Out, Slice<T> Acc) {
  declineOffer(In, Acc);
  kern::relayRuns(In, Out, Acc,
                  [](const T *Part, T *P, T *To, size_t N) { reduceElems<T, Op>(Part, P, To, N); });
}

/// Receives the next message of In into Dst and forwards it to Out.
template <class T, class Op>
CCLC_PRIMITIVE("recv_copy_send", "recv_copy_send")
void recvCopySend(Inbox &In, Outbox &Out, Slice<T> Dst) {
  if (receiveOffered(In, Dst))
    return sendOrWrite(Out, Slice<const T>{Dst.Base, Dst.Grid, Dst.Units, Dst.Chunk, Dst.Count},
                       /*MayWait=*/true);
  kern::relayRuns(In, Out, Dst, [](const T *Part, T *P, T *To, size_t N) {
    copyElems(Part, P, N);
    copyElems(Part, To, N);
  });
}

/// Sends Src to Out and runs Receive() on In's next message, in whichever
/// order the peers allow, so two ranks exchanging never wait on each other.
template <class T, class Op, class R>
inline void sendAndReceive(Outbox &Out, Inbox &In, Slice<const T> Src, R &&Receive) {
  Out.Wait->until([&] { return Out.ready() || In.ready(); }, "exchange with", Out.Peer,
                  {&Out.Q.Header->Head, &In.Q.Header->Tail});
  if (Out.ready()) {
    sendOrWrite(Out, Src, /*MayWait=*/true);
    Receive();
  } else {
    Receive();
    sendOrWrite(Out, Src, /*MayWait=*/true);
  }
}

/// Sends Src to Out while receiving In's next message into Dst. Dst is
/// offered to the sender first, so that two ranks exchanging can both write
/// straight into each other's buffers.
template <class T, class Op>
CCLC_PRIMITIVE("exchange", "exchange")
void exchange(Outbox &Out, Inbox &In, Slice<const T> Src, Slice<T> Dst) {
  if (In.DirectMin) {
    DirectRuns<T> Runs(Dst);
    if (Runs.N)
      In.offer(Runs.runs(), Runs.Bytes);
    else
      In.decline(Dst.bytes());
  }
  sendAndReceive<T, Op>(Out, In, Src, [&] { recv<T, Op>(In, Dst); });
}

/// Sends Src to Out while combining In's next message into Acc.
template <class T, class Op>
CCLC_PRIMITIVE("exchange_reduce", "exchange_reduce")
void exchangeReduce(Outbox &Out, Inbox &In, Slice<const T> Src, Slice<T> Acc) {
  declineOffer(In, Acc);
  sendAndReceive<T, Op>(Out, In, Src, [&] { recvReduce<T, Op>(In, Acc); });
}

} // namespace cclc::host
