//===- Environment.h - Runtime settings from the environment ----*- C++ -*-===//
//
//   CCLC_TIMEOUT_MS  how long any blocking call waits for a peer (bootstrap,
//                    transport setup, every wait of a collective) before it
//                    fails; default 60000, at most MaxTimeout (a larger
//                    value is refused: deadlines past it overflow the
//                    clock).
//   CCLC_KERNEL_TIMEOUT_MS  how long one wait inside a GPU kernel lasts;
//                    default 0, no limit: a kernel waits until the host
//                    raises the abort word (a host rank's failure, a proxy
//                    losing its peer, cclcCommAbort), since a slow peer's
//                    kernel may legitimately start much later.
//   CCLC_PROOF_STEPS the most steps (over all ranks) of a plan that the
//                    runtime proves again at load; larger plans are read
//                    for the loading rank's own program. Default
//                    plan::RuntimeProofSteps; 0 never proves.
//   CCLC_DEBUG       INFO logs every algorithm choice; WARN (the default)
//                    only fallbacks to the library's ring. Failures are
//                    returned as statuses, with cclcGetLastError's message.
//
// The launcher, transport and socket settings (CCLC_TRANSPORT,
// CCLC_SOCKET_IFNAME, CCLC_ROOT_ADDR, ...) are read where they are used.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <chrono>
#include <cstdint>

namespace cclc::runtime {

/// The longest CCLC_TIMEOUT_MS, the largest int of milliseconds (24.8
/// days): far from steady_clock's overflow, and a valid poll() timeout.
constexpr std::chrono::milliseconds MaxTimeout{2147483647};

/// CCLC_TIMEOUT_MS; throws ApiError(cclcInvalidArgument) when it is
/// malformed or out of [1, MaxTimeout].
std::chrono::milliseconds timeoutFromEnvironment();

/// CCLC_KERNEL_TIMEOUT_MS, 0 for no limit; throws
/// ApiError(cclcInvalidArgument) when it is malformed or out of
/// [0, MaxTimeout].
std::chrono::milliseconds kernelTimeoutFromEnvironment();

/// CCLC_PROOF_STEPS; throws ApiError(cclcInvalidArgument) when it is
/// malformed or out of [0, plan::MaxPlanSteps].
int64_t proofStepsFromEnvironment();

/// True when CCLC_DEBUG asks for INFO messages.
bool debugInfoFromEnvironment();

} // namespace cclc::runtime
