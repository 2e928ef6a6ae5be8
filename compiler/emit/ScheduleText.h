//===- ScheduleText.h - The schedule as stable text -------------*- C++ -*-===//
//
// `cclc compile --emit=schedule`: a header describing the instance, then one
// line per step, "rank R channel C step N: ...", so that FileCheck tests can
// match any step of any rank on its own line.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "plan/Schedule.h"

#include <iosfwd>
#include <string>

namespace cclc::sched {

/// "output[3]" for one chunk, "output[0..4]" (half-open) for several.
std::string formatSlice(const Slice &S);
/// The step's text after "step N: ", e.g. "recv_reduce output[3] <- 2", or
/// "copy output[0] -> scratch[0] by copy_streaming" when a primitive other
/// than the effect's own performs it.
std::string formatStep(const Step &St);
void printSchedule(const Schedule &S, std::ostream &OS);

} // namespace cclc::sched
