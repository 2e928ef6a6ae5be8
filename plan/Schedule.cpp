//===- Schedule.cpp - The schedule IR -------------------------------------===//

#include "plan/Schedule.h"

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

} // namespace cclc::sched
