//===- ScheduleText.cpp - The schedule as stable text ---------------------===//

#include "compiler/emit/ScheduleText.h"
#include "plan/Assert.h"

#include <ostream>

namespace cclc::sched {

std::string formatSlice(const Slice &S) {
  std::string Text = std::string(bufferName(S.Buffer)) + "[" + std::to_string(S.Chunk);
  if (S.Count != 1)
    Text += ".." + std::to_string(S.Chunk + S.Count);
  return Text + "]";
}

std::string formatStep(const Step &St) {
  std::string Text(opName(St.Op));
  switch (St.Op) {
  case OpKind::Send:
    Text += " " + formatSlice(St.Src) + " -> " + std::to_string(St.Peer);
    break;
  case OpKind::Recv:
  case OpKind::RecvReduce:
    Text += " " + formatSlice(St.Dst) + " <- " + std::to_string(St.Peer);
    break;
  case OpKind::Copy:
  case OpKind::Reduce:
    Text += " " + formatSlice(St.Src) + " -> " + formatSlice(St.Dst);
    break;
  case OpKind::RecvReduceSend:
  case OpKind::RecvCopySend:
    Text += " " + formatSlice(St.Dst) + " <- " + std::to_string(St.Peer) + " -> " +
            std::to_string(St.SendPeer);
    break;
  case OpKind::RecvReduceCopy:
    Text += " " + formatSlice(St.Dst) + " <- " + std::to_string(St.Peer) + " + " +
            formatSlice(St.Src);
    break;
  case OpKind::Exchange:
  case OpKind::ExchangeReduce: CCLC_UNREACHABLE("a schedule step is never an exchange");
  }
  if (!St.Primitive.empty())
    Text += " by " + St.Primitive;
  if (St.Proto != Protocol::Simple)
    Text += " [" + std::string(plan::protocolName(St.Proto)) + "]";
  if (St.WithNext)
    Text += " (with next)";
  return Text;
}

void printSchedule(const Schedule &S, std::ostream &OS) {
  OS << "schedule " << S.Algorithm << ' ' << plan::collectiveName(S.Collective)
     << " nranks=" << S.NRanks << " nchannels=" << S.NChannels
     << " chunks=" << S.ChunksPerChannel << " root=" << S.Root << " slots=" << S.BufferSlots
     << '\n';
  OS << "units input=" << S.Units.Input << " output=" << S.Units.Output
     << " scratch=" << S.Units.Scratch << '\n';
  OS << "remap";
  for (int32_t P : S.Remap)
    OS << ' ' << P;
  OS << '\n';
  for (size_t R = 0; R < S.Ranks.size(); ++R)
    for (size_t C = 0; C < S.Ranks[R].Channels.size(); ++C) {
      const std::vector<Step> &Steps = S.Ranks[R].Channels[C].Steps;
      for (size_t I = 0; I < Steps.size(); ++I)
        OS << "rank " << R << " channel " << C << " step " << I << ": " << formatStep(Steps[I])
           << "  ; line " << Steps[I].Loc.Line << '\n';
    }
}

} // namespace cclc::sched
