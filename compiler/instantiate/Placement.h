//===- Placement.h - Logical ranks onto physical ranks ----------*- C++ -*-===//
//
// `remap auto` asks the compiler for the permutation the seed wrote by hand:
// logical rank l runs on physical rank Placement[l], chosen so that every
// pair of logical ranks that communicates sits on a link of the best class
// the machine offers (NVLink on an NVLink mesh). On an 8-GPU mesh whose
// GPU0-GPU1 link is broken, the butterfly then never pairs GPU0 with GPU1.
//
// The communicating pairs come from instantiating the algorithm once with the
// identity placement; which physical pairs are good comes from the LinkTable.
// Up to ExhaustiveLimit ranks the search is exhaustive (depth first with
// forward checking), so "none exists" is a proof; above it, a deterministic
// greedy placement improved by swaps. The same checks warn when an explicit
// remap (expression or table) puts a communicating pair on a slower link.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "compiler/cost/LinkTable.h"
#include "compiler/instantiate/Instantiate.h"
#include "plan/Schedule.h"
#include "compiler/target/Target.h"
#include "dsl/AST.h"
#include "plan/Diagnostics.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

namespace cclc::inst {

using sched::Schedule;
using target::Target;

/// Two ranks that exchange data (A < B), and the statement of the first step
/// that joins them.
struct CommPair {
  int32_t A = 0;
  int32_t B = 0;
  SourceLoc Loc;
};

/// Every unordered pair of physical ranks that some step of S joins, sorted.
std::vector<CommPair> communicatingPairs(const Schedule &S);

/// Whether physical ranks P and Q are joined well enough.
using LinkPredicate = std::function<bool(int32_t P, int32_t Q)>;

/// Rank counts up to this are searched exhaustively.
constexpr int32_t ExhaustiveLimit = 12;

/// A placement (Placement[logical] = physical) of NRanks ranks under which
/// every pair of logical ranks in Pairs is Good, or nullopt when the search
/// finds none. Deterministic: the first placement in the search order.
std::optional<std::vector<int32_t>> findPlacement(int32_t NRanks, const std::vector<CommPair> &Pairs,
                                                  const LinkPredicate &Good);

/// A placement that leaves few pairs of Pairs on links that are not Good:
/// greedy, then pairwise swaps while they help. Deterministic.
std::vector<int32_t> improvePlacement(int32_t NRanks, const std::vector<CommPair> &Pairs,
                                      const LinkPredicate &Good);

/// `remap auto`: instantiates Algo with the identity to learn its pairs and
/// searches a placement for T. Without a machine the identity is returned
/// with a note. After an error (reported at the remap statement, naming the
/// pairs that could not be placed and the physical pairs that lack a
/// best-class link) returns nullopt.
std::optional<std::vector<int32_t>> placeAuto(const dsl::Algorithm &Algo, const Target &T,
                                              const InstantiateOptions &Options,
                                              DiagnosticEngine &Diags);

/// An explicit remap on a machine: warns, at the remap statement, for every
/// communicating pair of S that it puts on a link of a worse class than the
/// machine's best.
void checkRemapLinks(const Schedule &S, const Target &T, const dsl::RemapStmt &Remap,
                     DiagnosticEngine &Diags);

} // namespace cclc::inst
