//===- HoldingKernel.cu - An application kernel that runs on --------------===//

#include "HoldingKernel.h"

namespace cclc::gputest {

namespace {

__global__ void spinUntilRaised(const volatile uint32_t *Flag) {
  while (!*Flag) {
  }
}

} // namespace

cudaError_t holdUntilRaised(const uint32_t *Flag, cudaStream_t Stream) {
  spinUntilRaised<<<1, 1, 0, Stream>>>(Flag);
  return cudaGetLastError();
}

} // namespace cclc::gputest
