//===- PlanJson.h - The plan file the runtime loads -------------*- C++ -*-===//
//
// A plan is a schedule written as JSON (format "cclc-plan", version 2 or 3): the
// runtime's plan interpreter loads it, so the reader trusts nothing. Every
// field is checked for presence, type and range (ranks below nranks, slices
// inside their buffer's chunk grid, known operation names, a remap that is a
// permutation) and a failure names the field's path, e.g.
//
//   plan.json:57:18: error: ranks[3].channels[0].steps[7].peer: 9 is not a
//   rank (plan has 8 ranks)
//
// A run of steps that differ only by a constant stride in their peers and
// chunks is written once, with "repeat" and "stride" (version 2), so that a
// ring over n ranks takes O(n) text rather than O(n^2). A reader can expand
// every rank's program, or one rank's alone: it then still reads every rank
// as written, which gives what all ranks must agree on (the message streams
// and the largest message), in time linear in the file and memory linear in
// that rank's steps. Version 1 plans, where every step is written out, are
// read as well.
//
// A rotated schedule (sched::Rotation: a ring, instantiated at rank 0 alone)
// is written as version 3: rank 0's program and a "rotation", from which a
// reader makes any rank's program, so that the plan and the reading of one
// rank take rank 0's steps, whatever the number of ranks. Other schedules
// are written as version 2, which readers of version 2 read.
//
// The format is documented field by field in docs/formats.md.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "plan/JsonReader.h"
#include "plan/Limits.h"
#include "plan/Program.h"
#include "plan/Schedule.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>

namespace cclc::plan {

inline constexpr const char *PlanFormatName = "cclc-plan";
/// The newest version, which rotated plans are written in.
inline constexpr int PlanFormatVersion = 3;
/// The version plans without a rotation are written in.
inline constexpr int RolledPlanFormatVersion = 2;
/// The oldest version this reader reads: version 1 is version 2 without
/// rolled steps.
inline constexpr int OldestPlanFormatVersion = 1;

/// What a plan says besides the schedule itself.
struct PlanInfo {
  std::string Source;    ///< The .ccl file the schedule was compiled from (its name).
  /// That file's text, carried in the plan so that diagnostics about its
  /// steps can quote the lines they came from; empty: quote nothing. A plan
  /// never makes its reader open the file it names.
  std::string SourceText;
  std::string Target;    ///< "8 ranks on mesh8.xml x 2 nodes".
  std::string Generator; ///< "cclc 0.1.0".
  /// The message sizes the plan is meant for: [MinBytes, MaxBytes], no upper
  /// bound when MaxBytes is empty. The cost model narrows the range.
  uint64_t MinBytes = 0;
  std::optional<uint64_t> MaxBytes;
  /// The calls the plan was chosen for, where the fastest plan depends on
  /// them as well as on the size: in place or not ("in_place"), and on
  /// buffers the ranks of a host map (cclcMemAlloc) or not
  /// ("mapped_buffers"). Unset serves either; the runtime prefers a plan
  /// chosen for the call's kind.
  std::optional<bool> InPlace;
  std::optional<bool> MappedBuffers;
};

/// How much of a plan a reader expands.
struct ReadOptions {
  /// The rank whose program is expanded when the whole plan expands to more
  /// than FullSteps steps (none, when the plan has no such rank); nullopt:
  /// every rank is expanded, and a plan of more steps is refused.
  std::optional<int32_t> Rank;
  int64_t FullSteps = MaxPlanSteps;
  /// Hold a rotated plan as written, rank 0's program and the rotation
  /// (sched::Rotation), complete whatever its ranks expand to: for readers
  /// that take rotated schedules (the verifier, the plan writer).
  bool KeepRotation = false;
};

struct Plan {
  /// Every rank's program when Complete; else Rank's alone, the others
  /// holding their channels and no steps.
  sched::Schedule Sched;
  PlanInfo Info;
  bool Complete = true;
  /// What every rank's steps together need, found without expanding them:
  /// the message streams, and the grid shape (largest message, scratch).
  LinkSet Links;
  kern::ProgramShape Shape;
  int64_t Steps = 0; ///< Every rank's steps, expanded.
};

/// S as a complete plan, its links and shape found from its steps.
Plan wholePlan(sched::Schedule S, PlanInfo Info = {});

nlohmann::json scheduleToPlan(const sched::Schedule &S, const PlanInfo &Info);

/// Checks Json and rebuilds the schedule; nullopt after reporting the first
/// problem. With Where, errors point at the field's line and column in the
/// file; without, they carry no location. Sizes and counts are held to the
/// bounds of plan/Limits.h. Step locations name the plan's "source" at the
/// recorded line, quoting its "source_text" when the plan carries it.
std::optional<Plan> planToSchedule(const nlohmann::json &Json, SourceManager &SM,
                                   DiagnosticEngine &Diags, const LocatedJson *Where = nullptr,
                                   const ReadOptions &Options = {});

/// The file id that step lines recorded for source Name refer to: a buffer
/// named Name holding Text, the source text the plan carries (empty when it
/// carries none: diagnostics then name file, line and column and quote
/// nothing). The file Name itself is never opened: a plan comes from anywhere
/// and could name a FIFO, a device or a secret.
uint32_t recordedSourceFile(SourceManager &SM, const std::string &Name,
                            const std::string &Text = "");

/// Parses and checks plan file FileId, refusing JSON nested deeper than a
/// plan is (plan::MaxJsonDepth) while it parses.
std::optional<Plan> readPlanFile(uint32_t FileId, SourceManager &SM, DiagnosticEngine &Diags,
                                 const ReadOptions &Options = {});

} // namespace cclc::plan
