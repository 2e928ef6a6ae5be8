//===- Fallback.cpp - The library's ring algorithms, built in -------------===//

#include "runtime/api/Fallback.h"
#include "runtime/api/Status.h"

#include "compiler/passes/BuildSchedule.h"
#include "dsl/Frontend.h"

#include <memory>
#include <optional>
#include <sstream>
#include <string>

namespace cclc::runtime {

namespace {

/// The library file of each collective's ring algorithm.
std::string_view ringFile(dsl::CollectiveKind Collective) {
  switch (Collective) {
  case dsl::CollectiveKind::AllReduce: return "ring-allreduce.ccl";
  case dsl::CollectiveKind::AllGather: return "ring-allgather.ccl";
  case dsl::CollectiveKind::ReduceScatter: return "ring-reduce-scatter.ccl";
  case dsl::CollectiveKind::Broadcast: return "ring-broadcast.ccl";
  case dsl::CollectiveKind::Reduce: return "ring-reduce.ccl";
  case dsl::CollectiveKind::AllToAll: break;
  }
  return {};
}

} // namespace

sched::Schedule compileFallback(dsl::CollectiveKind Collective, int32_t NRanks, int32_t Root) {
  std::string Name(dsl::collectiveName(Collective));
  std::string_view File = ringFile(Collective);
  const EmbeddedAlgorithm *Found = nullptr;
  for (const EmbeddedAlgorithm &E : embeddedAlgorithms())
    if (!File.empty() && E.File == File)
      Found = &E;
  if (!Found)
    throw ApiError(cclcNoAlgorithm, "no loaded algorithm serves " + Name +
                                        " and the runtime has no ring algorithm to fall back "
                                        "on; load a plan for it (cclcCommLoadPlan)");

  SourceManager SM;
  std::ostringstream Log;
  DiagnosticEngine Diags(SM, Log);
  uint32_t Id = SM.addBuffer(std::string(Found->File), std::string(Found->Text));
  dsl::OperationCatalog Ops;
  std::unique_ptr<dsl::Algorithm> Algo = dsl::parseAndCheck(Id, Ops, Diags);
  passes::BuildOptions Options;
  Options.Root = Root;
  std::ostream Discard(nullptr);
  std::optional<sched::Schedule> S =
      Algo ? passes::buildSchedule(*Algo, sched::flatTarget(NRanks), Options, Discard, Diags)
           : std::nullopt;
  if (!S)
    throw ApiError(cclcNoAlgorithm, "no loaded algorithm serves " + Name + ", and the library's " +
                                        std::string(Found->File) + " does not compile for " +
                                        std::to_string(NRanks) + " ranks:\n" + Log.str() +
                                        "load a plan for this collective (cclcCommLoadPlan)");
  return *S;
}

} // namespace cclc::runtime
