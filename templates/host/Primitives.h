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

#include "common/Layout.h"
#include "common/Primitive.h"
#include "host/Connection.h"
#include "host/Types.h"

#include <cstdint>
#include <cstring>

namespace cclc::host {

/// Chunks [Chunk, Chunk + Count) of a buffer of Units units, in one round.
template <class T> struct Slice {
  T *Base = nullptr;
  const kern::Layout *Grid = nullptr;
  int32_t Units = 1;
  int32_t Chunk = 0;
  int32_t Count = 0;

  size_t elems() const { return Grid->sliceElems(Units, Chunk, Count); }
  size_t bytes() const { return elems() * sizeof(T); }
  /// Calls Fn(pointer, elements) for each contiguous run, in chunk order.
  template <class F> void forEachRun(F &&Fn) const {
    T *RunPtr = nullptr;
    size_t RunElems = 0;
    for (int32_t I = 0; I < Count; ++I) {
      kern::Segment S = Grid->chunk(Units, Chunk + I);
      if (RunPtr && RunPtr + RunElems == Base + S.Begin) {
        RunElems += S.Elems;
        continue;
      }
      if (RunElems)
        Fn(RunPtr, RunElems);
      RunPtr = Base + S.Begin;
      RunElems = S.Elems;
    }
    if (RunElems)
      Fn(RunPtr, RunElems);
  }
};

/// Dst = Src, element by element.
template <class T> inline void copyElems(const T *__restrict Src, T *__restrict Dst, size_t N) {
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
#pragma GCC unroll 16
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

/// Walks two slices of equal size together, calling Fn(a, b, elements) on
/// the runs they share.
template <class A, class B, class F> inline void zipRuns(const Slice<A> &X, const Slice<B> &Y, F &&Fn) {
  // Slices have few runs; walk X's runs and cut Y's to match.
  B *YPtr = nullptr;
  size_t YLeft = 0;
  int32_t YChunk = 0;
  auto NextY = [&] {
    while (YLeft == 0 && YChunk < Y.Count) {
      kern::Segment S = Y.Grid->chunk(Y.Units, Y.Chunk + YChunk++);
      YPtr = Y.Base + S.Begin;
      YLeft = S.Elems;
    }
  };
  X.forEachRun([&](A *XPtr, size_t XElems) {
    while (XElems) {
      NextY();
      size_t N = XElems < YLeft ? XElems : YLeft;
      Fn(XPtr, YPtr, N);
      XPtr += N;
      XElems -= N;
      YPtr += N;
      YLeft -= N;
    }
  });
}

/// Packs Src into a free slot of Out and posts it.
template <class T, class Op>
CCLC_PRIMITIVE("send", "send")
void send(Outbox &Out, Slice<const T> Src) {
  std::byte *Slot = Out.acquire();
  size_t Off = 0;
  Src.forEachRun([&](const T *P, size_t N) {
    copyElems(P, reinterpret_cast<T *>(Slot + Off), N);
    Off += N * sizeof(T);
  });
  Out.post(Off);
}

/// Receives the next message of In into Dst.
template <class T, class Op>
CCLC_PRIMITIVE("recv", "recv")
void recv(Inbox &In, Slice<T> Dst) {
  const std::byte *Slot = In.peek(Dst.bytes());
  size_t Off = 0;
  Dst.forEachRun([&](T *P, size_t N) {
    copyElems(reinterpret_cast<const T *>(Slot + Off), P, N);
    Off += N * sizeof(T);
  });
  In.release();
}

/// Combines the next message of In into Acc.
template <class T, class Op>
CCLC_PRIMITIVE("recv_reduce", "recv_reduce")
void recvReduce(Inbox &In, Slice<T> Acc) {
  const std::byte *Slot = In.peek(Acc.bytes());
  size_t Off = 0;
  Acc.forEachRun([&](T *P, size_t N) {
    reduceElems<T, Op>(reinterpret_cast<const T *>(Slot + Off), P, nullptr, N);
    Off += N * sizeof(T);
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
  const std::byte *From = In.peek(Acc.bytes());
  std::byte *To = Out.acquire();
  size_t Off = 0;
  Acc.forEachRun([&](T *P, size_t N) {
    reduceElems<T, Op>(reinterpret_cast<const T *>(From + Off), P,
                       reinterpret_cast<T *>(To + Off), N);
    Off += N * sizeof(T);
  });
  In.release();
  Out.post(Off);
}

/// Receives the next message of In into Dst and forwards it to Out.
template <class T, class Op>
CCLC_PRIMITIVE("recv_copy_send", "recv_copy_send")
void recvCopySend(Inbox &In, Outbox &Out, Slice<T> Dst) {
  const std::byte *From = In.peek(Dst.bytes());
  std::byte *To = Out.acquire();
  size_t Off = 0;
  Dst.forEachRun([&](T *P, size_t N) {
    copyElems(reinterpret_cast<const T *>(From + Off), P, N);
    copyElems(reinterpret_cast<const T *>(From + Off), reinterpret_cast<T *>(To + Off), N);
    Off += N * sizeof(T);
  });
  In.release();
  Out.post(Off);
}

/// Sends Src to Out while receiving In's next message into Dst, in whichever
/// order the peers allow, so two ranks exchanging never wait on each other.
template <class T, class Op>
CCLC_PRIMITIVE("exchange", "exchange")
void exchange(Outbox &Out, Inbox &In, Slice<const T> Src, Slice<T> Dst) {
  Out.Wait->until([&] { return Out.ready() || In.ready(); }, "exchange with", Out.Peer);
  if (Out.ready()) {
    send<T, Op>(Out, Src);
    recv<T, Op>(In, Dst);
  } else {
    recv<T, Op>(In, Dst);
    send<T, Op>(Out, Src);
  }
}

/// Sends Src to Out while combining In's next message into Acc.
template <class T, class Op>
CCLC_PRIMITIVE("exchange_reduce", "exchange_reduce")
void exchangeReduce(Outbox &Out, Inbox &In, Slice<const T> Src, Slice<T> Acc) {
  Out.Wait->until([&] { return Out.ready() || In.ready(); }, "exchange with", Out.Peer);
  if (Out.ready()) {
    send<T, Op>(Out, Src);
    recvReduce<T, Op>(In, Acc);
  } else {
    recvReduce<T, Op>(In, Acc);
    send<T, Op>(Out, Src);
  }
}

} // namespace cclc::host
