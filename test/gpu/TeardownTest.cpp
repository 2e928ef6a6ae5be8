//===- TeardownTest.cpp - Destroying GPU communicators, peer access ------===//
//
// Destroying a communicator waits for its own kernels, not for the device:
// an application kernel that runs on, on a stream of its own, must not keep
// cclcCommDestroy from returning. The destroy unmaps the peers' memory and
// waits for every rank before it frees its own, so that ranks destroyed one
// after the other never fault. With peer access turned off, ranks of one
// host run over the mapped host memory of the TCP links, and say so with
// CCLC_DEBUG=INFO.
//
//===----------------------------------------------------------------------===//

#include "DeviceCollectives.h"
#include "HoldingKernel.h"

#include <chrono>
#include <future>
#include <thread>

namespace cclc::gputest {
namespace {

using Clock = std::chrono::steady_clock;

class Teardown : public GpuJobTest {};

TEST_F(Teardown, DestroyWaitsOnlyForTheCommunicatorsKernels) {
  std::string Plan = test::compilePlan("ring-allreduce", 2);
  perf::Call Call{plan::CollectiveKind::AllReduce, cclcFloat32, cclcSum, 0, 4099};
  MappedBuffer<uint32_t> Flag;
  auto Raise = [&] { reinterpret_cast<volatile uint32_t *>(Flag.host())[0] = 1; };
  Stream Application;
  CCLC_CUDA(holdUntilRaised(Flag.device(), Application.get()));
  // Ends the application's kernel should a destroy wait for it after all.
  std::promise<void> Finished;
  std::thread Watchdog([&, Done = Finished.get_future()] {
    if (Done.wait_for(std::chrono::seconds(60)) != std::future_status::ready)
      Raise();
  });
  Clock::duration Slowest{};
  bool RaisedFirst = false;
  runGpuJob(2, [&](RankThread &R) {
    CallMemory Mem(Call.Count, 2);
    ScopedComm Comm = R.newComm();
    perf::check(cclcCommLoadPlanText(Comm.get(), Plan.data(), Plan.size()), "loading");
    for (int Repeat = 0; Repeat < 3; ++Repeat)
      runCheckedOnDevice(Comm.get(), Call, R.rank(), 2, Mem, R.stream());
    Clock::time_point Start = Clock::now();
    Comm.destroy();
    Clock::duration Took = Clock::now() - Start;
    if (R.rank() == 0) {
      Slowest = Took;
      RaisedFirst = reinterpret_cast<volatile uint32_t *>(Flag.host())[0] != 0;
    }
  });
  Finished.set_value();
  Watchdog.join();
  Raise();
  CCLC_CUDA(cudaStreamSynchronize(Application.get()));
  EXPECT_FALSE(RaisedFirst) << "the destroy waited for the application's kernel";
  EXPECT_LT(Slowest, std::chrono::seconds(30));
}

TEST_F(Teardown, WithoutPeerAccessRanksUseMappedHostMemory) {
  test::ScopedEnv Off("CCLC_P2P_DISABLE", "1");
  std::string Plan = test::compilePlan("ring-allreduce", 2);
  perf::Call Call{plan::CollectiveKind::AllReduce, cclcFloat32, cclcSum, 0, 100003};
  std::string Log = runLoggedGpuJob(2, [&](RankThread &R) {
    CallMemory Mem(Call.Count, 2);
    ScopedComm Comm = R.newComm();
    perf::check(cclcCommLoadPlanText(Comm.get(), Plan.data(), Plan.size()), "loading");
    runCheckedOnDevice(Comm.get(), Call, R.rank(), 2, Mem, R.stream());
    Comm.destroy();
  });
  EXPECT_NE(Log.find("mapped host memory over tcp, peer access disabled"), std::string::npos)
      << Log;
  EXPECT_EQ(Log.find(": cuda-ipc"), std::string::npos) << Log;
}

} // namespace
} // namespace cclc::gputest
