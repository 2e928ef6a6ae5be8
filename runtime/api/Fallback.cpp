//===- Fallback.cpp - The library's ring algorithms, built in -------------===//

#include "runtime/api/Fallback.h"
#include "runtime/api/Status.h"

#include "plan/RingSchedules.h"
#include "plan/Verifier.h"

#include <optional>
#include <sstream>
#include <string>

namespace cclc::runtime {

sched::Schedule fallbackSchedule(plan::CollectiveKind Collective, int32_t NRanks, int32_t Root) {
  std::string Name(plan::collectiveName(Collective));
  std::optional<sched::Schedule> S = plan::ringSchedule(Collective, NRanks, Root);
  if (!S)
    throw ApiError(cclcNoAlgorithm, "no loaded algorithm serves " + Name +
                                        " and the runtime has no ring algorithm to fall back "
                                        "on; load a plan for it (cclcCommLoadPlan)");
  SourceManager SM;
  std::ostringstream Log;
  DiagnosticEngine Diags(SM, Log);
  if (!verify::verifySchedule(*S, Diags))
    throw ApiError(cclcInternalError, "the built-in ring " + S->Algorithm +
                                          " fails verification for " + std::to_string(NRanks) +
                                          " ranks:\n" + Log.str());
  return std::move(*S);
}

} // namespace cclc::runtime
