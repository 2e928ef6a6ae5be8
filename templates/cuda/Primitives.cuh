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
// is the same on either path, so results do not depend on alignment. Each
// thread loads Unroll words from every source into registers before it
// stores any, so that Unroll loads per source are in flight at once: one
// load at a time leaves a thread waiting out the memory's latency (a peer's
// memory, across NVLink or PCIe, most of all) for every 16 bytes. A warp
// moves Unroll runs of 32 consecutive words, as NCCL's reduceCopyPacks
// does: every access of the warp is contiguous, and a thread's words lie at
// fixed offsets, which keeps the loop's registers few. Blocks are whole
// warps (the runtime refuses kernels of other sizes). Their
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

#include "common/Primitive.h"
#include "common/Slice.h"
#include "cuda/Connection.cuh"
#include "cuda/Types.cuh"

#include <cstddef>
#include <cstdint>

namespace cclc::cuda {

/// The slices the primitives move, and their walks (common/Slice.h).
using kern::Slice;
using kern::zipRuns;

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

/// Words each thread moves per pass of a striped loop.
inline constexpr int Unroll = 4;
/// Threads of a warp. A warp moves Unroll runs of WarpLanes consecutive
/// words per pass, so that every access of the warp is contiguous and the
/// Unroll words of a thread lie at offsets the compiler knows.
inline constexpr int WarpLanes = 32;

/// Dst[k] = Combine(Src[k], Dst[k]) for k in [0, Count), and Also[k] too
/// unless Also is null, by the block's full warps (threads past the last
/// full warp, if any, stay idle). Each pass of a thread issues the loads of
/// its Unroll words (from Src, and from Dst when ReadsDst) before any store;
/// Combine gets Src's word twice unless ReadsDst.
template <bool ReadsDst, class W, class C>
__device__ __forceinline__ void moveStriped(const W *__restrict__ Src, W *__restrict__ Dst,
                                            W *__restrict__ Also, size_t Count, C &&Combine) {
  constexpr size_t Span = size_t(Unroll) * WarpLanes;
  const size_t Warps = blockDim.x / WarpLanes, Warp = threadIdx.x / WarpLanes;
  if (Warp >= Warps)
    return;
  for (size_t Base = Warp * Span + threadIdx.x % WarpLanes; Base < Count; Base += Warps * Span) {
    W From[Unroll], Into[Unroll];
#pragma unroll
    for (int U = 0; U < Unroll; ++U) {
      size_t K = Base + size_t(U) * WarpLanes;
      if (K < Count) {
        From[U] = Src[K];
        Into[U] = ReadsDst ? Dst[K] : From[U];
      }
    }
#pragma unroll
    for (int U = 0; U < Unroll; ++U) {
      size_t K = Base + size_t(U) * WarpLanes;
      if (K < Count) {
        W V = Combine(From[U], Into[U]);
        Dst[K] = V;
        if (Also)
          Also[K] = V;
      }
    }
  }
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

/// Dst[i] = Elem(Src[i], Dst[i]) for i in [0, N), and Also[i] too unless
/// Also is null, by the whole block. Where Src, Dst and Also are equally
/// misaligned, the middle goes by vectors, combined with Pack.
template <bool ReadsDst, class T, class E, class P>
__device__ __forceinline__ void stripeElems(const T *Src, T *Dst, T *Also, size_t N, E &&Elem,
                                            P &&Pack) {
  uintptr_t First = uintptr_t(Src);
  PackSplit S =
      splitPacks<T>(N, First, (First ^ uintptr_t(Dst)) | (Also ? First ^ uintptr_t(Also) : 0));
  size_t Rest = S.Head + S.Packs * PackElems<T>;
  moveStriped<ReadsDst>(Src, Dst, Also, S.Head, Elem);
  moveStriped<ReadsDst>(reinterpret_cast<const uint4 *>(Src + S.Head),
                        reinterpret_cast<uint4 *>(Dst + S.Head),
                        Also ? reinterpret_cast<uint4 *>(Also + S.Head) : nullptr, S.Packs, Pack);
  moveStriped<ReadsDst>(Src + Rest, Dst + Rest, Also ? Also + Rest : nullptr, N - Rest, Elem);
}

/// Dst[i] = Src[i]; when Also is set, also Also[i] = Src[i], reading Src
/// once. By the whole block.
template <class T>
__device__ __noinline__ void copyElems(const T *__restrict__ Src, T *__restrict__ Dst,
                                       T *__restrict__ Also, size_t N) {
  stripeElems</*ReadsDst=*/false>(
      Src, Dst, Also, N, [](T From, T) { return From; }, [](uint4 From, uint4) { return From; });
}

/// Acc[i] = Op(Acc[i], Src[i]); when Out is set, also Out[i] = the result.
/// By the whole block.
template <class T, class Op>
__device__ __noinline__ void reduceElems(const T *__restrict__ Src, T *__restrict__ Acc,
                                         T *__restrict__ Out, size_t N) {
  Op Fn;
  stripeElems</*ReadsDst=*/true>(
      Src, Acc, Out, N, [&](T From, T Into) { return Fn(Into, From); },
      [](uint4 From, uint4 Into) { return reducePack<T, Op>(Into, From); });
}

/// Out[i] = Op(Local[i], Src[i]), leaving Local as it is, by the whole
/// block. The copy and the combination run back to back, two passes over
/// Out (the host's primitive makes them one); Local may be Out itself, not
/// part of it.
template <class T, class Op>
__device__ __noinline__ void reduceCopyElems(const T *Src, const T *Local, T *Out, size_t N) {
  if (Local != Out) {
    copyElems<T>(Local, Out, nullptr, N);
    __syncthreads();
  }
  reduceElems<T, Op>(Src, Out, nullptr, N);
}

/// Dst = Src (op) Msg, a message of Dst's size, run by run: both slices walk
/// their runs in chunk order, as the message holds them.
template <class T, class Op>
__device__ void reduceCopyRuns(const T *Msg, const Slice<const T> &Src, const Slice<T> &Dst) {
  size_t At = 0;
  zipRuns(Src, Dst, [&](const T *Local, T *Out, size_t N) {
    reduceCopyElems<T, Op>(Msg + At, Local, Out, N);
    At += N;
  });
}

//===----------------------------------------------------------------------===//
// The primitives
//===----------------------------------------------------------------------===//

/// Packs Src into a free slot of Out and posts it.
template <class T, class Op>
CCLC_PRIMITIVE("send", "send")
__device__ void send(Outbox &Out, Slice<const T> Src) {
  kern::sendRuns(Out, Src,
                 [](const T *P, T *Part, size_t N) { copyElems<T>(P, Part, nullptr, N); });
}

/// Receives the next message of In into Dst.
template <class T, class Op>
CCLC_PRIMITIVE("recv", "recv")
__device__ void recv(Inbox &In, Slice<T> Dst) {
  kern::receiveRuns(In, Dst,
                    [](const T *Part, T *P, size_t N) { copyElems<T>(Part, P, nullptr, N); });
}

/// Combines the next message of In into Acc.
template <class T, class Op>
CCLC_PRIMITIVE("recv_reduce", "recv_reduce")
__device__ void recvReduce(Inbox &In, Slice<T> Acc) {
  kern::receiveRuns(In, Acc,
                    [](const T *Part, T *P, size_t N) { reduceElems<T, Op>(Part, P, nullptr, N); });
}

/// Dst = Src (op) the next message of In.
template <class T, class Op>
CCLC_PRIMITIVE("recv_reduce_copy", "recv_reduce_copy")
__device__ void recvReduceCopy(Inbox &In, Slice<const T> Src, Slice<T> Dst) {
  const T *Msg = reinterpret_cast<const T *>(In.peek(Dst.bytes()));
  if (!Msg)
    return;
  reduceCopyRuns<T, Op>(Msg, Src, Dst);
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
  kern::relayRuns(In, Out, Acc,
                  [](const T *Part, T *P, T *To, size_t N) { reduceElems<T, Op>(Part, P, To, N); });
}

/// Receives the next message of In into Dst and forwards it to Out, in one
/// pass over the data.
template <class T, class Op>
CCLC_PRIMITIVE("recv_copy_send", "recv_copy_send")
__device__ void recvCopySend(Inbox &In, Outbox &Out, Slice<T> Dst) {
  kern::relayRuns(In, Out, Dst,
                  [](const T *Part, T *P, T *To, size_t N) { copyElems(Part, P, To, N); });
}

/// Runs Send() on Out and Receive() on In's next message, in whichever
/// order the peers allow, so two ranks exchanging never wait on each other.
template <class S, class R>
__device__ void sendAndReceive(Outbox &Out, Inbox &In, S &&Send, R &&Receive) {
  uint32_t Turn = waitEither(Out, In);
  if (Turn == SendFirst) {
    Send();
    Receive();
  } else if (Turn == ReceiveFirst) {
    Receive();
    Send();
  }
}

/// Sends Src to Out while receiving In's next message into Dst.
template <class T, class Op>
CCLC_PRIMITIVE("exchange", "exchange")
__device__ void exchange(Outbox &Out, Inbox &In, Slice<const T> Src, Slice<T> Dst) {
  sendAndReceive(Out, In, [&] { send<T, Op>(Out, Src); }, [&] { recv<T, Op>(In, Dst); });
}

/// Sends Src to Out while combining In's next message into Acc.
template <class T, class Op>
CCLC_PRIMITIVE("exchange_reduce", "exchange_reduce")
__device__ void exchangeReduce(Outbox &Out, Inbox &In, Slice<const T> Src, Slice<T> Acc) {
  sendAndReceive(Out, In, [&] { send<T, Op>(Out, Src); }, [&] { recvReduce<T, Op>(In, Acc); });
}

//===----------------------------------------------------------------------===//
// The primitives of the line protocols
//
// Each has the meaning of its simple namesake and moves a message that a
// step of line protocol P (LL or LL128) sends as lines (carriesLines: small
// enough, and a FIFO whose ends are both kernels and, for LL128, whose
// lines arrive whole) as lines with flags (cuda/Connection.cuh); larger
// messages, and FIFOs a proxy drains, go the simple way, which both ends
// decide alike. The block stages the message in shared memory: one stage
// for what it sends and one for what it receives, so that a relay holds
// both. The protocol is an argument, so that both share one instance of
// each; the library's primitives name it (send_ll, send_ll128, ...).
//===----------------------------------------------------------------------===//

/// The block's stage for the message it sends (Which 0) or receives (1) as
/// lines.
template <int Which> __device__ __forceinline__ uint64_t *lineStage() {
  __shared__ uint64_t Stage[kern::LineStageBytes / sizeof(uint64_t)];
  return Stage;
}

/// Where a relay or a receive takes In's next message of Bytes bytes from:
/// the stage, filled and released already, or In's slot; null once a wait
/// failed.
template <class T>
__device__ const T *takeMessage(Inbox &In, size_t Bytes, kern::Protocol P) {
  if (!In.carriesLines(P, Bytes))
    return reinterpret_cast<const T *>(In.peek(Bytes));
  uint64_t Seq = In.nextNumber();
  if (!Seq || !In.takeLines(P, Seq, lineStage<1>(), Bytes))
    return nullptr;
  return reinterpret_cast<const T *>(lineStage<1>());
}

/// Sends Src to Out as lines of P where it carries it: staged, then written.
template <class T, class Op>
__device__ void sendLines(Outbox &Out, Slice<const T> Src, kern::Protocol P) {
  size_t Bytes = Src.bytes();
  if (!Out.carriesLines(P, Bytes))
    return send<T, Op>(Out, Src);
  uint64_t Seq = Out.acquireNumber();
  if (!Seq)
    return;
  T *Stage = reinterpret_cast<T *>(lineStage<0>());
  for (kern::RunCursor<const T> Run(Src); Run.next();)
    copyElems<T>(Run.ptr(), Stage + Run.at(), nullptr, Run.elems());
  Out.postLines(P, Seq, lineStage<0>(), Bytes);
}

/// Receives In's next message into Dst, calling Fn(part, run, elements) for
/// each run, as lines of P where they carry it.
template <class T, class F>
__device__ void receiveLines(Inbox &In, const Slice<T> &Dst, kern::Protocol P, F &&Fn) {
  size_t Bytes = Dst.bytes();
  bool ByLines = In.carriesLines(P, Bytes);
  const T *Msg = takeMessage<T>(In, Bytes, P);
  if (!Msg)
    return;
  for (kern::RunCursor<T> Run(Dst); Run.next();)
    Fn(Msg + Run.at(), Run.ptr(), Run.elems());
  if (!ByLines)
    In.release();
  else
    __syncthreads();
}

/// Receives In's next message into Dst and sends one of the same size to
/// Out, calling Fn(part, run, outgoing part, elements) for each run; each
/// side takes lines of P where they carry the message.
template <class T, class F>
__device__ void relayLines(Inbox &In, Outbox &Out, const Slice<T> &Dst, kern::Protocol P, F &&Fn) {
  size_t Bytes = Dst.bytes();
  bool InByLines = In.carriesLines(P, Bytes), OutByLines = Out.carriesLines(P, Bytes);
  const T *From = takeMessage<T>(In, Bytes, P);
  if (!From)
    return;
  uint64_t Seq = 0;
  T *To;
  if (OutByLines) {
    if (!(Seq = Out.acquireNumber()))
      return;
    To = reinterpret_cast<T *>(lineStage<0>());
  } else if (!(To = reinterpret_cast<T *>(Out.acquire()))) {
    return;
  }
  for (kern::RunCursor<T> Run(Dst); Run.next();)
    Fn(From + Run.at(), Run.ptr(), To + Run.at(), Run.elems());
  if (!InByLines)
    In.release();
  if (OutByLines)
    Out.postLines(P, Seq, lineStage<0>(), Bytes);
  else
    Out.post(Bytes);
}

/// recv, as lines of P.
template <class T, class Op>
__device__ void recvLines(Inbox &In, Slice<T> Dst, kern::Protocol P) {
  receiveLines(In, Dst, P,
               [](const T *Part, T *To, size_t N) { copyElems<T>(Part, To, nullptr, N); });
}

/// recv_reduce, as lines of P.
template <class T, class Op>
__device__ void recvReduceLines(Inbox &In, Slice<T> Acc, kern::Protocol P) {
  receiveLines(In, Acc, P,
               [](const T *Part, T *To, size_t N) { reduceElems<T, Op>(Part, To, nullptr, N); });
}

/// recv_reduce_copy, as lines of P.
template <class T, class Op>
__device__ void recvReduceCopyLines(Inbox &In, Slice<const T> Src, Slice<T> Dst,
                                    kern::Protocol P) {
  size_t Bytes = Dst.bytes();
  bool ByLines = In.carriesLines(P, Bytes);
  const T *Msg = takeMessage<T>(In, Bytes, P);
  if (!Msg)
    return;
  reduceCopyRuns<T, Op>(Msg, Src, Dst);
  if (!ByLines)
    In.release();
  else
    __syncthreads();
}

/// recv_reduce_send, as lines of P.
template <class T, class Op>
__device__ void recvReduceSendLines(Inbox &In, Outbox &Out, Slice<T> Acc, kern::Protocol P) {
  relayLines(In, Out, Acc, P, [](const T *Part, T *To, T *Next, size_t N) {
    reduceElems<T, Op>(Part, To, Next, N);
  });
}

/// recv_copy_send, as lines of P.
template <class T, class Op>
__device__ void recvCopySendLines(Inbox &In, Outbox &Out, Slice<T> Dst, kern::Protocol P) {
  relayLines(In, Out, Dst, P,
             [](const T *Part, T *To, T *Next, size_t N) { copyElems(Part, To, Next, N); });
}

/// exchange, as lines of P.
template <class T, class Op>
__device__ void exchangeLines(Outbox &Out, Inbox &In, Slice<const T> Src, Slice<T> Dst,
                              kern::Protocol P) {
  sendAndReceive(Out, In, [&] { sendLines<T, Op>(Out, Src, P); },
                 [&] { recvLines<T, Op>(In, Dst, P); });
}

/// exchange_reduce, as lines of P.
template <class T, class Op>
__device__ void exchangeReduceLines(Outbox &Out, Inbox &In, Slice<const T> Src, Slice<T> Acc,
                                    kern::Protocol P) {
  sendAndReceive(Out, In, [&] { sendLines<T, Op>(Out, Src, P); },
                 [&] { recvReduceLines<T, Op>(In, Acc, P); });
}

//===----------------------------------------------------------------------===//
// The library's primitives of the line protocols, by name, as generated
// kernels call them for a step of each protocol.
//===----------------------------------------------------------------------===//

template <class T, class Op>
CCLC_PRIMITIVE("send_ll", "send")
__device__ void sendLL(Outbox &Out, Slice<const T> Src) {
  sendLines<T, Op>(Out, Src, kern::Protocol::LL);
}
template <class T, class Op>
CCLC_PRIMITIVE("send_ll128", "send")
__device__ void sendLL128(Outbox &Out, Slice<const T> Src) {
  sendLines<T, Op>(Out, Src, kern::Protocol::LL128);
}

template <class T, class Op>
CCLC_PRIMITIVE("recv_ll", "recv")
__device__ void recvLL(Inbox &In, Slice<T> Dst) {
  recvLines<T, Op>(In, Dst, kern::Protocol::LL);
}
template <class T, class Op>
CCLC_PRIMITIVE("recv_ll128", "recv")
__device__ void recvLL128(Inbox &In, Slice<T> Dst) {
  recvLines<T, Op>(In, Dst, kern::Protocol::LL128);
}

template <class T, class Op>
CCLC_PRIMITIVE("recv_reduce_ll", "recv_reduce")
__device__ void recvReduceLL(Inbox &In, Slice<T> Acc) {
  recvReduceLines<T, Op>(In, Acc, kern::Protocol::LL);
}
template <class T, class Op>
CCLC_PRIMITIVE("recv_reduce_ll128", "recv_reduce")
__device__ void recvReduceLL128(Inbox &In, Slice<T> Acc) {
  recvReduceLines<T, Op>(In, Acc, kern::Protocol::LL128);
}

template <class T, class Op>
CCLC_PRIMITIVE("recv_reduce_copy_ll", "recv_reduce_copy")
__device__ void recvReduceCopyLL(Inbox &In, Slice<const T> Src, Slice<T> Dst) {
  recvReduceCopyLines<T, Op>(In, Src, Dst, kern::Protocol::LL);
}
template <class T, class Op>
CCLC_PRIMITIVE("recv_reduce_copy_ll128", "recv_reduce_copy")
__device__ void recvReduceCopyLL128(Inbox &In, Slice<const T> Src, Slice<T> Dst) {
  recvReduceCopyLines<T, Op>(In, Src, Dst, kern::Protocol::LL128);
}

template <class T, class Op>
CCLC_PRIMITIVE("recv_reduce_send_ll", "recv_reduce_send")
__device__ void recvReduceSendLL(Inbox &In, Outbox &Out, Slice<T> Acc) {
  recvReduceSendLines<T, Op>(In, Out, Acc, kern::Protocol::LL);
}
template <class T, class Op>
CCLC_PRIMITIVE("recv_reduce_send_ll128", "recv_reduce_send")
__device__ void recvReduceSendLL128(Inbox &In, Outbox &Out, Slice<T> Acc) {
  recvReduceSendLines<T, Op>(In, Out, Acc, kern::Protocol::LL128);
}

template <class T, class Op>
CCLC_PRIMITIVE("recv_copy_send_ll", "recv_copy_send")
__device__ void recvCopySendLL(Inbox &In, Outbox &Out, Slice<T> Dst) {
  recvCopySendLines<T, Op>(In, Out, Dst, kern::Protocol::LL);
}
template <class T, class Op>
CCLC_PRIMITIVE("recv_copy_send_ll128", "recv_copy_send")
__device__ void recvCopySendLL128(Inbox &In, Outbox &Out, Slice<T> Dst) {
  recvCopySendLines<T, Op>(In, Out, Dst, kern::Protocol::LL128);
}

template <class T, class Op>
CCLC_PRIMITIVE("exchange_ll", "exchange")
__device__ void exchangeLL(Outbox &Out, Inbox &In, Slice<const T> Src, Slice<T> Dst) {
  exchangeLines<T, Op>(Out, In, Src, Dst, kern::Protocol::LL);
}
template <class T, class Op>
CCLC_PRIMITIVE("exchange_ll128", "exchange")
__device__ void exchangeLL128(Outbox &Out, Inbox &In, Slice<const T> Src, Slice<T> Dst) {
  exchangeLines<T, Op>(Out, In, Src, Dst, kern::Protocol::LL128);
}

template <class T, class Op>
CCLC_PRIMITIVE("exchange_reduce_ll", "exchange_reduce")
__device__ void exchangeReduceLL(Outbox &Out, Inbox &In, Slice<const T> Src, Slice<T> Acc) {
  exchangeReduceLines<T, Op>(Out, In, Src, Acc, kern::Protocol::LL);
}
template <class T, class Op>
CCLC_PRIMITIVE("exchange_reduce_ll128", "exchange_reduce")
__device__ void exchangeReduceLL128(Outbox &Out, Inbox &In, Slice<const T> Src, Slice<T> Acc) {
  exchangeReduceLines<T, Op>(Out, In, Src, Acc, kern::Protocol::LL128);
}

} // namespace cclc::cuda
