//===- MessageMatch.cpp - Which receive takes which send ------------------===//

#include "plan/MessageMatch.h"
#include "plan/Limits.h"

#include <algorithm>
#include <unordered_map>

namespace cclc::plan {

MessageMatch::MessageMatch(const sched::Schedule &S) : NChannels(size_t(S.NChannels)) {
  size_t Steps = 0;
  for (const sched::RankProgram &R : S.Ranks)
    for (size_t C = 0; C < NChannels; ++C) {
      Base.push_back(Steps);
      Steps += C < R.Channels.size() ? R.Channels[C].Steps.size() : 0;
    }
  const StepRef None{-1, -1, -1};
  Receiver.assign(Steps, None);
  Sender.assign(Steps, None);
  // Per connection (channel, sender, receiver): its sends in order, then how
  // many of them receives have taken.
  // Ranks take 20 bits each, more than a plan holds (MaxRanks).
  static_assert(MaxRanks <= (1 << 20));
  auto Key = [](int32_t C, int32_t From, int32_t To) {
    return uint64_t(uint32_t(C)) << 40 | uint64_t(uint32_t(From) & 0xfffff) << 20 |
           (uint32_t(To) & 0xfffff);
  };
  struct Queue {
    std::vector<StepRef> Sends;
    size_t Taken = 0;
  };
  std::unordered_map<uint64_t, Queue> Queues;
  auto forEachStep = [&](auto Visit) {
    for (int32_t R = 0; R < int32_t(S.Ranks.size()); ++R)
      for (int32_t C = 0; C < int32_t(std::min(NChannels, S.Ranks[R].Channels.size())); ++C) {
        const std::vector<sched::Step> &Program = S.Ranks[R].Channels[C].Steps;
        for (int32_t I = 0; I < int32_t(Program.size()); ++I)
          Visit(StepRef{R, C, I}, Program[I]);
      }
  };
  forEachStep([&](StepRef At, const sched::Step &St) {
    if (sched::opSends(St.Op))
      Queues[Key(At.Channel, At.Rank, St.sendTarget())].Sends.push_back(At);
  });
  forEachStep([&](StepRef At, const sched::Step &St) {
    if (!sched::opReceives(St.Op))
      return;
    auto It = Queues.find(Key(At.Channel, St.Peer, At.Rank));
    if (It == Queues.end() || It->second.Taken == It->second.Sends.size())
      return;
    const StepRef Send = It->second.Sends[It->second.Taken++];
    Receiver[flat(Send)] = At;
    Sender[flat(At)] = Send;
  });
}

std::optional<StepRef> MessageMatch::receiverOf(StepRef Send) const {
  return partner(Receiver, flat(Send));
}

std::optional<StepRef> MessageMatch::senderOf(StepRef Recv) const {
  return partner(Sender, flat(Recv));
}

} // namespace cclc::plan
