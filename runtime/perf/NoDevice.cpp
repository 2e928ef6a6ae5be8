//===- NoDevice.cpp - cclc-perf without CUDA ------------------------------===//
//
// A build without a CUDA toolkit has cclc-perf's options all the same, so
// scripts and tests see one command line; --gpu and --gpu-probe then fail
// saying why, on every rank, instead of being unknown options.
//
//===----------------------------------------------------------------------===//

#include "runtime/perf/Memory.h"

#include <stdexcept>

namespace cclc::perf {

namespace {

constexpr const char *WithoutCuda =
    "cclc-perf was built without CUDA: rebuild it where CMake finds a CUDA toolkit";

} // namespace

std::unique_ptr<Memory> makeDeviceMemory(size_t, int, int, cclcComm_t) {
  throw std::runtime_error(WithoutCuda);
}

int probeDevices(std::FILE *Out) {
  std::fprintf(Out, "%s\n", WithoutCuda);
  return 1;
}

} // namespace cclc::perf
