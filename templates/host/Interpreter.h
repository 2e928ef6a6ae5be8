//===- Interpreter.h - Runs an encoded program on the host -------*- C++ -*-===//
//
// The host side of the plan interpreter: common/Program.h's step loop bound
// to the host primitives, under the round loop a generated host kernel runs.
// An encoded program runs with the contract of a generated kernel
// (KernelFn): once per channel, from any thread, with the rank's buffers and
// connections.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "common/Program.h"
#include "host/Kernel.h"

namespace cclc::host {

/// The host primitives, as common/Program.h's step loop calls them.
struct PrimitiveTable {
  /// The table for steps of line protocol P: the same, since every host
  /// message that fits carries its flag with its data already
  /// (common/Protocol.h).
  template <kern::Protocol P> using Lines = PrimitiveTable;
  /// Sends learn whether their slice stays as sent until its receiver has
  /// taken it, so that the receiver may read it where it lies
  /// (Outbox::sendReference).
  static constexpr bool ReadsInPlace = true;

  template <class T, class Op> static void send(Outbox &Out, Slice<const T> Src) {
    host::send<T, Op>(Out, Src);
  }
  /// Offers Dst to In's sender before sending, so that a peer sending at
  /// the same time writes straight into it (ring neighbours both sending
  /// first would otherwise both copy through slots). The send may wait a
  /// moment for its receiver's offer, as an exchange's does: a receiver
  /// that runs the same step offers before it sends.
  template <class T, class Op>
  static void sendBeforeReceive(Outbox &Out, Slice<const T> Src, Inbox &In, Slice<T> Dst) {
    host::offerAhead(In, Dst);
    try {
      host::sendOrWrite(Out, Src, /*MayWait=*/true);
    } catch (...) {
      In.withdraw();
      throw;
    }
  }
  template <class T, class Op> static void recv(Inbox &In, Slice<T> Dst) {
    host::recv<T, Op>(In, Dst);
  }
  template <class T, class Op> static void recvReduce(Inbox &In, Slice<T> Acc) {
    host::recvReduce<T, Op>(In, Acc);
  }
  template <class T, class Op>
  static void recvReduceCopy(Inbox &In, Slice<const T> Src, Slice<T> Dst) {
    host::recvReduceCopy<T, Op>(In, Src, Dst);
  }
  template <class T, class Op> static void copy(Slice<const T> Src, Slice<T> Dst) {
    host::copy<T, Op>(Src, Dst);
  }
  template <class T, class Op> static void reduce(Slice<const T> Src, Slice<T> Acc) {
    host::reduce<T, Op>(Src, Acc);
  }
  template <class T, class Op>
  static void recvReduceSend(Inbox &In, Outbox &Out, Slice<T> Acc) {
    host::recvReduceSend<T, Op>(In, Out, Acc);
  }
  template <class T, class Op> static void recvCopySend(Inbox &In, Outbox &Out, Slice<T> Dst) {
    host::recvCopySend<T, Op>(In, Out, Dst);
  }
  template <class T, class Op>
  static void exchange(Outbox &Out, Inbox &In, Slice<const T> Src, Slice<T> Dst) {
    host::exchange<T, Op>(Out, In, Src, Dst);
  }
  template <class T, class Op>
  static void exchangeReduce(Outbox &Out, Inbox &In, Slice<const T> Src, Slice<T> Acc) {
    host::exchangeReduce<T, Op>(Out, In, Src, Acc);
  }
};

/// Runs channel Channel of Program for rank Args.Rank, on elements of T
/// reduced with Op.
template <class T, class Op>
void interpretChannel(const KernelArgs &Args, const kern::ProgramView &Program, int Channel) {
  const kern::ProgramStep *Steps = Program.Steps + Program.ChannelBegin[Channel];
  uint32_t Count = Program.ChannelBegin[Channel + 1] - Program.ChannelBegin[Channel];
  forEachRound<T>(Args, Program.Shape.Grid, [&](const kern::Layout &Grid) {
    kern::ProgramBuffers<T> Bufs{&Program.Shape, &Grid, static_cast<const T *>(Args.Input),
                                 static_cast<T *>(Args.Output), static_cast<T *>(Args.Scratch)};
    kern::runSteps<PrimitiveTable, T, Op>(Steps, Count, Bufs, *Args.Net, Channel);
  });
  // Messages left in this rank's buffers must be read before the caller
  // gets its buffers back.
  for (uint32_t I = 0; I < Count; ++I)
    if (Steps[I].SendPeer >= 0)
      Args.Net->out(Steps[I].SendPeer, Channel).awaitReads();
}

} // namespace cclc::host
