//===- DeviceCollectives.h - Checked collectives, device memory -*- C++ -*-===//
//
// The GPU tests make the calls cclc-perf and the runtime's host tests make
// (runtime/perf/Calls.h: any collective, out of place or in place, on inputs
// whose results every rank knows), with the buffers in device memory and
// each call enqueued on its rank's stream. A call returns once enqueued, so
// its output is read only after the stream is done, and trusted only once
// the communicator says that no kernel has failed since.
//
// Every job runs through runGpuJob, in a test of a GpuJobTest fixture, which
// reports the test skipped, with the reason, where there is no device.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "GpuTest.h"
#include "RankThreads.h"
#include "RuntimeTestSupport.h"

#include "runtime/api/Types.h"
#include "runtime/exec/Interpreter.h"
#include "runtime/perf/Calls.h"

#include "host/Types.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace cclc::gputest {

/// A count of megabytes per rank: calls of it run several rounds, and every
/// connection's slots fill and drain many times over, at every rank count.
inline constexpr size_t MultiRoundCount = 3000017;

/// Skips the test, saying why, where there is no CUDA device.
class GpuJobTest : public ::testing::Test {
protected:
  void SetUp() override {
    if (std::string Why = noDeviceReason(); !Why.empty())
      GTEST_SKIP() << Why;
  }
};

/// Runs Body on the NRanks threads of a job (RankThreads.h) and expects
/// every rank to succeed.
inline void runGpuJob(int NRanks, const RankBody &Body,
                      std::chrono::seconds Limit = std::chrono::seconds(600)) {
  std::vector<std::string> Failures = runRanks(NRanks, Body, Limit);
  for (int Rank = 0; Rank < NRanks; ++Rank)
    EXPECT_EQ(Failures[size_t(Rank)], "") << "rank " << Rank << " of " << NRanks;
}

/// Runs a job as runGpuJob does, with CCLC_DEBUG=INFO, and returns what the
/// runtime wrote to stderr: every algorithm it chose, and every fallback.
inline std::string runLoggedGpuJob(int NRanks, const RankBody &Body) {
  test::ScopedEnv Debug("CCLC_DEBUG", "INFO");
  ::testing::internal::CaptureStderr();
  runGpuJob(NRanks, Body);
  return ::testing::internal::GetCapturedStderr();
}

/// Expects Log to say that Algorithm ran as Executor ("plan <plan text>, GPU
/// plan interpreter"), and that no call fell back on the library's ring.
inline void expectRan(const std::string &Log, const std::string &Algorithm,
                      const std::string &Executor) {
  EXPECT_NE(Log.find("runs " + Algorithm + " (" + Executor), std::string::npos)
      << Algorithm << " did not run as " << Executor << ":\n"
      << Log;
  EXPECT_EQ(Log.find("falling back"), std::string::npos) << Log;
}

inline size_t elementBytes(cclcDataType_t Type) {
  return plan::dtypeBytes(runtime::hostType(Type));
}

/// "allreduce of 1001 bf16 (max)", "broadcast of 1 f32 (root 2)", then
/// how the buffers lie.
inline std::string describeCall(const perf::Call &C, bool InPlace) {
  std::string Text = std::string(plan::collectiveName(C.Collective)) + " of " +
                     std::to_string(C.Count) + " " +
                     std::string(plan::dtypeName(runtime::hostType(C.Type)));
  if (plan::reduces(C.Collective))
    Text += " (" + std::string(plan::redOpName(runtime::hostOp(C.Op))) + ")";
  if (plan::hasRoot(C.Collective))
    Text += " (root " + std::to_string(C.Root) + ")";
  return Text + (InPlace ? ", in place" : ", out of place");
}

/// One rank's device memory for the calls of a job, allocated before its
/// first collective: room for any collective of up to MaxCount elements of
/// up to 4 bytes per rank.
struct CallMemory {
  CallMemory(size_t MaxCount, int NRanks)
      : Send(MaxCount * size_t(NRanks) * 4), Recv(MaxCount * size_t(NRanks) * 4) {}
  DeviceBuffer<std::byte> Send, Recv;
};

/// Rank's output of C (its extents().Recv elements) given Input (its
/// extents().Send elements) in Mem, out of place or in place. The receive
/// buffer is poisoned first, so that a call that writes nothing fails.
inline std::vector<std::byte> runOnDevice(cclcComm_t Comm, const perf::Call &C, int Rank,
                                          int NRanks, bool InPlace,
                                          const std::vector<std::byte> &Input, CallMemory &Mem,
                                          cudaStream_t Stream) {
  std::string What = describeCall(C, InPlace);
  perf::CallBuffers B = perf::placeBuffers(C, Rank, InPlace, Mem.Send.get(), Mem.Recv.get());
  CCLC_CUDA(cudaMemsetAsync(Mem.Recv.get(), 0xff, Mem.Recv.bytes(), Stream));
  if (!Input.empty())
    CCLC_CUDA(cudaMemcpyAsync(B.Input, Input.data(), Input.size(), cudaMemcpyHostToDevice, Stream));
  perf::check(perf::invoke(C, B.Send, B.Recv, Comm, Stream), What);
  finish(Comm, Stream, What);
  std::vector<std::byte> Output(perf::extents(C.Collective, C.Count, NRanks).Recv *
                                elementBytes(C.Type));
  if (!Output.empty()) {
    CCLC_CUDA(
        cudaMemcpyAsync(Output.data(), B.Recv, Output.size(), cudaMemcpyDeviceToHost, Stream));
    CCLC_CUDA(cudaStreamSynchronize(Stream));
  }
  return Output;
}

/// Runs C out of place and in place on inputs whose results every rank
/// knows, and throws when an element of the output is wrong.
inline void runCheckedOnDevice(cclcComm_t Comm, const perf::Call &C, int Rank, int NRanks,
                               CallMemory &Mem, cudaStream_t Stream) {
  std::vector<std::byte> Input(perf::extents(C.Collective, C.Count, NRanks).Send *
                               elementBytes(C.Type));
  perf::fillInput(C, Rank, NRanks, Input.data());
  for (bool InPlace : {false, true}) {
    std::vector<std::byte> Output = runOnDevice(Comm, C, Rank, NRanks, InPlace, Input, Mem, Stream);
    if (size_t Wrong = perf::countWrong(C, Rank, NRanks, Output.data()))
      throw std::runtime_error(describeCall(C, InPlace) + ": " + std::to_string(Wrong) +
                               " wrong elements on rank " + std::to_string(Rank));
  }
}

/// N values of Type (f32, f16 or bf16) in [-1, 1) with fractional parts:
/// their sums round, so executors that reduced in different orders would
/// give different bits.
inline std::vector<std::byte> randomValues(cclcDataType_t Type, size_t N, uint64_t Seed) {
  std::mt19937_64 Gen(Seed);
  std::uniform_real_distribution<float> Value(-1.0f, 1.0f);
  std::vector<std::byte> Bytes(N * elementBytes(Type));
  auto Half = [&](size_t I, uint16_t Bits) { std::memcpy(&Bytes[I * 2], &Bits, 2); };
  for (size_t I = 0; I < N; ++I) {
    float X = Value(Gen);
    if (Type == cclcFloat32)
      std::memcpy(&Bytes[I * 4], &X, 4);
    else if (Type == cclcFloat16)
      Half(I, host::f16::fromFloat(X).Bits);
    else if (Type == cclcBfloat16)
      Half(I, host::bf16::fromFloat(X).Bits);
    else
      throw std::invalid_argument("randomValues makes f32, f16 and bf16 only");
  }
  return Bytes;
}

} // namespace cclc::gputest
