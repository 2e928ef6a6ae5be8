//===- AsyncErrorTest.cpp - A kernel whose peer never calls ---------------===//
//
// A GPU collective returns once it is enqueued, so a peer that never makes
// its call can only be noticed by the kernel: with CCLC_KERNEL_TIMEOUT_MS
// set it must give up after that long, and leave the failure to
// cclcCommGetAsyncError, whose message names the timeout and the peer;
// without it, it waits past CCLC_TIMEOUT_MS, since a peer may only be late,
// until the communicator is aborted. Two
// ranks share device 0. Both make one allreduce, which connects the
// transports (the first call of an algorithm waits for every rank on the
// host, where a missing peer fails the call itself); then rank 0 makes a
// second one, which rank 1 never makes.
//
//===----------------------------------------------------------------------===//

#include "DeviceCollectives.h"

#include <functional>
#include <future>
#include <thread>

namespace cclc::gputest {
namespace {

using Clock = std::chrono::steady_clock;

class AsyncError : public GpuJobTest {};

/// Runs two ranks that both make one allreduce (which connects them), then
/// rank 0 enqueues a second one, which rank 1 never makes, and runs Then on
/// it. Rank 1 aborts only once Then has returned, whichever way: an abort
/// reaches the peer's kernel, which would then end before Then looks.
void callAlone(const std::function<void(RankThread &, ScopedComm &)> &Then) {
  std::string Plan = test::compilePlan("ring-allreduce", 2);
  perf::Call Warmup{plan::CollectiveKind::AllReduce, cclcFloat32, cclcSum, 0, 1001};
  std::promise<void> Done;
  std::shared_future<void> RankZeroDone = Done.get_future().share();
  runGpuJob(
      2,
      [&](RankThread &R) {
        CallMemory Mem(Warmup.Count, 2);
        ScopedComm Comm = R.newComm();
        perf::check(cclcCommLoadPlanText(Comm.get(), Plan.data(), Plan.size()), "loading");
        runCheckedOnDevice(Comm.get(), Warmup, R.rank(), 2, Mem, R.stream());
        if (R.rank() == 1) {
          if (RankZeroDone.wait_for(std::chrono::seconds(60)) != std::future_status::ready)
            throw std::runtime_error("rank 0 did not finish within 60 s");
          Comm.abort();
          return;
        }
        struct Release {
          std::promise<void> &P;
          ~Release() { P.set_value(); }
        } Finished{Done};
        perf::check(cclcAllReduce(Mem.Send.get(), Mem.Recv.get(), Warmup.Count, cclcFloat32,
                                  cclcSum, Comm.get(), R.stream()),
                    "enqueuing the allreduce rank 1 never makes");
        Then(R, Comm);
      },
      std::chrono::seconds(180));
}

TEST_F(AsyncError, APeerThatNeverCallsTimesTheKernelOut) {
  test::ScopedEnv Timeout("CCLC_KERNEL_TIMEOUT_MS", "2000");
  cclcResult_t Async = cclcSuccess;
  std::string Message;
  Clock::duration Waited{};
  callAlone([&](RankThread &R, ScopedComm &Comm) {
    Clock::time_point Start = Clock::now();
    CCLC_CUDA(cudaStreamSynchronize(R.stream()));
    Waited = Clock::now() - Start;
    perf::check(cclcCommGetAsyncError(Comm.get(), &Async), "cclcCommGetAsyncError");
    Message = cclcGetLastError(nullptr);
    Comm.abort();
  });
  EXPECT_NE(Async, cclcSuccess) << "the kernel waiting for rank 1 did not fail";
  EXPECT_NE(Message.find("timed out"), std::string::npos) << Message;
  EXPECT_NE(Message.find("rank 1"), std::string::npos) << Message;
  EXPECT_LT(Waited, std::chrono::seconds(20))
      << "the kernel waited far past CCLC_KERNEL_TIMEOUT_MS";
}

TEST_F(AsyncError, WithoutAKernelTimeoutTheKernelWaitsForTheAbort) {
  test::ScopedEnv Timeout("CCLC_TIMEOUT_MS", "1000");
  cclcResult_t Async = cclcInternalError;
  cudaError_t Running = cudaSuccess;
  callAlone([&](RankThread &R, ScopedComm &Comm) {
    std::this_thread::sleep_for(std::chrono::seconds(3));
    Running = cudaStreamQuery(R.stream());
    perf::check(cclcCommGetAsyncError(Comm.get(), &Async), "cclcCommGetAsyncError");
    // The abort raises the word the kernel polls, and the destroy waits for
    // it to end.
    Comm.abort();
    CCLC_CUDA(cudaStreamSynchronize(R.stream()));
  });
  EXPECT_EQ(Running, cudaErrorNotReady) << "the kernel stopped waiting before the abort";
  EXPECT_EQ(Async, cclcSuccess) << "a late peer is no failure";
}

} // namespace
} // namespace cclc::gputest
