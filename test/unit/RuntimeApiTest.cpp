//===- RuntimeApiTest.cpp - The C API within one process ------------------===//
//
// Argument checks, status strings, plan loading and refusal, the GPU entry
// points of a communicator that never ran on the GPU, and the choice of
// algorithm for either target, on a communicator of one rank (which needs no
// other process) and on the runtime's own classes.
//
//===----------------------------------------------------------------------===//

#include "AllocationCount.h"
#include "RuntimeTestSupport.h"

#include "runtime/api/Algorithms.h"
#include "runtime/api/Fallback.h"
#include "runtime/api/Status.h"

#include "plan/Verifier.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <set>
#include <vector>

namespace cclc::test {
namespace {

using plan::CollectiveKind;

/// A communicator of one rank, made in this process.
class OneRank : public ::testing::Test {
protected:
  void SetUp() override {
    cclcUniqueId Id;
    ASSERT_EQ(cclcGetUniqueId(&Id), cclcSuccess) << cclcGetLastError(nullptr);
    ASSERT_EQ(cclcCommInitRank(&Comm, 1, Id, 0), cclcSuccess) << cclcGetLastError(nullptr);
  }
  void TearDown() override {
    if (Comm) {
      EXPECT_EQ(cclcCommDestroy(Comm), cclcSuccess) << cclcGetLastError(nullptr);
    }
  }

  /// Expects Result to be Expected with a last error containing Text.
  void expectError(cclcResult_t Result, cclcResult_t Expected, const std::string &Text) {
    EXPECT_EQ(Result, Expected) << cclcGetLastError(Comm);
    EXPECT_NE(std::string(cclcGetLastError(Comm)).find(Text), std::string::npos)
        << "the message '" << cclcGetLastError(Comm) << "' lacks '" << Text << "'";
  }

  cclcComm_t Comm = nullptr;
};

TEST(Status, EveryResultHasItsOwnStringSayingWhatToDo) {
  std::set<std::string> Seen;
  for (int R = 0; R < cclcNumResults; ++R) {
    std::string Text = cclcGetErrorString(cclcResult_t(R));
    EXPECT_FALSE(Text.empty());
    EXPECT_TRUE(Seen.insert(Text).second) << Text;
  }
  EXPECT_NE(std::string(cclcGetErrorString(cclcRemoteError)).find("cclcCommAbort"),
            std::string::npos);
  EXPECT_NE(std::string(cclcGetErrorString(cclcResult_t(99))).find("unknown"), std::string::npos);
}

TEST(Init, RefusesBadArguments) {
  cclcUniqueId Id{};
  cclcComm_t Comm = nullptr;
  EXPECT_EQ(cclcGetUniqueId(nullptr), cclcInvalidArgument);
  EXPECT_EQ(cclcCommInitRank(nullptr, 2, Id, 0), cclcInvalidArgument);
  EXPECT_EQ(cclcCommInitRank(&Comm, 0, Id, 0), cclcInvalidArgument);
  EXPECT_EQ(cclcCommInitRank(&Comm, 2, Id, 2), cclcInvalidArgument);
  EXPECT_NE(std::string(cclcGetLastError(nullptr)).find("rank 2"), std::string::npos);
  EXPECT_EQ(Comm, nullptr);
  EXPECT_EQ(cclcCommDestroy(nullptr), cclcInvalidArgument);
  EXPECT_EQ(cclcCommAbort(nullptr), cclcInvalidArgument);
  // A rank count no job may have is refused before anything is allocated.
  for (int NRanks : {65537, 2147483647}) {
    EXPECT_EQ(cclcCommInitRank(&Comm, NRanks, Id, 0), cclcInvalidArgument);
    EXPECT_NE(std::string(cclcGetLastError(nullptr)).find("a job has 1 to 65536 ranks"),
              std::string::npos)
        << cclcGetLastError(nullptr);
  }
  ScopedEnv Timeout("CCLC_TIMEOUT_MS", "soon");
  EXPECT_EQ(cclcGetUniqueId(&Id), cclcInvalidArgument);
  EXPECT_NE(std::string(cclcGetLastError(nullptr)).find("CCLC_TIMEOUT_MS"), std::string::npos);
}

/// A timeout whose deadline would overflow the clock is refused with the
/// largest one accepted, instead of making every wait fail at once.
TEST(Init, RefusesATimeoutBeyondTheLargest) {
  cclcUniqueId Id{};
  for (const char *Huge : {"2147483648", "10000000000000", "99999999999999999999999"}) {
    ScopedEnv Timeout("CCLC_TIMEOUT_MS", Huge);
    EXPECT_EQ(cclcGetUniqueId(&Id), cclcInvalidArgument) << Huge;
    EXPECT_NE(std::string(cclcGetLastError(nullptr)).find("in [1, 2147483647]"), std::string::npos)
        << cclcGetLastError(nullptr);
  }
  ScopedEnv Largest("CCLC_TIMEOUT_MS", "2147483647");
  cclcComm_t Comm = nullptr;
  ASSERT_EQ(cclcGetUniqueId(&Id), cclcSuccess) << cclcGetLastError(nullptr);
  ASSERT_EQ(cclcCommInitRank(&Comm, 1, Id, 0), cclcSuccess) << cclcGetLastError(nullptr);
  EXPECT_EQ(cclcCommDestroy(Comm), cclcSuccess) << cclcGetLastError(nullptr);
}

TEST(Init, FromEnvironmentSaysWhatToSet) {
  for (const char *Name : {"RANK", "WORLD_SIZE", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE",
                           "SLURM_PROCID", "SLURM_NTASKS"})
    ::unsetenv(Name);
  cclcComm_t Comm = nullptr;
  EXPECT_EQ(cclcCommInitFromEnvironment(&Comm), cclcInvalidUsage);
  EXPECT_NE(std::string(cclcGetLastError(nullptr)).find("mpirun"), std::string::npos);
}

TEST(MemAlloc, GivesZeroedPagesAndFreesOnlyItsOwn) {
  EXPECT_EQ(cclcMemAlloc(nullptr, 16), cclcInvalidArgument);
  void *P = nullptr;
  ASSERT_EQ(cclcMemAlloc(&P, 10000), cclcSuccess);
  ASSERT_NE(P, nullptr);
  EXPECT_EQ(uintptr_t(P) % 4096, 0u);
  auto *Bytes = static_cast<unsigned char *>(P);
  EXPECT_TRUE(std::all_of(Bytes, Bytes + 10000, [](unsigned char B) { return B == 0; }));
  Bytes[9999] = 1;
  int Local = 0;
  EXPECT_EQ(cclcMemFree(&Local), cclcInvalidArgument);
  EXPECT_NE(std::string(cclcGetLastError(nullptr)).find("not memory from cclcMemAlloc"),
            std::string::npos)
      << cclcGetLastError(nullptr);
  EXPECT_EQ(cclcMemFree(Bytes + 1), cclcInvalidArgument);
  EXPECT_EQ(cclcMemFree(P), cclcSuccess);
  EXPECT_EQ(cclcMemFree(P), cclcInvalidArgument) << "a second free";
  EXPECT_EQ(cclcMemFree(nullptr), cclcSuccess);
}

TEST_F(OneRank, CountAndRank) {
  int Count = 0, Rank = -1;
  EXPECT_EQ(cclcCommCount(Comm, &Count), cclcSuccess);
  EXPECT_EQ(cclcCommUserRank(Comm, &Rank), cclcSuccess);
  EXPECT_EQ(Count, 1);
  EXPECT_EQ(Rank, 0);
  EXPECT_EQ(cclcCommCount(Comm, nullptr), cclcInvalidArgument);
  EXPECT_EQ(cclcCommUserRank(nullptr, &Rank), cclcInvalidArgument);
}

TEST_F(OneRank, ArgumentChecksSayWhatIsWrong) {
  float X[4] = {};
  expectError(cclcAllReduce(nullptr, X, 4, cclcFloat32, cclcSum, Comm, nullptr),
              cclcInvalidArgument, "sendbuff is null");
  expectError(cclcAllReduce(X, nullptr, 4, cclcFloat32, cclcSum, Comm, nullptr),
              cclcInvalidArgument, "recvbuff is null");
  expectError(cclcAllReduce(X, X, 4, cclcDataType_t(42), cclcSum, Comm, nullptr),
              cclcInvalidArgument, "datatype 42");
  expectError(cclcAllReduce(X, X, 4, cclcFloat32, cclcRedOp_t(-1), Comm, nullptr),
              cclcInvalidArgument, "op -1");
  expectError(cclcBroadcast(X, X, 4, cclcFloat32, 1, Comm, nullptr), cclcInvalidArgument, "root 1");
  expectError(cclcReduce(X, X, 4, cclcFloat32, cclcSum, -1, Comm, nullptr), cclcInvalidArgument,
              "root -1");
  expectError(cclcAllReduce(X, X, SIZE_MAX / 2, cclcFloat64, cclcSum, Comm, nullptr),
              cclcInvalidArgument, "overflows");
  expectError(cclcAllReduce(X, X, 4, cclcFloat32, cclcSum, nullptr, nullptr), cclcInvalidArgument,
              "comm is null");
  // A refused call leaves the communicator working; count 0 needs no buffers.
  EXPECT_EQ(cclcAllReduce(nullptr, nullptr, 0, cclcFloat32, cclcSum, Comm, nullptr), cclcSuccess);
  runChecked(Comm, {CollectiveKind::AllReduce, cclcFloat32, cclcSum, 0, 5}, 0, 1);
}

TEST_F(OneRank, EveryCollectiveRuns) {
  for (CollectiveKind Collective :
       {CollectiveKind::AllReduce, CollectiveKind::AllGather, CollectiveKind::ReduceScatter,
        CollectiveKind::Broadcast, CollectiveKind::Reduce})
    for (cclcDataType_t Type : {cclcFloat16, cclcInt64})
      for (size_t Count : {size_t(0), size_t(1), size_t(333)})
        runChecked(Comm, {Collective, Type, cclcMax, 0, Count}, 0, 1);
}

/// Writes Text to a file of the test's temporary directory; its path.
std::string writeFile(const std::string &Name, const std::string &Text) {
  std::string Path = ::testing::TempDir() + Name;
  std::ofstream(Path) << Text;
  return Path;
}

TEST_F(OneRank, PlansAreCheckedAndVerifiedOnLoad) {
  std::string Plan = compilePlan("ring-allreduce", 2);
  ASSERT_FALSE(Plan.empty());
  auto Replace = [&](const std::string &From, const std::string &To) {
    std::string Text = Plan;
    size_t At = Text.find(From);
    EXPECT_NE(At, std::string::npos) << From;
    return At == std::string::npos ? Text : Text.replace(At, From.size(), To);
  };
  // Truncated: the JSON reader says where the text stops.
  std::string Truncated = writeFile("truncated.json", Plan.substr(0, Plan.size() / 2));
  expectError(cclcCommLoadPlan(Comm, Truncated.c_str()), cclcInvalidArgument, "truncated.json:");
  expectError(cclcCommLoadPlan(Comm, Truncated.c_str()), cclcInvalidArgument, "invalid JSON");
  // Corrupted fields: the reader names the field.
  std::string BadPeer = Replace("\"peer\": 1", "\"peer\": 7");
  expectError(cclcCommLoadPlanText(Comm, BadPeer.data(), BadPeer.size()), cclcInvalidArgument,
              "].peer: 7 is not a rank");
  std::string BadOp = Replace("\"op\": \"send\"", "\"op\": \"teleport\"");
  expectError(cclcCommLoadPlanText(Comm, BadOp.data(), BadOp.size()), cclcInvalidArgument, "].op");
  // Well formed but wrong: the verifier refuses it, at the algorithm's line.
  std::string Wrong = Replace("\"recv_reduce_send\"", "\"recv_copy_send\"");
  expectError(cclcCommLoadPlanText(Comm, Wrong.data(), Wrong.size()), cclcInvalidArgument,
              "allreduce needs input[");
  expectError(cclcCommLoadPlanText(Comm, Wrong.data(), Wrong.size()), cclcInvalidArgument,
              "ring-allreduce.ccl:");
  // Right, but for another rank count.
  expectError(cclcCommLoadPlanText(Comm, Plan.data(), Plan.size()), cclcInvalidArgument,
              "compiled for 2 ranks, but the communicator has 1");
  expectError(cclcCommLoadPlan(Comm, "/nonexistent/plan.json"), cclcInvalidArgument,
              "cannot read plan /nonexistent/plan.json");
  expectError(cclcCommLoadPlan(Comm, nullptr), cclcInvalidArgument, "path is null");
  // None of that harmed the communicator.
  std::string Mine = writeFile("mine.json", compilePlan("ring-allreduce", 1));
  EXPECT_EQ(cclcCommLoadPlan(Comm, Mine.c_str()), cclcSuccess) << cclcGetLastError(Comm);
  runChecked(Comm, {CollectiveKind::AllReduce, cclcBfloat16, cclcProd, 0, 100}, 0, 1);
}

TEST_F(OneRank, KernelTablesAreChecked) {
  host::KernelInfo Info{"ring_allreduce",
                        "allreduce",
                        2,
                        0,
                        {1, 1, 1},
                        1,
                        1,
                        0,
                        host::DType::F32,
                        host::RedOp::Sum,
                        0,
                        0,
                        [](const host::KernelArgs &, int) {}};
  expectError(cclcCommRegisterKernels(Comm, &Info, 1), cclcInvalidArgument,
              "compiled for 2 ranks, but the communicator has 1");
  Info.NRanks = 1;
  Info.Collective = "allscatter";
  expectError(cclcCommRegisterKernels(Comm, &Info, 1), cclcInvalidArgument, "'allscatter'");
  Info.Collective = "allreduce";
  Info.MinBytes = 10;
  Info.MaxBytes = 5;
  expectError(cclcCommRegisterKernels(Comm, &Info, 1), cclcInvalidArgument, "size window");
  expectError(cclcCommRegisterKernels(Comm, nullptr, 1), cclcInvalidArgument,
              "kernelInfos is null");
  EXPECT_EQ(cclcCommRegisterKernels(Comm, nullptr, 0), cclcSuccess);
}

TEST_F(OneRank, AsyncErrorOfAHostCommunicatorIsSuccess) {
  cclcResult_t Async = cclcInternalError;
  EXPECT_EQ(cclcCommGetAsyncError(Comm, &Async), cclcSuccess) << cclcGetLastError(Comm);
  EXPECT_EQ(Async, cclcSuccess);
  runChecked(Comm, {CollectiveKind::AllReduce, cclcFloat64, cclcSum, 0, 10}, 0, 1);
  EXPECT_EQ(cclcCommGetAsyncError(Comm, &Async), cclcSuccess) << cclcGetLastError(Comm);
  EXPECT_EQ(Async, cclcSuccess);
  expectError(cclcCommGetAsyncError(Comm, nullptr), cclcInvalidArgument, "asyncError is null");
  expectError(cclcCommGetAsyncError(nullptr, &Async), cclcInvalidArgument, "comm is null");
}

// A call that runs on one channel takes no lock beyond the communicator's,
// allocates nothing once its buffers are cached, and builds no string.
TEST_F(OneRank, RepeatedHostCallsAllocateNothing) {
  std::vector<float> In(64, 1.0f), Out(64);
  auto Call = [&] {
    EXPECT_EQ(cclcAllReduce(In.data(), Out.data(), In.size(), cclcFloat32, cclcSum, Comm, nullptr),
              cclcSuccess)
        << cclcGetLastError(Comm);
    EXPECT_EQ(cclcBroadcast(In.data(), Out.data(), In.size(), cclcFloat32, 0, Comm, nullptr),
              cclcSuccess)
        << cclcGetLastError(Comm);
  };
  Call();
  AllocationCount Counted;
  for (int I = 0; I < 100; ++I)
    Call();
  EXPECT_EQ(Counted.stop(), 0);
  EXPECT_EQ(Out, In);
}

TEST_F(OneRank, CudaKernelTablesAreChecked) {
  expectError(cclcCommRegisterCudaKernels(Comm, nullptr, 1), cclcInvalidArgument,
              "kernelInfos is null; pass the <algorithm>_kernels table that cclc compile "
              "--emit=cuda generated");
#ifdef CCLC_TEST_HAVE_CUDA
  EXPECT_EQ(cclcCommRegisterCudaKernels(Comm, nullptr, 0), cclcSuccess) << cclcGetLastError(Comm);
#else
  expectError(cclcCommRegisterCudaKernels(Comm, nullptr, 0), cclcInvalidUsage, "without CUDA");
#endif
  expectError(cclcCommRegisterCudaKernels(nullptr, nullptr, 0), cclcInvalidArgument,
              "comm is null");
  // Refusals leave the communicator working.
  runChecked(Comm, {CollectiveKind::AllGather, cclcUint8, cclcSum, 0, 3}, 0, 1);
}

TEST(Fallback, EveryCollectiveButAllToAllHasAVerifiedRing) {
  // plan/RingSchedules.h is compared with the compiler in PlanTests; here the
  // runtime's use of it.
  sched::Schedule S = runtime::fallbackSchedule(CollectiveKind::Reduce, 5, 3);
  EXPECT_EQ(S.Algorithm, "ring_reduce");
  EXPECT_EQ(S.Root, 3);
  try {
    runtime::fallbackSchedule(CollectiveKind::AllToAll, 4, 0);
    ADD_FAILURE() << "alltoall has no ring in the library";
  } catch (const runtime::ApiError &E) {
    EXPECT_EQ(E.result(), cclcNoAlgorithm);
  }
}

/// The choice among algorithms, without transports.
class Choice : public ::testing::Test {
protected:
  using Executor = runtime::Algorithm::Executor;

  runtime::Algorithm algorithm(const std::string &Name, uint64_t Min, std::optional<uint64_t> Max,
                               Executor Kind = Executor::Interpreter) {
    runtime::Algorithm A;
    A.Name = Name;
    A.Origin = "test";
    A.Collective = CollectiveKind::AllReduce;
    A.MinBytes = Min;
    A.MaxBytes = Max;
    A.Kind = Kind;
    if (Kind == Executor::Kernel)
      A.Kernels[{host::DType::F32, host::RedOp::Sum}] = [](const host::KernelArgs &, int) {};
    // Choosing never reads the entry, which only CUDA code can.
    if (Kind == Executor::CudaKernel)
      A.CudaKernels[{host::DType::F32, host::RedOp::Sum}] =
          reinterpret_cast<const cuda::KernelInfo *>(&CudaEntry);
    return A;
  }
  std::string choose(size_t Count, host::DType Type = host::DType::F32,
                     CollectiveKind Collective = CollectiveKind::AllReduce, int Root = 0,
                     runtime::Target Where = runtime::Target::Host) {
    runtime::Request R;
    R.Collective = Collective;
    R.Root = Root;
    R.Count = Count;
    R.Type = Type;
    R.Where = Where;
    return Table.choose(R, [&] { return algorithm("fallback", 0, std::nullopt); }).Name;
  }
  std::string chooseOnGpu(size_t Count, host::DType Type = host::DType::F32) {
    return choose(Count, Type, CollectiveKind::AllReduce, 0, runtime::Target::Gpu);
  }
  int CudaEntry = 0;
  runtime::AlgorithmTable Table{0, 4};
};

TEST_F(Choice, TheNarrowestWindowHoldingTheSizeWins) {
  Table.add(algorithm("everything", 0, std::nullopt));
  Table.add(algorithm("small", 0, 4096));
  Table.add(algorithm("middle", 4096, 1 << 20));
  EXPECT_EQ(choose(1), "small");
  EXPECT_EQ(choose(1024), "small"); // 4096 bytes: both ends are inclusive.
  EXPECT_EQ(choose(1025), "middle");
  EXPECT_EQ(choose(1 << 20), "everything");
  EXPECT_EQ(choose(1024, host::DType::F64), "middle");
}

TEST_F(Choice, KernelsBeatThePlanInterpreterWhereTheyHaveTheType) {
  Table.add(algorithm("plan", 0, 4096));
  Table.add(algorithm("kernel", 0, std::nullopt, Executor::Kernel));
  EXPECT_EQ(choose(8), "kernel");
  EXPECT_EQ(choose(8, host::DType::F64), "plan");
  EXPECT_EQ(choose(1 << 20, host::DType::F64), "fallback");
}

TEST_F(Choice, EachTargetRunsOnlyItsOwnKernels) {
  Table.add(algorithm("host kernel", 0, std::nullopt, Executor::Kernel));
  Table.add(algorithm("cuda kernel", 0, std::nullopt, Executor::CudaKernel));
  Table.add(algorithm("plan", 0, 1 << 20));
  EXPECT_EQ(choose(8), "host kernel");
  EXPECT_EQ(chooseOnGpu(8), "cuda kernel");
  // Where no kernel has the type, the plan serves both targets.
  EXPECT_EQ(choose(8, host::DType::F64), "plan");
  EXPECT_EQ(chooseOnGpu(8, host::DType::F64), "plan");
  EXPECT_EQ(chooseOnGpu(1 << 20, host::DType::F64), "fallback");
}

// A plan chosen for a kind of call (in place or not, mapped buffers or not)
// serves calls of that kind before one chosen for any call, whatever their
// windows, and calls of another kind only where nothing else serves.
TEST_F(Choice, PlansChosenForTheCallsKindWin) {
  auto Chosen = [&](const char *Name, std::optional<bool> InPlace, std::optional<bool> Mapped,
                    std::optional<size_t> Max = std::nullopt) {
    runtime::Algorithm A = algorithm(Name, 0, Max);
    A.ForInPlace = InPlace;
    A.ForMapped = Mapped;
    return A;
  };
  auto Kind = [&](size_t Count, bool InPlace, bool Mapped) {
    runtime::Request R;
    R.Count = Count;
    R.InPlace = InPlace;
    R.Mapped = Mapped;
    return Table.choose(R, [&] { return algorithm("fallback", 0, std::nullopt); }).Name;
  };
  Table.add(Chosen("any call", std::nullopt, std::nullopt, 4096));
  Table.add(Chosen("in place", true, std::nullopt));
  Table.add(Chosen("in place, mapped", true, true));
  Table.add(Chosen("out of place, unmapped", false, false, 1 << 20));
  EXPECT_TRUE(Table.asksMapped());
  EXPECT_EQ(Kind(8, true, true), "in place, mapped");
  EXPECT_EQ(Kind(8, true, false), "in place");
  EXPECT_EQ(Kind(8, false, false), "out of place, unmapped");
  // Out of place on mapped buffers: one kind fits and one does not, so the
  // plan chosen for any call wins while its window holds the size; past it,
  // the best of the others.
  EXPECT_EQ(Kind(8, false, true), "any call");
  EXPECT_EQ(Kind(1 << 16, false, true), "out of place, unmapped");
  EXPECT_EQ(Kind(1 << 20, false, true), "in place, mapped");
}

TEST_F(Choice, NothingFittingFallsBackLoudly) {
  Table.add(algorithm("small", 0, 64));
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(choose(1000), "fallback");
  EXPECT_EQ(choose(2000), "fallback");
  EXPECT_EQ(choose(4, host::DType::F32, CollectiveKind::AllGather), "fallback");
  std::string Log = ::testing::internal::GetCapturedStderr();
  // Once per collective and root, whatever the debug level.
  EXPECT_NE(Log.find("cclc WARN rank 0: no loaded algorithm serves allreduce of 4000 B (f32, sum)"),
            std::string::npos)
      << Log;
  EXPECT_NE(Log.find("allgather"), std::string::npos) << Log;
  EXPECT_EQ(std::count(Log.begin(), Log.end(), '\n'), 2) << Log;
}

TEST_F(Choice, ChoicesAreLoggedOnceWithDebugInfo) {
  ScopedEnv Debug("CCLC_DEBUG", "INFO");
  runtime::AlgorithmTable Logged(0, 4);
  Logged.add(algorithm("everything", 0, std::nullopt));
  runtime::Request R;
  R.Count = 100;
  ::testing::internal::CaptureStderr();
  for (int I = 0; I < 3; ++I)
    Logged.choose(R, [&] { return algorithm("fallback", 0, std::nullopt); });
  std::string Log = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(Log, "cclc INFO rank 0: allreduce of 400 B (f32, sum) runs everything (test, plan "
                 "interpreter, 1 channel, sizes 0 B and up)\n");
}

TEST_F(Choice, GpuChoicesNameTheirExecutors) {
  ScopedEnv Debug("CCLC_DEBUG", "INFO");
  runtime::AlgorithmTable Logged(0, 4);
  Logged.add(algorithm("everything", 0, std::nullopt));
  Logged.add(algorithm("kernel", 0, 64, Executor::CudaKernel));
  runtime::Request R;
  R.Count = 100;
  R.Where = runtime::Target::Gpu;
  ::testing::internal::CaptureStderr();
  for (size_t Count : {100, 10, 100, 10}) {
    R.Count = Count;
    Logged.choose(R, [&] { return algorithm("fallback", 0, std::nullopt); });
  }
  R.Where = runtime::Target::Host;
  Logged.choose(R, [&] { return algorithm("fallback", 0, std::nullopt); });
  std::string Log = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(Log, "cclc INFO rank 0: allreduce of 400 B (f32, sum) runs everything (test, GPU plan "
                 "interpreter, 1 channel, sizes 0 B and up)\n"
                 "cclc INFO rank 0: allreduce of 40 B (f32, sum) runs kernel (test, generated CUDA "
                 "kernel, 1 channel, sizes 0 B..64 B)\n"
                 "cclc INFO rank 0: allreduce of 40 B (f32, sum) runs everything (test, plan "
                 "interpreter, 1 channel, sizes 0 B and up)\n");
}

} // namespace
} // namespace cclc::test
