//===- Interpreter.cpp - Runs a schedule with the host primitives ---------===//

#include "runtime/exec/Interpreter.h"
#include "runtime/exec/Dispatch.h"
#include "dsl/Assert.h"

#include <algorithm>
#include <utility>

namespace cclc::exec {

namespace {

using sched::BufferKind;
using sched::OpKind;
using sched::Step;

bool readsScratch(const Step &St) {
  bool ReadsSource = St.Op == OpKind::Send || St.Op == OpKind::Copy || St.Op == OpKind::Reduce;
  return ReadsSource && St.Src.Buffer == BufferKind::Scratch;
}

bool writesScratch(const Step &St) {
  return St.Op != OpKind::Send && St.Dst.Buffer == BufferKind::Scratch;
}

/// One rank's buffers in one round, as the slices the primitives take.
template <class T> class RoundBuffers {
public:
  RoundBuffers(const ScheduleShape &Shape, const host::KernelArgs &Args, const kern::Layout &Grid)
      : Shape(Shape), Grid(Grid), Input(static_cast<const T *>(Args.Input)),
        Output(static_cast<T *>(Args.Output)), Scratch(static_cast<T *>(Args.Scratch)) {}

  host::Slice<const T> source(const sched::Slice &Sl) const {
    const T *Base = Sl.Buffer == BufferKind::Input ? Input : writable(Sl.Buffer);
    return {Base, &Grid, units(Sl.Buffer), Sl.Chunk, Sl.Count};
  }
  host::Slice<T> destination(const sched::Slice &Sl) const {
    CCLC_ASSERT(Sl.Buffer != BufferKind::Input, "a verified schedule never writes its input");
    return {writable(Sl.Buffer), &Grid, units(Sl.Buffer), Sl.Chunk, Sl.Count};
  }

private:
  T *writable(BufferKind Buf) const { return Buf == BufferKind::Output ? Output : Scratch; }
  int32_t units(BufferKind Buf) const {
    return Buf == BufferKind::Input    ? Shape.InputUnits
           : Buf == BufferKind::Output ? Shape.OutputUnits
                                       : Shape.ScratchUnits;
  }

  const ScheduleShape &Shape;
  const kern::Layout &Grid;
  const T *Input;
  T *Output;
  T *Scratch;
};

/// True when step I is the send of an exchange: a send that runs together
/// with a plain or reducing receive, which the exchange primitives perform in
/// whichever order the two peers allow.
bool startsExchange(const std::vector<Step> &Steps, size_t I) {
  return Steps[I].Op == OpKind::Send && Steps[I].WithNext && I + 1 < Steps.size() &&
         (Steps[I + 1].Op == OpKind::Recv || Steps[I + 1].Op == OpKind::RecvReduce);
}

/// Runs one step that is not part of an exchange. Other WithNext groups
/// (instantiation makes none; an imported MSCCL program could) run in
/// program order: faithful when their sends come first, but a send that
/// finds its FIFO full then holds back receives the model would let run.
template <class T, class Op>
void runStep(const Step &St, const RoundBuffers<T> &Bufs, host::Links &Net, int Channel) {
  switch (St.Op) {
  case OpKind::Send:
    host::send<T, Op>(Net.out(St.Peer, Channel), Bufs.source(St.Src));
    return;
  case OpKind::Recv:
    host::recv<T, Op>(Net.in(St.Peer, Channel), Bufs.destination(St.Dst));
    return;
  case OpKind::RecvReduce:
    host::recvReduce<T, Op>(Net.in(St.Peer, Channel), Bufs.destination(St.Dst));
    return;
  case OpKind::Copy:
    host::copy<T, Op>(Bufs.source(St.Src), Bufs.destination(St.Dst));
    return;
  case OpKind::Reduce:
    host::reduce<T, Op>(Bufs.source(St.Src), Bufs.destination(St.Dst));
    return;
  case OpKind::RecvReduceSend:
    host::recvReduceSend<T, Op>(Net.in(St.Peer, Channel), Net.out(St.SendPeer, Channel),
                                Bufs.destination(St.Dst));
    return;
  case OpKind::RecvCopySend:
    host::recvCopySend<T, Op>(Net.in(St.Peer, Channel), Net.out(St.SendPeer, Channel),
                              Bufs.destination(St.Dst));
    return;
  }
  CCLC_UNREACHABLE("unknown operation");
}

template <class T, class Op>
void runChannel(const sched::Schedule &S, const ScheduleShape &Shape, const host::KernelArgs &Args,
                int Channel) {
  const std::vector<Step> &Steps = S.Ranks[Args.Rank].Channels[Channel].Steps;
  host::Links &Net = *Args.Net;
  host::forEachRound<T>(Args, Shape.Grid, [&](const kern::Layout &Grid) {
    RoundBuffers<T> Bufs(Shape, Args, Grid);
    for (size_t I = 0; I < Steps.size(); ++I) {
      if (!startsExchange(Steps, I)) {
        runStep<T, Op>(Steps[I], Bufs, Net, Channel);
        continue;
      }
      const Step &Send = Steps[I], &Receive = Steps[++I];
      host::Outbox &Out = Net.out(Send.Peer, Channel);
      host::Inbox &In = Net.in(Receive.Peer, Channel);
      if (Receive.Op == OpKind::Recv)
        host::exchange<T, Op>(Out, In, Bufs.source(Send.Src), Bufs.destination(Receive.Dst));
      else
        host::exchangeReduce<T, Op>(Out, In, Bufs.source(Send.Src), Bufs.destination(Receive.Dst));
    }
  });
}

} // namespace

ScheduleShape scheduleShape(const sched::Schedule &S) {
  ScheduleShape Shape;
  Shape.Grid.NChannels = S.NChannels;
  Shape.Grid.ChunksPerChannel = S.ChunksPerChannel;
  Shape.InputUnits = S.Units.Input;
  Shape.OutputUnits = S.Units.Output;
  bool UsesScratch = false;
  for (const sched::RankProgram &Rank : S.Ranks)
    for (const sched::ChannelProgram &Channel : Rank.Channels)
      for (const Step &St : Channel.Steps) {
        // Every message is sent once, so the sends bound every slot.
        if (sched::opSends(St.Op))
          Shape.Grid.MaxSliceChunks = std::max(Shape.Grid.MaxSliceChunks, St.sentSlice().Count);
        UsesScratch = UsesScratch || readsScratch(St) || writesScratch(St);
      }
  Shape.ScratchUnits = UsesScratch ? S.Units.Scratch : 0;
  return Shape;
}

size_t dtypeBytes(host::DType Type) {
  return withElementType(Type, []<class T>() { return sizeof(T); });
}

size_t minSlotBytes(const kern::GridShape &Grid, size_t ElemBytes) {
  size_t Align = ElemBytes >= kern::PieceAlignBytes ? 1 : kern::PieceAlignBytes / ElemBytes;
  return size_t(Grid.MaxSliceChunks) * Align * ElemBytes;
}

Interpreter::Interpreter(sched::Schedule S) : Sched(std::move(S)), Shape(scheduleShape(Sched)) {}

void Interpreter::run(host::DType Type, host::RedOp Op, const host::KernelArgs &Args,
                      int Channel) const {
  CCLC_ASSERT(Args.Rank >= 0 && Args.Rank < Sched.NRanks, "the rank is not one of the schedule's");
  CCLC_ASSERT(Channel >= 0 && Channel < Sched.NChannels,
              "the channel is not one of the schedule's");
  CCLC_ASSERT(Args.Net, "the rank has no connections");
  CCLC_ASSERT(Args.SlotBytes >= minSlotBytes(Shape.Grid, dtypeBytes(Type)),
              "a slot cannot hold the schedule's largest message");
  CCLC_ASSERT(Shape.ScratchUnits == 0 || Args.Scratch || Args.Count == 0,
              "the schedule needs scratch memory");
  withTypeAndOperator(Type, Op, [&]<class T, class O>() {
    runChannel<T, O>(Sched, Shape, Args, Channel);
  });
}

} // namespace cclc::exec
