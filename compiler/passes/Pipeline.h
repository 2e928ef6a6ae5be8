//===- Pipeline.h - The optimization passes, in order -----------*- C++ -*-===//
//
// The passes that tune a verified schedule, run in a fixed order (see
// passes() in Pipeline.cpp, which reads top to bottom as the list). Like
// LLVM's pass managers, the pipeline can print the schedule after any pass
// (`--print-after=chunking`, `--print-after=all`), skip passes
// (`--disable-pass=fusion`), verify after every pass (`--verify-each`) and
// print one statistics line per pass (`--stats`).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "plan/Schedule.h"
#include "plan/Diagnostics.h"

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

namespace cclc::passes {

struct PipelineOptions {
  /// Channels a flat algorithm is replicated on; 1 keeps it on one.
  int32_t Channels = 1;
  /// Sub-chunks per chunk; 1 leaves the chunk grid alone.
  int32_t ChunksFactor = 1;
  /// How the plan's messages travel.
  sched::Protocol Proto = sched::Protocol::Simple;
  /// Pass names after which to print the schedule; "all" prints after each.
  std::vector<std::string> PrintAfter;
  /// Pass names not to run.
  std::vector<std::string> Disabled;
  /// Runs the verifier after every pass, not only on the final schedule.
  bool VerifyEach = false;
  /// Prints "stats: PASS: ..." after every pass that ran.
  bool Stats = false;
};

/// The pass names in the order the passes run.
std::vector<std::string> passNames();

/// Runs the pipeline on S, printing schedules and statistics to Log. False,
/// with a diagnostic, when an option does not fit S or a pass's result fails
/// verification.
bool runPipeline(sched::Schedule &S, const PipelineOptions &Options, std::ostream &Log,
                 DiagnosticEngine &Diags);

} // namespace cclc::passes
