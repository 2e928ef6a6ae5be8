//===- Primitives.cuh - Copy, reduce, send and receive (CUDA) ---*- CUDA -*-===//
//
// The device primitives generated CUDA kernels call, one per operation of the
// language, with the names and parameter kinds of host/Primitives.h. Each
// moves one slice (a run of chunks of a buffer, which may be several pieces
// of memory) and is called by every thread of the block running the
// channel: thread 0 waits, the block moves the data together, and the
// primitive ends with a barrier so the next one sees its writes. Once a wait
// of the block has failed (see cuda/Connection.cuh), the primitives that
// communicate return at once.
//
// Copy and reduce stripe elements over the block's threads, 16 bytes per
// access when every array involved is equally misaligned (a short scalar
// head aligns them), one element at a time otherwise. The element operation
// is the same on either path, so results do not depend on alignment. Their
// loops are not inlined: a kernel calls them from every step, and one copy
// per element type and operator keeps kernels small and quick to compile.
//
// cclc reads this header with clang, without the CUDA toolkit:
//
//   clang++ -x cuda --cuda-host-only -nocudainc -nocudalib -fsyntax-only
//           -std=c++20 -DCCLC_CATALOG -Wno-unknown-cuda-version
//           -I <templates> <templates>/cuda/Primitives.cuh
//
// CCLC_CATALOG is the only define needed: cuda/Device.cuh then defines the
// CUDA keywords (__host__, __device__, __global__, __shared__,
// __forceinline__, __noinline__) as clang's own CUDA headers do, unless the
// command line already defines them, and declares the few toolkit names the
// templates use.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "common/Layout.h"
#include "common/Primitive.h"
#include "cuda/Connection.cuh"
#include "cuda/Types.cuh"

#include <cstddef>
#include <cstdint>

namespace cclc::cuda {

/// Chunks [Chunk, Chunk + Count) of a buffer of Units units, in one round.
template <class T> struct Slice {
  T *Base = nullptr;
  const kern::Layout *Grid = nullptr;
  int32_t Units = 1;
  int32_t Chunk = 0;
  int32_t Count = 0;

  __device__ size_t elems() const { return Grid->sliceElems(Units, Chunk, Count); }
  __device__ size_t bytes() const { return elems() * sizeof(T); }
  /// Calls Fn(pointer, elements) for each contiguous run, in chunk order.
  template <class F> __device__ void forEachRun(F &&Fn) const {
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

/// Walks two slices of equal size together, calling Fn(a, b, elements) on
/// the runs they share.
template <class A, class B, class F>
__device__ void zipRuns(const Slice<A> &X, const Slice<B> &Y, F &&Fn) {
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

//===----------------------------------------------------------------------===//
// Striped element loops
//===----------------------------------------------------------------------===//

/// Bytes of one vector access, and elements of T it holds.
inline constexpr size_t PackBytes = 16;
template <class T> inline constexpr size_t PackElems = PackBytes / sizeof(T);

/// How a run of elements splits for vector access: Head elements one at a
/// time, then Packs vectors, then the rest one at a time.
struct PackSplit {
  size_t Head;
  size_t Packs;
};

/// Splits N elements of arrays starting at First and at addresses that
/// differ from First by Apart bits (the OR of First ^ other): vectors need
/// every array equally far from 16-byte alignment.
template <class T>
__device__ __forceinline__ PackSplit splitPacks(size_t N, uintptr_t First, uintptr_t Apart) {
  static_assert(PackBytes % sizeof(T) == 0, "an element must divide a vector");
  if (Apart % PackBytes)
    return {N, 0};
  size_t Head = (PackBytes - First % PackBytes) % PackBytes / sizeof(T);
  if (Head >= N)
    return {N, 0};
  return {Head, (N - Head) / PackElems<T>};
}

/// Calls Fn(I) for I in [Begin, End), striped over the block's threads.
template <class F>
__device__ __forceinline__ void forEachStriped(size_t Begin, size_t End, F &&Fn) {
  for (size_t I = Begin + threadIdx.x; I < End; I += blockDim.x)
    Fn(I);
}

/// The elements of a vector, for element-wise operations.
template <class T> struct Pack { T E[PackElems<T>]; };

/// Op on the elements of two vectors, as one vector.
template <class T, class Op> __device__ __forceinline__ uint4 reducePack(uint4 A, uint4 B) {
  Pack<T> X, Y;
  __builtin_memcpy(&X, &A, PackBytes);
  __builtin_memcpy(&Y, &B, PackBytes);
  Op Fn;
#pragma unroll
  for (size_t K = 0; K < PackElems<T>; ++K)
    X.E[K] = Fn(X.E[K], Y.E[K]);
  __builtin_memcpy(&A, &X, PackBytes);
  return A;
}

/// Dst[i] = Src[i]; when Also is set, also Also[i] = Src[i], reading Src
/// once. By the whole block.
template <class T>
__device__ __noinline__ void copyElems(const T *__restrict__ Src, T *__restrict__ Dst,
                                       T *__restrict__ Also, size_t N) {
  uintptr_t First = uintptr_t(Src);
  PackSplit S =
      splitPacks<T>(N, First, (First ^ uintptr_t(Dst)) | (Also ? First ^ uintptr_t(Also) : 0));
  auto One = [&](size_t I) {
    T V = Src[I];
    Dst[I] = V;
    if (Also)
      Also[I] = V;
  };
  forEachStriped(0, S.Head, One);
  const uint4 *From = reinterpret_cast<const uint4 *>(Src + S.Head);
  uint4 *To = reinterpret_cast<uint4 *>(Dst + S.Head);
  uint4 *Copy = Also ? reinterpret_cast<uint4 *>(Also + S.Head) : nullptr;
#pragma unroll 4
  for (size_t K = threadIdx.x; K < S.Packs; K += blockDim.x) {
    uint4 V = From[K];
    To[K] = V;
    if (Copy)
      Copy[K] = V;
  }
  forEachStriped(S.Head + S.Packs * PackElems<T>, N, One);
}

/// Acc[i] = Op(Acc[i], Src[i]); when Out is set, also Out[i] = the result.
/// By the whole block.
template <class T, class Op>
__device__ __noinline__ void reduceElems(const T *__restrict__ Src, T *__restrict__ Acc,
                                         T *__restrict__ Out, size_t N) {
  uintptr_t First = uintptr_t(Src);
  PackSplit S =
      splitPacks<T>(N, First, (First ^ uintptr_t(Acc)) | (Out ? First ^ uintptr_t(Out) : 0));
  Op Fn;
  auto One = [&](size_t I) {
    T R = Fn(Acc[I], Src[I]);
    Acc[I] = R;
    if (Out)
      Out[I] = R;
  };
  forEachStriped(0, S.Head, One);
  const uint4 *From = reinterpret_cast<const uint4 *>(Src + S.Head);
  uint4 *Into = reinterpret_cast<uint4 *>(Acc + S.Head);
  uint4 *Copy = Out ? reinterpret_cast<uint4 *>(Out + S.Head) : nullptr;
#pragma unroll 4
  for (size_t K = threadIdx.x; K < S.Packs; K += blockDim.x) {
    uint4 R = reducePack<T, Op>(Into[K], From[K]);
    Into[K] = R;
    if (Copy)
      Copy[K] = R;
  }
  forEachStriped(S.Head + S.Packs * PackElems<T>, N, One);
}

/// Copies Src's runs one after another into Slot; returns the bytes written.
template <class T> __device__ size_t packSlot(const Slice<const T> &Src, std::byte *Slot) {
  size_t Off = 0;
  Src.forEachRun([&](const T *P, size_t N) {
    copyElems<T>(P, reinterpret_cast<T *>(Slot + Off), nullptr, N);
    Off += N * sizeof(T);
  });
  return Off;
}

//===----------------------------------------------------------------------===//
// The primitives
//===----------------------------------------------------------------------===//

/// Packs Src into a free slot of Out and posts it.
template <class T, class Op>
CCLC_PRIMITIVE("send", "send")
__device__ void send(Outbox &Out, Slice<const T> Src) {
  std::byte *Slot = Out.acquire();
  if (!Slot)
    return;
  Out.post(packSlot(Src, Slot));
}

/// Receives the next message of In into Dst.
template <class T, class Op>
CCLC_PRIMITIVE("recv", "recv")
__device__ void recv(Inbox &In, Slice<T> Dst) {
  const std::byte *Slot = In.peek(Dst.bytes());
  if (!Slot)
    return;
  size_t Off = 0;
  Dst.forEachRun([&](T *P, size_t N) {
    copyElems<T>(reinterpret_cast<const T *>(Slot + Off), P, nullptr, N);
    Off += N * sizeof(T);
  });
  In.release();
}

/// Combines the next message of In into Acc.
template <class T, class Op>
CCLC_PRIMITIVE("recv_reduce", "recv_reduce")
__device__ void recvReduce(Inbox &In, Slice<T> Acc) {
  const std::byte *Slot = In.peek(Acc.bytes());
  if (!Slot)
    return;
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
__device__ void copy(Slice<const T> Src, Slice<T> Dst) {
  zipRuns(Src, Dst, [](const T *S, T *D, size_t N) { copyElems<T>(S, D, nullptr, N); });
  __syncthreads();
}

/// Acc = Acc (op) Src locally.
template <class T, class Op>
CCLC_PRIMITIVE("reduce", "reduce")
__device__ void reduce(Slice<const T> Src, Slice<T> Acc) {
  zipRuns(Src, Acc, [](const T *S, T *A, size_t N) { reduceElems<T, Op>(S, A, nullptr, N); });
  __syncthreads();
}

/// Combines the next message of In into Acc and sends the result to Out, in
/// one pass over the data.
template <class T, class Op>
CCLC_PRIMITIVE("recv_reduce_send", "recv_reduce_send")
__device__ void recvReduceSend(Inbox &In, Outbox &Out, Slice<T> Acc) {
  const std::byte *From = In.peek(Acc.bytes());
  if (!From)
    return;
  std::byte *To = Out.acquire();
  if (!To)
    return;
  size_t Off = 0;
  Acc.forEachRun([&](T *P, size_t N) {
    reduceElems<T, Op>(reinterpret_cast<const T *>(From + Off), P, reinterpret_cast<T *>(To + Off),
                       N);
    Off += N * sizeof(T);
  });
  In.release();
  Out.post(Off);
}

/// Receives the next message of In into Dst and forwards it to Out, in one
/// pass over the data.
template <class T, class Op>
CCLC_PRIMITIVE("recv_copy_send", "recv_copy_send")
__device__ void recvCopySend(Inbox &In, Outbox &Out, Slice<T> Dst) {
  const std::byte *From = In.peek(Dst.bytes());
  if (!From)
    return;
  std::byte *To = Out.acquire();
  if (!To)
    return;
  size_t Off = 0;
  Dst.forEachRun([&](T *P, size_t N) {
    copyElems(reinterpret_cast<const T *>(From + Off), P, reinterpret_cast<T *>(To + Off), N);
    Off += N * sizeof(T);
  });
  In.release();
  Out.post(Off);
}

/// Sends Src to Out while receiving In's next message into Dst, in whichever
/// order the peers allow, so two ranks exchanging never wait on each other.
template <class T, class Op>
CCLC_PRIMITIVE("exchange", "exchange")
__device__ void exchange(Outbox &Out, Inbox &In, Slice<const T> Src, Slice<T> Dst) {
  uint32_t Turn = waitEither(Out, In);
  if (Turn == SendFirst) {
    send<T, Op>(Out, Src);
    recv<T, Op>(In, Dst);
  } else if (Turn == ReceiveFirst) {
    recv<T, Op>(In, Dst);
    send<T, Op>(Out, Src);
  }
}

/// Sends Src to Out while combining In's next message into Acc.
template <class T, class Op>
CCLC_PRIMITIVE("exchange_reduce", "exchange_reduce")
__device__ void exchangeReduce(Outbox &Out, Inbox &In, Slice<const T> Src, Slice<T> Acc) {
  uint32_t Turn = waitEither(Out, In);
  if (Turn == SendFirst) {
    send<T, Op>(Out, Src);
    recvReduce<T, Op>(In, Acc);
  } else if (Turn == ReceiveFirst) {
    recvReduce<T, Op>(In, Acc);
    send<T, Op>(Out, Src);
  }
}

} // namespace cclc::cuda
