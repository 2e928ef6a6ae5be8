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

/// Runs Write on the file named by Path, or on stdout for "-", then flushes
/// it: false after an error naming the file and why (a full disk, a closed
/// pipe), so that no command reports success for output that was lost.
bool writeOutput(const std::string &Path, DiagnosticEngine &Diags,
                 const std::function<void(std::ostream &)> &Write);

/// Writes Text to file Path, checked as writeOutput checks.
bool writeFile(const std::string &Path, const std::string &Text, DiagnosticEngine &Diags);

/// Flushes std::cout and stdout; false, with the reason in Error, when
/// anything written to them since the last call was lost. The error state is
/// cleared, so each loss is reported once.
bool flushStdout(std::string &Error);

/// Writes S in Format (one of scheduleFormats()); false after a diagnostic.
bool emitSchedule(const sched::Schedule &S, const std::string &Format,
                  const plan::PlanInfo &Info, std::ostream &OS, DiagnosticEngine &Diags);

/// "cclc 0.1.0", recorded in the files cclc writes.
std::string generatorName();

/// The algorithm library installed beside this executable, or else the
/// source tree's, so a build tree and any install prefix find their own.
std::string defaultAlgorithmsDir();

} // namespace cclc::driver
