//===- Main.cpp - Runs the GPU tests where there is a GPU -----------------===//
//
// The GPU tests run on the first CUDA device. Where there is none (no GPU,
// no driver) the program says so on one line and succeeds, so a test run on
// a machine without a GPU reports the tests as skipped rather than failed.
// Listing the tests needs no device. The jobs' ranks all run in this
// process, and bind loopback unless CCLC_SOCKET_IFNAME says otherwise.
//
//===----------------------------------------------------------------------===//

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>

int main(int Argc, char **Argv) {
  testing::InitGoogleTest(&Argc, Argv);
  ::setenv("CCLC_SOCKET_IFNAME", "=lo", /*overwrite=*/0);
  if (testing::GTEST_FLAG(list_tests))
    return RUN_ALL_TESTS();
  int Devices = 0;
  cudaError_t Err = cudaGetDeviceCount(&Devices);
  if (Err != cudaSuccess || Devices == 0) {
    std::printf("skipped: no CUDA device (%s)\n",
                Err != cudaSuccess ? cudaGetErrorString(Err) : "none found");
    return 0;
  }
  return RUN_ALL_TESTS();
}
