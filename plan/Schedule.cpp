//===- Schedule.cpp - The schedule IR -------------------------------------===//

#include "plan/Schedule.h"
#include "plan/Assert.h"

#include <algorithm>

namespace cclc::sched {

BufferUnits bufferUnits(CollectiveKind Kind, int32_t NRanks) {
  BufferUnits U;
  switch (Kind) {
  case CollectiveKind::AllGather: U.Output = NRanks; break;
  case CollectiveKind::ReduceScatter: U.Input = NRanks; break;
  case CollectiveKind::AllToAll: U.Input = U.Output = NRanks; break;
  default: break;
  }
  U.Scratch = std::max(U.Input, U.Output);
  return U;
}

size_t Schedule::stepCount() const {
  size_t N = 0;
  for (const RankProgram &R : Ranks)
    for (const ChannelProgram &C : R.Channels)
      N += C.Steps.size();
  return N;
}

Step rotatedStep(const Schedule &S, const Step &St, int32_t R) {
  Step Out = St;
  auto Peer = [&](int32_t &P) {
    if (P >= 0)
      P = static_cast<int32_t>((int64_t(P) + R) % S.NRanks);
  };
  Peer(Out.Peer);
  Peer(Out.SendPeer);
  auto Move = [&](Slice &X) {
    const int32_t Region = S.channelChunks(X.Buffer);
    if (X.Count == 0 || X.Count == Region)
      return;
    CCLC_ASSERT(X.Count == 1, "a rotated schedule moves single chunks only");
    const int64_t Shift = int64_t(S.Rotated->ChunkStep) * R % Region;
    const int32_t Base = X.Chunk / Region * Region;
    X.Chunk = Base + static_cast<int32_t>((X.Chunk - Base + Shift) % Region);
  };
  Move(Out.Src);
  Move(Out.Dst);
  return Out;
}

RankProgram rotatedProgram(const Schedule &S, int32_t R) {
  RankProgram Out;
  Out.LogicalRank = R;
  Out.Channels.resize(S.Ranks[0].Channels.size());
  for (size_t C = 0; C < Out.Channels.size(); ++C) {
    const std::vector<Step> &Steps = S.Ranks[0].Channels[C].Steps;
    Out.Channels[C].Steps.reserve(Steps.size());
    for (const Step &St : Steps)
      Out.Channels[C].Steps.push_back(rotatedStep(S, St, R));
  }
  return Out;
}

void expandRotation(Schedule &S) {
  if (!S.Rotated)
    return;
  S.Ranks.reserve(size_t(S.NRanks));
  for (int32_t R = 1; R < S.NRanks; ++R)
    S.Ranks.push_back(rotatedProgram(S, R));
  S.Rotated.reset();
}

} // namespace cclc::sched
