//===- InputOutput.h - What every subcommand reads and writes ---*- C++ -*-===//
//
// Subcommands start the same way (diagnostics configured from the common
// options, one input file loaded) and compile, plan-check and import-msccl
// end the same way: a schedule written in one of the emit formats to a file
// or stdout.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Commands.h"

#include "plan/PlanJson.h"
#include "plan/Schedule.h"
#include "plan/Diagnostics.h"

#include <functional>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

namespace cclc::driver {

/// Applies --Werror and --color.
void configure(DiagnosticEngine &Diags, const CommonOptions &Common);

/// Loads Path, reporting an unreadable file as a location-less error.
std::optional<uint32_t> loadSource(SourceManager &SM, DiagnosticEngine &Diags,
                                   const std::string &Path);

/// The --emit formats every schedule can be written in.
const std::vector<std::string> &scheduleFormats();

/// Runs Write on the file named by Path, or on stdout for "-".
bool writeOutput(const std::string &Path, DiagnosticEngine &Diags,
                 const std::function<void(std::ostream &)> &Write);

/// Writes S in Format (one of scheduleFormats()); false after a diagnostic.
bool emitSchedule(const sched::Schedule &S, const std::string &Format,
                  const plan::PlanInfo &Info, std::ostream &OS, DiagnosticEngine &Diags);

/// "cclc 0.1.0", recorded in the files cclc writes.
std::string generatorName();

/// The algorithm library installed beside this executable, or else the
/// source tree's, so a build tree and any install prefix find their own.
std::string defaultAlgorithmsDir();

} // namespace cclc::driver
