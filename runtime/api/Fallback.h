//===- Fallback.h - The library's ring algorithms, built in -----*- C++ -*-===//
//
// When no loaded algorithm serves a call, the runtime still runs it: it
// builds the algorithm library's ring algorithm for the collective through
// the plan API (plan/RingSchedules.h, the same schedule `cclc compile`
// makes of algorithms/ring-<collective>.ccl, without the compiler in the
// process) for the communicator's rank count and the call's root, and
// verifies it. Rings work for every rank count, which is why they are the
// fallback; they are rarely the fastest, which is why falling back is
// reported.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "plan/Schedule.h"

#include <cstdint>

namespace cclc::runtime {

/// The library's ring algorithm of Collective for NRanks ranks and Root,
/// verified. Throws ApiError(cclcNoAlgorithm) when the library has no ring
/// for the collective.
sched::Schedule fallbackSchedule(plan::CollectiveKind Collective, int32_t NRanks, int32_t Root);

} // namespace cclc::runtime
