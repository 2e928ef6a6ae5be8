//===- TeardownTest.cpp - Destroying GPU communicators, peer access ------===//
//
// Destroying a communicator waits for its own kernels and then frees its
// memory with CUDA's frees, which wait for the whole device, as NCCL's do:
// an application kernel that runs on, on a stream of its own, delays
// cclcCommDestroy until it ends, and neither fails nor deadlocks it. The
// destroy unmaps the peers' memory and waits for every rank before it
// frees its own, so that ranks destroyed one after the other never fault. With peer access turned off, ranks of one
// host run over the mapped host memory of the TCP links, and say so with
// CCLC_DEBUG=INFO.
//
//===----------------------------------------------------------------------===//

#include "DeviceCollectives.h"
#include "HoldingKernel.h"

#include <chrono>
#include <thread>
#include <vector>

namespace cclc::gputest {
namespace {

using Clock = std::chrono::steady_clock;

class Teardown : public GpuJobTest {};

TEST_F(Teardown, DestroyEndsOnceTheApplicationsKernelEnds) {
  std::string Plan = test::compilePlan("ring-allreduce", 2);
  perf::Call Call{plan::CollectiveKind::AllReduce, cclcFloat32, cclcSum, 0, 4099};
  MappedBuffer<uint32_t> Flag;
  Stream Application;
  CCLC_CUDA(holdUntilRaised(Flag.device(), Application.get()));
  // The application's kernel ends on its own a while after the ranks
  // begin.
  std::thread Release([&] {
    std::this_thread::sleep_for(std::chrono::seconds(2));
    reinterpret_cast<volatile uint32_t *>(Flag.host())[0] = 1;
  });
  std::vector<Clock::duration> Took(2);
  runGpuJob(2, [&](RankThread &R) {
    CallMemory Mem(Call.Count, 2);
    ScopedComm Comm = R.newComm();
    perf::check(cclcCommLoadPlanText(Comm.get(), Plan.data(), Plan.size()), "loading");
    for (int Repeat = 0; Repeat < 3; ++Repeat)
      runCheckedOnDevice(Comm.get(), Call, R.rank(), 2, Mem, R.stream());
    Clock::time_point Start = Clock::now();
    Comm.destroy();
    Took[size_t(R.rank())] = Clock::now() - Start;
  });
  Release.join();
  CCLC_CUDA(cudaStreamSynchronize(Application.get()));
  for (int Rank = 0; Rank < 2; ++Rank)
    EXPECT_LT(Took[size_t(Rank)], std::chrono::seconds(30)) << "rank " << Rank;
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
