//===- Program.cpp - Encodes a schedule for the plan interpreters ---------===//

#include "runtime/exec/Program.h"

#include "dsl/Assert.h"

#include <algorithm>

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

kern::SliceRef sliceRef(const sched::Slice &S) {
  kern::BufferId Buffer = S.Buffer == BufferKind::Input    ? kern::BufferId::Input
                          : S.Buffer == BufferKind::Output ? kern::BufferId::Output
                                                           : kern::BufferId::Scratch;
  return {Buffer, S.Chunk, S.Count};
}

/// The written slice of a step that writes one.
kern::SliceRef destination(const Step &St) {
  CCLC_ASSERT(St.Dst.Buffer != BufferKind::Input, "a verified schedule never writes its input");
  return sliceRef(St.Dst);
}

/// True when step I is the send of an exchange: a send that runs together
/// with a plain or reducing receive.
bool startsExchange(const std::vector<Step> &Steps, size_t I) {
  return Steps[I].Op == OpKind::Send && Steps[I].WithNext && I + 1 < Steps.size() &&
         (Steps[I + 1].Op == OpKind::Recv || Steps[I + 1].Op == OpKind::RecvReduce);
}

/// Encodes one step that is not part of an exchange. Other WithNext groups
/// (instantiation makes none; an imported MSCCL program could) run in
/// program order: faithful when their sends come first, but a send that
/// finds its FIFO full then holds back receives the model would let run.
kern::ProgramStep encodeStep(const Step &St) {
  kern::ProgramStep P;
  switch (St.Op) {
  case OpKind::Send:
    P.Op = kern::ProgramOp::Send;
    P.SendPeer = St.Peer;
    P.Src = sliceRef(St.Src);
    return P;
  case OpKind::Recv:
  case OpKind::RecvReduce:
    P.Op = St.Op == OpKind::Recv ? kern::ProgramOp::Recv : kern::ProgramOp::RecvReduce;
    P.RecvPeer = St.Peer;
    P.Dst = destination(St);
    return P;
  case OpKind::Copy:
  case OpKind::Reduce:
    P.Op = St.Op == OpKind::Copy ? kern::ProgramOp::Copy : kern::ProgramOp::Reduce;
    P.Src = sliceRef(St.Src);
    P.Dst = destination(St);
    return P;
  case OpKind::RecvReduceSend:
  case OpKind::RecvCopySend:
    P.Op = St.Op == OpKind::RecvReduceSend ? kern::ProgramOp::RecvReduceSend
                                           : kern::ProgramOp::RecvCopySend;
    P.RecvPeer = St.Peer;
    P.SendPeer = St.SendPeer;
    P.Dst = destination(St);
    return P;
  }
  CCLC_UNREACHABLE("unknown operation");
}

} // namespace

kern::ProgramShape scheduleShape(const sched::Schedule &S) {
  kern::ProgramShape Shape;
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

EncodedProgram encodeProgram(const sched::Schedule &S, const kern::ProgramShape &Shape, int Rank) {
  CCLC_ASSERT(Rank >= 0 && Rank < S.NRanks, "the rank is not one of the schedule's");
  EncodedProgram P;
  P.Shape = Shape;
  for (const sched::ChannelProgram &Channel : S.Ranks[size_t(Rank)].Channels) {
    P.ChannelBegin.push_back(uint32_t(P.Steps.size()));
    const std::vector<Step> &Steps = Channel.Steps;
    for (size_t I = 0; I < Steps.size(); ++I) {
      if (!startsExchange(Steps, I)) {
        P.Steps.push_back(encodeStep(Steps[I]));
        continue;
      }
      const Step &Send = Steps[I], &Receive = Steps[++I];
      kern::ProgramStep &X = P.Steps.emplace_back();
      X.Op = Receive.Op == OpKind::Recv ? kern::ProgramOp::Exchange
                                        : kern::ProgramOp::ExchangeReduce;
      X.SendPeer = Send.Peer;
      X.Src = sliceRef(Send.Src);
      X.RecvPeer = Receive.Peer;
      X.Dst = destination(Receive);
    }
  }
  P.ChannelBegin.push_back(uint32_t(P.Steps.size()));
  return P;
}

} // namespace cclc::exec
