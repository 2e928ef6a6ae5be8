//===- Trace.h - One call's steps, resolved for its buffers -----*- C++ -*-===//
//
// A program makes the same small call over and over, and the plan
// interpreter works out the same things on every one: the rounds, each
// step's slices of the call's buffers, and its connections, which the
// runtime looks up by peer. A trace is the interpreter's walk of one
// channel done once for one call's arguments: it records the primitive each
// step calls with its operands resolved, and a repeat of the call runs the
// recorded primitives in order, as the interpreter would have called them.
//
// Recording runs common/Program.h's step loop with a table (Recorder) whose
// primitives append to the trace instead of moving data, so the trace takes
// the same choices as the loop (which table, which send) by construction.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "common/Program.h"
#include "host/Interpreter.h"

#include <algorithm>
#include <deque>
#include <memory>
#include <vector>

namespace cclc::host {

/// A recorded call of one channel, to be run again on the same buffers.
class Trace {
public:
  virtual ~Trace() = default;
  /// Runs the recorded primitives; throws CommError as the interpreter does.
  virtual void run() const = 0;
};

/// The trace of a channel on elements of T reduced with Op.
template <class T, class Op> class TypedTrace final : public Trace {
public:
  /// One primitive call: the primitive, and its operands (those it does
  /// not take stay empty).
  struct Call {
    void (*Run)(const Call &);
    Outbox *Out = nullptr;
    Inbox *In = nullptr;
    kern::Slice<const T> Src;
    kern::Slice<T> Dst;
  };

  /// Records channel Channel of Program for Args, which must be the call's
  /// as it will be repeated.
  TypedTrace(const KernelArgs &Args, const kern::ProgramView &Program, int Channel);

  void run() const override {
    for (const Call &C : Calls)
      C.Run(C);
    // As interpretChannel does: the caller gets its buffers back only once
    // messages left in them are read.
    for (Outbox *Out : Sends)
      Out->awaitReads();
  }

  /// Appends a call of the primitive Run.
  void add(void (*Run)(const Call &), Outbox *Out, Inbox *In, kern::Slice<const T> Src,
           kern::Slice<T> Dst) {
    Calls.push_back({Run, Out, In, Src, Dst});
  }

private:
  /// The rounds' layouts, which the recorded slices point into: a deque, so
  /// that they stay put as rounds are added.
  std::deque<kern::Layout> Rounds;
  std::vector<Call> Calls;
  /// Every connection the channel sends on, once each.
  std::vector<Outbox *> Sends;
};

/// The primitive table that records: each primitive appends the host
/// primitive of the same name, with its operands, to the trace being
/// recorded on this thread.
template <class T, class Op> struct Recorder {
  using Traced = TypedTrace<T, Op>;
  using Call = typename Traced::Call;
  template <kern::Protocol P> using Lines = Recorder;
  static constexpr bool ReadsInPlace = PrimitiveTable::ReadsInPlace;
  static inline thread_local Traced *Recording = nullptr;

  template <class, class> static void send(Outbox &Out, kern::Slice<const T> Src) {
    Recording->add([](const Call &C) { PrimitiveTable::send<T, Op>(*C.Out, C.Src); }, &Out,
                   nullptr, Src, {});
  }
  template <class, class>
  static void sendBeforeReceive(Outbox &Out, kern::Slice<const T> Src, Inbox &In,
                                kern::Slice<T> Dst) {
    Recording->add(
        [](const Call &C) {
          PrimitiveTable::sendBeforeReceive<T, Op>(*C.Out, C.Src, *C.In, C.Dst);
        },
        &Out, &In, Src, Dst);
  }
  template <class, class> static void recv(Inbox &In, kern::Slice<T> Dst) {
    Recording->add([](const Call &C) { PrimitiveTable::recv<T, Op>(*C.In, C.Dst); }, nullptr,
                   &In, {}, Dst);
  }
  template <class, class> static void recvReduce(Inbox &In, kern::Slice<T> Acc) {
    Recording->add([](const Call &C) { PrimitiveTable::recvReduce<T, Op>(*C.In, C.Dst); },
                   nullptr, &In, {}, Acc);
  }
  template <class, class>
  static void recvReduceCopy(Inbox &In, kern::Slice<const T> Src, kern::Slice<T> Dst) {
    Recording->add(
        [](const Call &C) { PrimitiveTable::recvReduceCopy<T, Op>(*C.In, C.Src, C.Dst); },
        nullptr, &In, Src, Dst);
  }
  template <class, class> static void copy(kern::Slice<const T> Src, kern::Slice<T> Dst) {
    Recording->add([](const Call &C) { PrimitiveTable::copy<T, Op>(C.Src, C.Dst); }, nullptr,
                   nullptr, Src, Dst);
  }
  template <class, class> static void reduce(kern::Slice<const T> Src, kern::Slice<T> Acc) {
    Recording->add([](const Call &C) { PrimitiveTable::reduce<T, Op>(C.Src, C.Dst); }, nullptr,
                   nullptr, Src, Acc);
  }
  template <class, class>
  static void recvReduceSend(Inbox &In, Outbox &Out, kern::Slice<T> Acc) {
    Recording->add(
        [](const Call &C) { PrimitiveTable::recvReduceSend<T, Op>(*C.In, *C.Out, C.Dst); }, &Out,
        &In, {}, Acc);
  }
  template <class, class> static void recvCopySend(Inbox &In, Outbox &Out, kern::Slice<T> Dst) {
    Recording->add(
        [](const Call &C) { PrimitiveTable::recvCopySend<T, Op>(*C.In, *C.Out, C.Dst); }, &Out,
        &In, {}, Dst);
  }
  template <class, class>
  static void exchange(Outbox &Out, Inbox &In, kern::Slice<const T> Src, kern::Slice<T> Dst) {
    Recording->add(
        [](const Call &C) { PrimitiveTable::exchange<T, Op>(*C.Out, *C.In, C.Src, C.Dst); }, &Out,
        &In, Src, Dst);
  }
  template <class, class>
  static void exchangeReduce(Outbox &Out, Inbox &In, kern::Slice<const T> Src,
                             kern::Slice<T> Acc) {
    Recording->add(
        [](const Call &C) {
          PrimitiveTable::exchangeReduce<T, Op>(*C.Out, *C.In, C.Src, C.Dst);
        },
        &Out, &In, Src, Acc);
  }
};

template <class T, class Op>
TypedTrace<T, Op>::TypedTrace(const KernelArgs &Args, const kern::ProgramView &Program,
                              int Channel) {
  const kern::ProgramStep *Steps = Program.Steps + Program.ChannelBegin[Channel];
  uint32_t Count = Program.ChannelBegin[Channel + 1] - Program.ChannelBegin[Channel];
  using Rec = Recorder<T, Op>;
  struct Recording {
    Recording(TypedTrace *Trace) { Rec::Recording = Trace; }
    ~Recording() { Rec::Recording = nullptr; }
  } During(this);
  forEachRound<T>(Args, Program.Shape.Grid, [&](const kern::Layout &Grid) {
    const kern::Layout &Kept = Rounds.emplace_back(Grid);
    kern::ProgramBuffers<T> Bufs{&Program.Shape, &Kept, static_cast<const T *>(Args.Input),
                                 static_cast<T *>(Args.Output), static_cast<T *>(Args.Scratch)};
    kern::runSteps<Rec, T, Op>(Steps, Count, Bufs, *Args.Net, Channel);
  });
  for (uint32_t I = 0; I < Count; ++I)
    if (Steps[I].SendPeer >= 0)
      if (Outbox *Out = &Args.Net->out(Steps[I].SendPeer, Channel);
          std::find(Sends.begin(), Sends.end(), Out) == Sends.end())
        Sends.push_back(Out);
}

} // namespace cclc::host
