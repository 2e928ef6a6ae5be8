//===- RingSchedules.h - The library's rings, built directly ----*- C++ -*-===//
//
// The runtime falls back on a ring when no loaded algorithm serves a call,
// and it must do so without the compiler: these functions build, step by
// step, the schedules that `cclc compile algorithms/ring-<collective>.ccl
// --nranks N --root R` produces for a flat target (one ring, ranks in
// order, the fusion and copy-elision passes applied). A unit test compares them with the
// compiler's output for every collective, rank count and root, so the two
// cannot drift apart.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "plan/Schedule.h"

#include <cstdint>
#include <optional>

namespace cclc::plan {

/// The library's ring algorithm of Collective for NRanks ranks and Root,
/// unverified; nullopt for a collective the library has no ring for
/// (alltoall).
std::optional<sched::Schedule> ringSchedule(CollectiveKind Collective, int32_t NRanks,
                                            int32_t Root);

} // namespace cclc::plan
