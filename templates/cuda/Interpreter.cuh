//===- Interpreter.cuh - Runs an encoded program on the GPU -----*- CUDA -*-===//
//
// The generic CUDA kernel of the plan interpreter: common/Program.h's step
// loop bound to the device primitives, under the round loop a generated
// CUDA kernel runs, one thread block per channel. Every thread of a block
// walks the same steps (they are read from global memory, where each load is
// one broadcast), so the primitives' barriers are reached alike.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "common/Program.h"
#include "cuda/Kernel.cuh"

namespace cclc::cuda {

template <kern::Protocol P> struct LineTable;

/// The steps that only move data, out of line once per element type: moving
/// does not depend on the operator, so one instance serves all of them (Sum
/// stands for any; every type has it). Inlined into the step loop, they were
/// compiled once per (type, operator) in the runtime's slowest file to
/// compile; a step moves a whole message, so the call costs little against
/// its data. Every protocol copies locally alike.
template <class T> struct Moved {
  __device__ __noinline__ static void send(Outbox &Out, Slice<const T> Src) {
    cuda::send<T, Sum>(Out, Src);
  }
  __device__ __noinline__ static void recv(Inbox &In, Slice<T> Dst) { cuda::recv<T, Sum>(In, Dst); }
  __device__ __noinline__ static void recvCopySend(Inbox &In, Outbox &Out, Slice<T> Dst) {
    cuda::recvCopySend<T, Sum>(In, Out, Dst);
  }
  __device__ __noinline__ static void exchange(Outbox &Out, Inbox &In, Slice<const T> Src,
                                               Slice<T> Dst) {
    cuda::exchange<T, Sum>(Out, In, Src, Dst);
  }
  __device__ __noinline__ static void copy(Slice<const T> Src, Slice<T> Dst) {
    cuda::copy<T, Sum>(Src, Dst);
  }
};

/// The moving steps of the line protocols, out of line once per element
/// type for both: the protocol is an argument.
template <class T> struct MovedByLines {
  __device__ __noinline__ static void send(Outbox &Out, Slice<const T> Src, kern::Protocol P) {
    cuda::sendLines<T, Sum>(Out, Src, P);
  }
  __device__ __noinline__ static void recv(Inbox &In, Slice<T> Dst, kern::Protocol P) {
    cuda::recvLines<T, Sum>(In, Dst, P);
  }
  __device__ __noinline__ static void recvCopySend(Inbox &In, Outbox &Out, Slice<T> Dst,
                                                   kern::Protocol P) {
    cuda::recvCopySendLines<T, Sum>(In, Out, Dst, P);
  }
  __device__ __noinline__ static void exchange(Outbox &Out, Inbox &In, Slice<const T> Src,
                                               Slice<T> Dst, kern::Protocol P) {
    cuda::exchangeLines<T, Sum>(Out, In, Src, Dst, P);
  }
};

/// The reducing steps of the line protocols, out of line once per (element
/// type, operator) for both.
template <class T, class Op> struct ReducedByLines {
  __device__ __noinline__ static void recvReduce(Inbox &In, Slice<T> Acc, kern::Protocol P) {
    cuda::recvReduceLines<T, Op>(In, Acc, P);
  }
  __device__ __noinline__ static void recvReduceSend(Inbox &In, Outbox &Out, Slice<T> Acc,
                                                     kern::Protocol P) {
    cuda::recvReduceSendLines<T, Op>(In, Out, Acc, P);
  }
  __device__ __noinline__ static void recvReduceCopy(Inbox &In, Slice<const T> Src, Slice<T> Dst,
                                                     kern::Protocol P) {
    cuda::recvReduceCopyLines<T, Op>(In, Src, Dst, P);
  }
  /// The simple protocol's, out of line too: a step the fusion of a copy
  /// into a receive makes, not worth a copy inlined in the step loop.
  __device__ __noinline__ static void recvReduceCopy(Inbox &In, Slice<const T> Src,
                                                     Slice<T> Dst) {
    cuda::recvReduceCopy<T, Op>(In, Src, Dst);
  }
  __device__ __noinline__ static void exchangeReduce(Outbox &Out, Inbox &In, Slice<const T> Src,
                                                     Slice<T> Acc, kern::Protocol P) {
    cuda::exchangeReduceLines<T, Op>(Out, In, Src, Acc, P);
  }
};

/// The device primitives, as common/Program.h's step loop calls them: those
/// that reduce inlined per operator, those that move out of line per element
/// type (Moved).
struct PrimitiveTable {
  /// The table for steps of line protocol P.
  template <kern::Protocol P> using Lines = LineTable<P>;

  template <class T, class Op> __device__ static void send(Outbox &Out, Slice<const T> Src) {
    Moved<T>::send(Out, Src);
  }
  /// Device FIFOs take no offers: the receive after the send is not begun.
  template <class T, class Op>
  __device__ static void sendBeforeReceive(Outbox &Out, Slice<const T> Src, Inbox &, Slice<T>) {
    Moved<T>::send(Out, Src);
  }
  template <class T, class Op> __device__ static void recv(Inbox &In, Slice<T> Dst) {
    Moved<T>::recv(In, Dst);
  }
  template <class T, class Op> __device__ static void recvReduce(Inbox &In, Slice<T> Acc) {
    cuda::recvReduce<T, Op>(In, Acc);
  }
  template <class T, class Op>
  __device__ static void recvReduceCopy(Inbox &In, Slice<const T> Src, Slice<T> Dst) {
    ReducedByLines<T, Op>::recvReduceCopy(In, Src, Dst);
  }
  template <class T, class Op> __device__ static void copy(Slice<const T> Src, Slice<T> Dst) {
    Moved<T>::copy(Src, Dst);
  }
  template <class T, class Op> __device__ static void reduce(Slice<const T> Src, Slice<T> Acc) {
    cuda::reduce<T, Op>(Src, Acc);
  }
  template <class T, class Op>
  __device__ static void recvReduceSend(Inbox &In, Outbox &Out, Slice<T> Acc) {
    cuda::recvReduceSend<T, Op>(In, Out, Acc);
  }
  template <class T, class Op>
  __device__ static void recvCopySend(Inbox &In, Outbox &Out, Slice<T> Dst) {
    Moved<T>::recvCopySend(In, Out, Dst);
  }
  template <class T, class Op>
  __device__ static void exchange(Outbox &Out, Inbox &In, Slice<const T> Src, Slice<T> Dst) {
    Moved<T>::exchange(Out, In, Src, Dst);
  }
  template <class T, class Op>
  __device__ static void exchangeReduce(Outbox &Out, Inbox &In, Slice<const T> Src,
                                        Slice<T> Acc) {
    cuda::exchangeReduce<T, Op>(Out, In, Src, Acc);
  }
};

/// The primitives of line protocol P, for steps that take it; local steps
/// are the same. They stay out of line, shared by both line protocols:
/// inlined into the step loop beside the simple ones, they would multiply
/// the kernel that is already the runtime's slowest file to compile, for
/// steps that move little data.
template <kern::Protocol P> struct LineTable : PrimitiveTable {
  template <class T, class Op> __device__ static void send(Outbox &Out, Slice<const T> Src) {
    MovedByLines<T>::send(Out, Src, P);
  }
  template <class T, class Op>
  __device__ static void sendBeforeReceive(Outbox &Out, Slice<const T> Src, Inbox &, Slice<T>) {
    MovedByLines<T>::send(Out, Src, P);
  }
  template <class T, class Op> __device__ static void recv(Inbox &In, Slice<T> Dst) {
    MovedByLines<T>::recv(In, Dst, P);
  }
  template <class T, class Op> __device__ static void recvReduce(Inbox &In, Slice<T> Acc) {
    ReducedByLines<T, Op>::recvReduce(In, Acc, P);
  }
  template <class T, class Op>
  __device__ static void recvReduceSend(Inbox &In, Outbox &Out, Slice<T> Acc) {
    ReducedByLines<T, Op>::recvReduceSend(In, Out, Acc, P);
  }
  template <class T, class Op>
  __device__ static void recvReduceCopy(Inbox &In, Slice<const T> Src, Slice<T> Dst) {
    ReducedByLines<T, Op>::recvReduceCopy(In, Src, Dst, P);
  }
  template <class T, class Op>
  __device__ static void recvCopySend(Inbox &In, Outbox &Out, Slice<T> Dst) {
    MovedByLines<T>::recvCopySend(In, Out, Dst, P);
  }
  template <class T, class Op>
  __device__ static void exchange(Outbox &Out, Inbox &In, Slice<const T> Src, Slice<T> Dst) {
    MovedByLines<T>::exchange(Out, In, Src, Dst, P);
  }
  template <class T, class Op>
  __device__ static void exchangeReduce(Outbox &Out, Inbox &In, Slice<const T> Src,
                                        Slice<T> Acc) {
    ReducedByLines<T, Op>::exchangeReduce(Out, In, Src, Acc, P);
  }
};

/// Threads of each block of the interpreter kernel: the launch bound that
/// the compiler fits the kernel's registers to. The interpreter's step loop
/// holds more in registers than a generated kernel's straight-line code,
/// and with the unrolled copy and reduce loops it needs about 150: at 512
/// threads a block gets only 128 and spills, at 384 it gets 170 and does
/// not. A block still fills an SM's register file, as it did at 512.
inline constexpr int InterpreterThreads = 384;

/// Runs Program for rank Args.Rank on elements of T reduced with Op: block
/// b runs channel b. Program's arrays are device memory.
template <class T, class Op>
__global__ void __launch_bounds__(InterpreterThreads)
    interpret(KernelArgs Args, kern::ProgramView Program) {
  int Channel = int(blockIdx.x);
  const kern::ProgramStep *Steps = Program.Steps + Program.ChannelBegin[Channel];
  uint32_t Count = Program.ChannelBegin[Channel + 1] - Program.ChannelBegin[Channel];
  forEachRound<T>(Args, Program.Shape.Grid, [&](const kern::Layout &Grid) {
    kern::ProgramBuffers<T> Bufs{&Program.Shape, &Grid, static_cast<const T *>(Args.Input),
                                 static_cast<T *>(Args.Output), static_cast<T *>(Args.Scratch)};
    kern::runSteps<PrimitiveTable, T, Op>(Steps, Count, Bufs, Args.Net, Channel);
  });
}

} // namespace cclc::cuda
