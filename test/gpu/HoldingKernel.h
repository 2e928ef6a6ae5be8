//===- HoldingKernel.h - An application kernel that runs on -----*- C++ -*-===//
//
// A stand-in for an application's own long kernel, for tests that check
// what the runtime waits for: it holds a block of the device until the host
// raises a flag.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace cclc::gputest {

/// Enqueues on Stream a kernel that spins until *Flag (mapped memory, as the
/// device addresses it) is nonzero.
cudaError_t holdUntilRaised(const uint32_t *Flag, cudaStream_t Stream);

} // namespace cclc::gputest
