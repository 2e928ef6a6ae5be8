//===- NoGpu.cpp - The GPU interface of a build without CUDA --------------===//
//
// A runtime built without a CUDA toolkit runs collectives on the host only.
// Whatever would need the GPU is refused with a message saying so, and the
// communicator goes on serving host calls.
//
//===----------------------------------------------------------------------===//

#include "runtime/api/Gpu.h"

namespace cclc::runtime {

namespace {

[[noreturn]] void refuse(const std::string &What) {
  throw ApiError(cclcInvalidUsage, What +
                                       ", but this cclc runtime was built without CUDA; rebuild "
                                       "cclc where a CUDA toolkit is found, or run on the host "
                                       "(host buffers and a NULL stream)");
}

} // namespace

std::unique_ptr<GpuContext> createGpuContext(net::Bootstrap &, const std::string &Call,
                                             MismatchWords) {
  refuse(Call + " asks for the GPU (a stream, or device buffers)");
}

std::vector<KernelEntry> cudaKernelEntries(const void *, size_t) {
  refuse("cclcCommRegisterCudaKernels registers CUDA kernels");
}

} // namespace cclc::runtime
