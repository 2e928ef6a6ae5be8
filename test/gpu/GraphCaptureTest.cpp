//===- GraphCaptureTest.cpp - Collectives captured in CUDA graphs ---------===//
//
// Applications capture collectives in CUDA graphs and replay them, as NCCL's
// users do, so an allreduce enqueued while its stream captures must record
// work that gives the right result at every launch of the graph, with
// whatever the buffers hold then. Four ranks share device 0; each makes one
// warm-up call (the first call of an algorithm connects its transports,
// which takes every rank and cannot be captured), captures one allreduce of
// several rounds on its stream, and launches the graph three times with new
// inputs, checking every element: once through the plan interpreter, once
// through generated kernels.
//
//===----------------------------------------------------------------------===//

#include "DeviceCollectives.h"
#include "GeneratedKernels.h"

#include <algorithm>

namespace cclc::gputest {
namespace {

enum class Executor { Plan, Kernels };

/// Element I of rank Rank's input at launch Launch: small integers, whose
/// sums over four ranks are exact in f32, different at every launch.
float inputValue(int Rank, size_t I, int Launch) {
  return float((I * 5 + size_t(Rank) * 3 + size_t(Launch) * 7) % 17);
}

/// A captured graph and its executable form.
struct Graph {
  Graph() = default;
  Graph(const Graph &) = delete;
  Graph &operator=(const Graph &) = delete;
  ~Graph() {
    if (Exec)
      cudaGraphExecDestroy(Exec);
    if (Captured)
      cudaGraphDestroy(Captured);
  }
  cudaGraph_t Captured = nullptr;
  cudaGraphExec_t Exec = nullptr;
};

/// One rank's buffers, filled and checked for a given launch.
class Buffers {
public:
  explicit Buffers(RankThread &R) : R(R), In(MultiRoundCount), Out(MultiRoundCount) {}

  const float *input() const { return In.get(); }
  float *output() const { return Out.get(); }

  /// Stages launch Launch's input (the copy is ordered before what follows
  /// on the stream; Host outlives it, since the rank waits before it
  /// refills).
  void fill(int Launch) {
    for (size_t I = 0; I < Host.size(); ++I)
      Host[I] = inputValue(R.rank(), I, Launch);
    CCLC_CUDA(
        cudaMemcpyAsync(In.get(), Host.data(), In.bytes(), cudaMemcpyHostToDevice, R.stream()));
  }
  /// Waits for the stream, then throws unless the output holds launch
  /// Launch's sums.
  void check(int Launch) {
    CCLC_CUDA(
        cudaMemcpyAsync(Host.data(), Out.get(), Out.bytes(), cudaMemcpyDeviceToHost, R.stream()));
    CCLC_CUDA(cudaStreamSynchronize(R.stream()));
    size_t Wrong = 0;
    for (size_t I = 0; I < Host.size(); ++I) {
      float Sum = 0;
      for (int From = 0; From < R.nranks(); ++From)
        Sum += inputValue(From, I, Launch);
      Wrong += Host[I] != Sum;
    }
    if (Wrong)
      throw std::runtime_error("launch " + std::to_string(Launch) + ": " + std::to_string(Wrong) +
                               " wrong elements on rank " + std::to_string(R.rank()));
  }

private:
  RankThread &R;
  DeviceBuffer<float> In, Out;
  std::vector<float> Host = std::vector<float>(MultiRoundCount);
};

class GraphCapture : public GpuJobTest, public ::testing::WithParamInterface<Executor> {};

TEST_P(GraphCapture, ReplaysGiveRightResults) {
  test::ScopedEnv Timeout("CCLC_TIMEOUT_MS", "30000");
  const KernelTable &Ring =
      *std::find_if(libraryKernels().begin(), libraryKernels().end(),
                    [](const KernelTable &T) { return std::string(T.Stem) == "ring-allreduce"; });
  std::string Plan = test::compilePlan("ring-allreduce", KernelRanks);
  std::string Log = runLoggedGpuJob(KernelRanks, [&](RankThread &R) {
    // Before the communicator, so that a failing rank aborts it (releasing
    // its peers) before freeing memory waits for their kernels.
    Buffers B(R);
    ScopedComm Comm = R.newComm();
    if (GetParam() == Executor::Plan)
      perf::check(cclcCommLoadPlanText(Comm.get(), Plan.data(), Plan.size()), "loading the plan");
    else
      perf::check(cclcCommRegisterCudaKernels(Comm.get(), Ring.Infos, Ring.Count),
                  "registering the kernels");
    auto AllReduce = [&] {
      return cclcAllReduce(B.input(), B.output(), MultiRoundCount, cclcFloat32, cclcSum, Comm.get(),
                           R.stream());
    };
    B.fill(0);
    perf::check(AllReduce(), "the warm-up allreduce");
    finish(Comm.get(), R.stream(), "the warm-up allreduce");
    B.check(0);

    Graph G;
    CCLC_CUDA(cudaStreamBeginCapture(R.stream(), cudaStreamCaptureModeThreadLocal));
    cclcResult_t Captured = AllReduce();
    // The capture ends whatever happened, so the stream is usable again.
    cudaError_t Ended = cudaStreamEndCapture(R.stream(), &G.Captured);
    perf::check(Captured, "an allreduce during stream capture");
    CCLC_CUDA(Ended);
    CCLC_CUDA(cudaGraphInstantiate(&G.Exec, G.Captured, 0));
    for (int Launch = 1; Launch <= 3; ++Launch) {
      B.fill(Launch);
      CCLC_CUDA(cudaGraphLaunch(G.Exec, R.stream()));
      finish(Comm.get(), R.stream(), "launch " + std::to_string(Launch) + " of the graph");
      B.check(Launch);
    }
    Comm.destroy();
  });
  expectRan(Log, Ring.Algorithm,
            GetParam() == Executor::Plan ? "plan <plan text>, GPU plan interpreter"
                                         : "kernels, generated CUDA kernel");
}

INSTANTIATE_TEST_SUITE_P(Executors, GraphCapture,
                         ::testing::Values(Executor::Plan, Executor::Kernels),
                         [](const ::testing::TestParamInfo<Executor> &Info) {
                           return Info.param == Executor::Plan ? "PlanInterpreter"
                                                               : "GeneratedKernels";
                         });

} // namespace
} // namespace cclc::gputest
