//===- ProtocolSelection.cpp - How each step's messages travel ------------===//

#include "compiler/passes/ProtocolSelection.h"

namespace cclc::passes {

std::string ProtocolResult::summary() const {
  return std::to_string(Steps) + " steps by " + std::string(plan::protocolName(Chosen));
}

bool takesProtocol(const sched::Step &St) {
  return (plan::opSends(St.Op) || plan::opReceives(St.Op)) && St.Primitive.empty();
}

ProtocolResult selectProtocol(sched::Schedule &S, sched::Protocol P) {
  ProtocolResult R;
  R.Chosen = P;
  for (sched::RankProgram &Rank : S.Ranks)
    for (sched::ChannelProgram &Channel : Rank.Channels)
      for (sched::Step &St : Channel.Steps)
        if (takesProtocol(St)) {
          St.Proto = P;
          ++R.Steps;
        }
  return R;
}

} // namespace cclc::passes
