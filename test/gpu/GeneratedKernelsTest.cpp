//===- GeneratedKernelsTest.cpp - Generated CUDA kernels through the C API ===//
//
// Generated CUDA kernels registered with cclcCommRegisterCudaKernels must
// serve every call of their types and operators in preference to the plan
// interpreter, give right results, and give the interpreter's results bit
// for bit: both executors run the same primitives in the schedule's order.
// Four ranks share device 0 (GeneratedKernels.h says which kernels the
// build links).
//
// That a kernel served a call is shown twice: by the runtime's log, and,
// independently of it, by stand-in kernels whose marker must reach the
// output although the plan is loaded too. Bits are compared on random
// fractional inputs, whose sums round, so that a different order of
// reduction would show.
//
//===----------------------------------------------------------------------===//

#include "GeneratedKernels.h"
#include "DeviceCollectives.h"

#include <algorithm>

namespace cclc::gputest {
namespace {

using plan::CollectiveKind;

CollectiveKind collectiveOf(const KernelTable &T) { return *plan::parseCollective(T.Collective); }

void loadPlan(cclcComm_t Comm, const std::string &Plan, const KernelTable &T) {
  perf::check(cclcCommLoadPlanText(Comm, Plan.data(), Plan.size()),
              std::string("loading the plan of ") + T.Stem);
}

void registerKernels(cclcComm_t Comm, const KernelTable &T) {
  perf::check(cclcCommRegisterCudaKernels(Comm, T.Infos, T.Count),
              std::string("registering the kernels of ") + T.Stem);
}

/// Whether rank Rank's output of C is defined: not on a reduce's other ranks.
bool hasOutput(const perf::Call &C, int Rank) {
  return C.Collective != CollectiveKind::Reduce || Rank == C.Root;
}

/// The plans of the algorithms of libraryKernels() (and of markerKernels(),
/// the same algorithms in the same order), compiled as the build compiled
/// their kernels.
class GeneratedKernels : public GpuJobTest {
protected:
  void SetUp() override {
    GpuJobTest::SetUp();
    if (IsSkipped())
      return;
    for (const KernelTable &T : libraryKernels()) {
      Plans.push_back(test::compilePlan(T.Stem, KernelRanks, {T.Root}));
      ASSERT_FALSE(Plans.back().empty()) << T.Stem << " does not compile for " << KernelRanks;
    }
  }

  /// Expects Log to show that both executors of every algorithm ran.
  void expectBothRan(const std::string &Log) {
    for (const KernelTable &T : libraryKernels()) {
      expectRan(Log, T.Algorithm, "kernels, generated CUDA kernel");
      expectRan(Log, T.Algorithm, "plan <plan text>, GPU plan interpreter");
    }
  }

  test::ScopedEnv Timeout{"CCLC_TIMEOUT_MS", "30000"};
  std::vector<std::string> Plans;
};

TEST_F(GeneratedKernels, ServeTheCallsOfTheirTypesBeforeThePlan) {
  std::string Log = runLoggedGpuJob(KernelRanks, [&](RankThread &R) {
    CallMemory Mem(1001, KernelRanks);
    for (size_t I = 0; I < Plans.size(); ++I) {
      const KernelTable &T = markerKernels()[I];
      ScopedComm Comm = R.newComm();
      loadPlan(Comm.get(), Plans[I], T);
      registerKernels(Comm.get(), T);
      perf::Call Marked{collectiveOf(T), cclcFloat32, cclcSum, T.Root, 1001};
      std::vector<std::byte> Input(perf::extents(Marked.Collective, 1001, KernelRanks).Send * 4);
      std::vector<std::byte> Out =
          runOnDevice(Comm.get(), Marked, R.rank(), KernelRanks, false, Input, Mem, R.stream());
      bool Marker = std::all_of(Out.begin(), Out.begin() + 1001,
                                [](std::byte B) { return B == std::byte(MarkerByte); });
      if (hasOutput(Marked, R.rank()) && !Marker)
        throw std::runtime_error(std::string(T.Stem) +
                                 ": the registered kernel did not run the f32 call");
      // No kernel has i32: the plan interpreter runs it, correctly.
      runCheckedOnDevice(Comm.get(), {Marked.Collective, cclcInt32, cclcSum, T.Root, 1001},
                         R.rank(), KernelRanks, Mem, R.stream());
      Comm.destroy();
    }
  });
  expectBothRan(Log);
}

/// Every type, operator (the sum only where nothing reduces), count and
/// placement the kernels serve.
void forEachCall(const KernelTable &T, const std::function<void(const perf::Call &)> &Fn) {
  CollectiveKind Collective = collectiveOf(T);
  std::vector<cclcRedOp_t> Ops = {cclcSum};
  if (plan::reduces(Collective))
    Ops.push_back(cclcMax);
  for (cclcDataType_t Type : {cclcFloat32, cclcFloat16, cclcBfloat16})
    for (cclcRedOp_t Op : Ops)
      for (size_t Count : {size_t(0), size_t(1), size_t(1001), MultiRoundCount})
        Fn({Collective, Type, Op, T.Root, Count});
}

TEST_F(GeneratedKernels, GiveTheInterpretersBitsAndRightResults) {
  std::string Log = runLoggedGpuJob(KernelRanks, [&](RankThread &R) {
    CallMemory Mem(MultiRoundCount, KernelRanks);
    int Rank = R.rank();
    for (size_t I = 0; I < Plans.size(); ++I) {
      const KernelTable &T = libraryKernels()[I];
      ScopedComm Kernels = R.newComm();
      registerKernels(Kernels.get(), T);
      ScopedComm Interpreter = R.newComm();
      loadPlan(Interpreter.get(), Plans[I], T);
      uint64_t Seed = uint64_t(Rank) << 32;
      forEachCall(T, [&](const perf::Call &C) {
        runCheckedOnDevice(Kernels.get(), C, Rank, KernelRanks, Mem, R.stream());
        std::vector<std::byte> Input =
            randomValues(C.Type, perf::extents(C.Collective, C.Count, KernelRanks).Send, ++Seed);
        for (bool InPlace : {false, true}) {
          std::vector<std::byte> ByKernel =
              runOnDevice(Kernels.get(), C, Rank, KernelRanks, InPlace, Input, Mem, R.stream());
          std::vector<std::byte> ByInterpreter =
              runOnDevice(Interpreter.get(), C, Rank, KernelRanks, InPlace, Input, Mem, R.stream());
          if (hasOutput(C, Rank) && ByKernel != ByInterpreter)
            throw std::runtime_error(std::string(T.Stem) + ": " + describeCall(C, InPlace) +
                                     ": the kernel's output differs from the interpreter's on "
                                     "rank " +
                                     std::to_string(Rank));
        }
      });
      Interpreter.destroy();
      Kernels.destroy();
    }
  });
  expectBothRan(Log);
}

} // namespace
} // namespace cclc::gputest
