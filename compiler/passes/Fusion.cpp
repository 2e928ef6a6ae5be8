//===- Fusion.cpp - Fused receive-and-forward steps -----------------------===//

#include "compiler/passes/Fusion.h"

#include <vector>

namespace cclc::passes {

using sched::OpKind;
using sched::Step;

std::string FusionResult::summary() const {
  return std::to_string(RecvReduceSend) + " recv_reduce_send, " + std::to_string(RecvCopySend) +
         " recv_copy_send";
}

namespace {

/// True when St runs alone: it is not half of an exchange.
bool runsAlone(const std::vector<Step> &Steps, size_t I) {
  return !Steps[I].WithNext && (I == 0 || !Steps[I - 1].WithNext);
}

/// The position of the send that the receive at I can absorb, or I when none.
size_t forwardingSend(const std::vector<Step> &Steps, size_t I) {
  const sched::Slice &Data = Steps[I].Dst;
  for (size_t K = I + 1; K < Steps.size(); ++K) {
    const Step &Next = Steps[K];
    if (Next.Op == OpKind::Send)
      return Next.Src == Data && runsAlone(Steps, K) && Next.Primitive.empty() ? K : I;
    bool Local = Next.Op == OpKind::Copy || Next.Op == OpKind::Reduce;
    if (!Local || Next.Dst.overlaps(Data))
      return I;
  }
  return I;
}

void fuseProgram(std::vector<Step> &Steps, FusionResult &Result) {
  std::vector<bool> Absorbed(Steps.size(), false);
  for (size_t I = 0; I < Steps.size(); ++I) {
    Step &St = Steps[I];
    // A step done by a primitive the algorithm chose stays as it is: fusing
    // would replace that primitive with the fused form's default one.
    if ((St.Op != OpKind::Recv && St.Op != OpKind::RecvReduce) || !runsAlone(Steps, I) ||
        !St.Primitive.empty())
      continue;
    size_t Send = forwardingSend(Steps, I);
    if (Send == I)
      continue;
    bool Reduces = St.Op == OpKind::RecvReduce;
    St.Op = Reduces ? OpKind::RecvReduceSend : OpKind::RecvCopySend;
    St.SendPeer = Steps[Send].Peer;
    ++(Reduces ? Result.RecvReduceSend : Result.RecvCopySend);
    Absorbed[Send] = true;
  }
  size_t Kept = 0;
  for (size_t I = 0; I < Steps.size(); ++I)
    if (!Absorbed[I])
      Steps[Kept++] = Steps[I];
  Steps.resize(Kept);
}

} // namespace

FusionResult fuseSteps(sched::Schedule &S) {
  FusionResult Result;
  for (sched::RankProgram &R : S.Ranks)
    for (sched::ChannelProgram &C : R.Channels)
      fuseProgram(C.Steps, Result);
  return Result;
}

} // namespace cclc::passes
