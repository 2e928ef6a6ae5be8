//===- MessageMatch.cpp - Which receive takes which send ------------------===//

#include "plan/MessageMatch.h"

#include <vector>

namespace cclc::plan {

MessageMatch::MessageMatch(const sched::Schedule &S) {
  // (channel, sender, receiver) -> its sends and its receives, in order.
  using Connection = std::tuple<int32_t, int32_t, int32_t>;
  std::map<Connection, std::pair<std::vector<StepRef>, std::vector<StepRef>>> Queues;
  for (int32_t R = 0; R < int32_t(S.Ranks.size()); ++R)
    for (int32_t C = 0; C < int32_t(S.Ranks[R].Channels.size()); ++C) {
      const std::vector<sched::Step> &Steps = S.Ranks[R].Channels[C].Steps;
      for (int32_t I = 0; I < int32_t(Steps.size()); ++I) {
        const sched::Step &St = Steps[I];
        if (sched::opReceives(St.Op))
          Queues[{C, St.Peer, R}].second.push_back({R, C, I});
        if (sched::opSends(St.Op))
          Queues[{C, R, St.sendTarget()}].first.push_back({R, C, I});
      }
    }
  for (const auto &[Conn, Ends] : Queues)
    for (size_t K = 0; K < Ends.first.size() && K < Ends.second.size(); ++K) {
      Receiver[Ends.first[K]] = Ends.second[K];
      Sender[Ends.second[K]] = Ends.first[K];
    }
}

std::optional<StepRef> MessageMatch::receiverOf(StepRef Send) const {
  auto It = Receiver.find(Send);
  return It == Receiver.end() ? std::nullopt : std::optional<StepRef>(It->second);
}

std::optional<StepRef> MessageMatch::senderOf(StepRef Recv) const {
  auto It = Sender.find(Recv);
  return It == Sender.end() ? std::nullopt : std::optional<StepRef>(It->second);
}

} // namespace cclc::plan
