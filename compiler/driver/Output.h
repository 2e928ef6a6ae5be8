//===- Output.h - Writing what a subcommand emits ---------------*- C++ -*-===//
//
// compile, plan-check and import-msccl all end the same way: a schedule
// written in one of the emit formats to a file or stdout.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "compiler/emit/PlanJson.h"
#include "compiler/schedule/Schedule.h"
#include "dsl/Diagnostics.h"

#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

namespace cclc::driver {

/// The --emit formats every schedule can be written in.
const std::vector<std::string> &scheduleFormats();

/// Runs Write on the file named by Path, or on stdout for "-".
bool writeOutput(const std::string &Path, DiagnosticEngine &Diags,
                 const std::function<void(std::ostream &)> &Write);

/// Writes S in Format (one of scheduleFormats()); false after a diagnostic.
bool emitSchedule(const sched::Schedule &S, const std::string &Format,
                  const emit::PlanInfo &Info, std::ostream &OS, DiagnosticEngine &Diags);

/// "cclc 0.1.0", recorded in the files cclc writes.
std::string generatorName();

} // namespace cclc::driver
