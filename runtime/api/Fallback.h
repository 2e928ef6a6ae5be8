//===- Fallback.h - The library's ring algorithms, built in -----*- C++ -*-===//
//
// When no loaded algorithm serves a call, the runtime still runs it: it
// compiles the algorithm library's ring algorithm for the collective (whose
// text is built into the runtime, so no file has to be found at run time)
// for the communicator's rank count and the call's root, on a flat target.
// Rings work for every rank count, which is why they are the fallback; they
// are rarely the fastest, which is why falling back is reported.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "compiler/schedule/Schedule.h"

#include <cstdint>
#include <span>
#include <string_view>

namespace cclc::runtime {

/// One .ccl file of the algorithm library, built into the runtime.
struct EmbeddedAlgorithm {
  std::string_view File; ///< "ring-allreduce.ccl".
  std::string_view Text;
};

/// The library files the runtime carries (defined by a generated source).
std::span<const EmbeddedAlgorithm> embeddedAlgorithms();

/// The library's ring algorithm of Collective compiled for NRanks ranks and
/// Root, verified and optimized as `cclc compile --nranks` does. Throws
/// ApiError(cclcNoAlgorithm) with the compiler's diagnostics when the
/// library has none for the collective or it does not compile.
sched::Schedule compileFallback(dsl::CollectiveKind Collective, int32_t NRanks, int32_t Root);

} // namespace cclc::runtime
