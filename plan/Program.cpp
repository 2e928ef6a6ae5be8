//===- Program.cpp - From schedule steps to primitive calls ---------------===//

#include "plan/Program.h"

#include "plan/Assert.h"
#include "plan/StableSends.h"

#include <algorithm>

namespace cclc::plan {

namespace {

using sched::Step;

bool touchesScratch(const Step &St) {
  return (opReadsSource(St.Op) && St.Src.Buffer == BufferKind::Scratch) ||
         (St.Op != OpKind::Send && St.Dst.Buffer == BufferKind::Scratch);
}

/// The written slice of a step that writes one.
kern::SliceRef destination(const Step &St) {
  CCLC_ASSERT(St.Dst.Buffer != BufferKind::Input, "a verified schedule never writes its input");
  return St.Dst;
}

/// The call of a step that is not part of an exchange.
kern::ProgramStep callOf(const Step &St) {
  kern::ProgramStep P;
  P.Op = St.Op;
  P.Proto = St.Proto;
  switch (St.Op) {
  case OpKind::Send:
    P.SendPeer = St.Peer;
    P.Src = St.Src;
    return P;
  case OpKind::Recv:
  case OpKind::RecvReduce:
    P.RecvPeer = St.Peer;
    P.Dst = destination(St);
    return P;
  case OpKind::Copy:
  case OpKind::Reduce:
    P.Src = St.Src;
    P.Dst = destination(St);
    return P;
  case OpKind::RecvReduceCopy:
    P.RecvPeer = St.Peer;
    P.Src = St.Src;
    P.Dst = destination(St);
    return P;
  case OpKind::RecvReduceSend:
  case OpKind::RecvCopySend:
    P.RecvPeer = St.Peer;
    P.SendPeer = St.SendPeer;
    P.Dst = destination(St);
    return P;
  case OpKind::Exchange:
  case OpKind::ExchangeReduce: break;
  }
  CCLC_UNREACHABLE("a schedule step is never an exchange; lowering makes them");
}

/// Whether Steps[I] is a send that runs together with the single step after
/// it, of operation Op.
bool sendsWith(const std::vector<Step> &Steps, size_t I, OpKind Op) {
  return Steps[I].Op == OpKind::Send && Steps[I].WithNext && I + 1 < Steps.size() &&
         !Steps[I + 1].WithNext && Steps[I + 1].Op == Op;
}

} // namespace

bool startsExchange(const std::vector<Step> &Steps, size_t I) {
  return sendsWith(Steps, I, OpKind::Recv) || sendsWith(Steps, I, OpKind::RecvReduce);
}

bool sendsWithReceive(const std::vector<Step> &Steps, size_t I) {
  return startsExchange(Steps, I) || sendsWith(Steps, I, OpKind::RecvReduceCopy);
}

std::vector<LoweredStep> lowerChannel(const std::vector<Step> &Steps) {
  std::vector<LoweredStep> Calls;
  Calls.reserve(Steps.size());
  for (size_t I = 0; I < Steps.size(); ++I) {
    CCLC_ASSERT(!Steps[I].WithNext || sendsWithReceive(Steps, I),
                "a verified schedule joins only a send and a receive");
    if (!startsExchange(Steps, I)) {
      Calls.push_back({callOf(Steps[I]), Steps[I].Primitive, Steps[I].Loc, int32_t(I)});
      continue;
    }
    const int32_t Index = int32_t(I);
    const Step &Send = Steps[I], &Receive = Steps[++I];
    kern::ProgramStep X;
    X.Op = Receive.Op == OpKind::Recv ? OpKind::Exchange : OpKind::ExchangeReduce;
    X.Proto = Send.Proto;
    X.SendPeer = Send.Peer;
    X.Src = Send.Src;
    X.RecvPeer = Receive.Peer;
    X.Dst = destination(Receive);
    Calls.push_back({X, Send.Primitive, Send.Loc, Index});
  }
  return Calls;
}

kern::ProgramShape scheduleShape(const sched::Schedule &S) {
  kern::ProgramShape Shape;
  Shape.Grid.NChannels = S.NChannels;
  Shape.Grid.ChunksPerChannel = S.ChunksPerChannel;
  Shape.InputUnits = S.Units.Input;
  Shape.OutputUnits = S.Units.Output;
  for (const sched::RankProgram &Rank : S.Ranks)
    for (const sched::ChannelProgram &Channel : Rank.Channels)
      for (const Step &St : Channel.Steps)
        widenShape(Shape, St, S);
  return Shape;
}

void widenShape(kern::ProgramShape &Shape, const Step &St, const sched::Schedule &S) {
  // Every message is sent once, so the sends bound every slot.
  if (opSends(St.Op))
    Shape.Grid.MaxSliceChunks = std::max(Shape.Grid.MaxSliceChunks, St.sentSlice().Count);
  if (touchesScratch(St))
    Shape.ScratchUnits = S.Units.Scratch;
}

LinkSet linksOf(const sched::Schedule &S) {
  LinkSet Links;
  for (int32_t Rank = 0; Rank < S.NRanks; ++Rank) {
    const sched::RankProgram &Program = S.Ranks[size_t(Rank)];
    for (size_t Channel = 0; Channel < Program.Channels.size(); ++Channel)
      for (const Step &St : Program.Channels[Channel].Steps)
        addLinks(Links, Rank, int(Channel), St);
  }
  return Links;
}

void addLinks(LinkSet &Links, int Rank, int Channel, const Step &St) {
  if (opSends(St.Op))
    Links.emplace(Rank, St.sendTarget(), Channel);
  if (opReceives(St.Op))
    Links.emplace(St.Peer, Rank, Channel);
}

EncodedProgram encodeProgram(const sched::Schedule &S, const kern::ProgramShape &Shape, int Rank,
                             const MessageMatch &Match) {
  CCLC_ASSERT(Rank >= 0 && Rank < S.NRanks, "the rank is not one of the schedule's");
  EncodedProgram P;
  P.Shape = Shape;
  const std::vector<sched::ChannelProgram> &Channels = S.Ranks[size_t(Rank)].Channels;
  for (size_t Channel = 0; Channel < Channels.size(); ++Channel) {
    P.ChannelBegin.push_back(uint32_t(P.Steps.size()));
    std::vector<LoweredStep> Calls = lowerChannel(Channels[Channel].Steps);
    markStableSends(Calls, Rank, int(Channel), Match);
    for (const LoweredStep &L : Calls)
      P.Steps.push_back(L.Call);
  }
  P.ChannelBegin.push_back(uint32_t(P.Steps.size()));
  return P;
}

} // namespace cclc::plan
