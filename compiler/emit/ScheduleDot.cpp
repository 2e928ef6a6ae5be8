//===- ScheduleDot.cpp - The schedule as a Graphviz graph -----------------===//

#include "compiler/emit/ScheduleDot.h"
#include "plan/MessageMatch.h"
#include "compiler/emit/ScheduleText.h"

#include <ostream>

namespace cclc::emit {

namespace {

std::string nodeName(plan::StepRef Ref) {
  return "r" + std::to_string(Ref.Rank) + "c" + std::to_string(Ref.Channel) + "s" +
         std::to_string(Ref.Index);
}

/// Escapes a label for a double-quoted dot string.
std::string quote(const std::string &Text) {
  std::string Out = "\"";
  for (char C : Text) {
    if (C == '"' || C == '\\')
      Out += '\\';
    Out += C;
  }
  return Out + "\"";
}

} // namespace

void printScheduleDot(const sched::Schedule &S, std::ostream &OS) {
  OS << "digraph " << quote(S.Algorithm) << " {\n"
     << "  label=" << quote(S.Algorithm + ": " + std::string(plan::collectiveName(S.Collective)) +
                            " on " + std::to_string(S.NRanks) + " ranks, " +
                            std::to_string(S.NChannels) + " channel(s)")
     << ";\n  labelloc=t;\n  node [shape=box, fontsize=10];\n  edge [fontsize=9];\n";
  for (int32_t R = 0; R < int32_t(S.Ranks.size()); ++R) {
    OS << "  subgraph cluster_rank" << R << " {\n    label="
       << quote("rank " + std::to_string(R) + " (logical " +
                std::to_string(S.Ranks[R].LogicalRank) + ")")
       << ";\n";
    for (int32_t C = 0; C < int32_t(S.Ranks[R].Channels.size()); ++C) {
      const std::vector<sched::Step> &Steps = S.Ranks[R].Channels[C].Steps;
      for (int32_t I = 0; I < int32_t(Steps.size()); ++I)
        OS << "    " << nodeName({R, C, I}) << " [label="
           << quote("c" + std::to_string(C) + " s" + std::to_string(I) + ": " +
                    sched::formatStep(Steps[I]))
           << "];\n";
      for (int32_t I = 0; I + 1 < int32_t(Steps.size()); ++I)
        OS << "    " << nodeName({R, C, I}) << " -> " << nodeName({R, C, I + 1})
           << " [style=dashed, color=gray];\n";
    }
    OS << "  }\n";
  }
  plan::MessageMatch Match(S);
  for (int32_t R = 0; R < int32_t(S.Ranks.size()); ++R)
    for (int32_t C = 0; C < int32_t(S.Ranks[R].Channels.size()); ++C) {
      const std::vector<sched::Step> &Steps = S.Ranks[R].Channels[C].Steps;
      for (int32_t I = 0; I < int32_t(Steps.size()); ++I)
        if (sched::opSends(Steps[I].Op))
          if (std::optional<plan::StepRef> To = Match.receiverOf({R, C, I}))
            OS << "  " << nodeName({R, C, I}) << " -> " << nodeName(*To)
               << " [label=" << quote(sched::formatSlice(Steps[I].sentSlice())) << "];\n";
    }
  OS << "}\n";
}

} // namespace cclc::emit
