//===- ExecTest.cpp - The host executors against the schedule's meaning ---===//
//
// Every algorithm of the library, compiled as `cclc compile --nranks N` does
// for 2 to 8 ranks, runs with every rank a thread (MemoryLinks) on the plan
// interpreter, and at one rank count on its generated host kernels and on
// both mixed across ranks; the outputs must equal the reference's
// (ExecReference.h) bit for bit, and integer sums must equal what the
// collective promises. Then the failure paths: a rank that stops, a rank that
// fails, and an abort.
//
//===----------------------------------------------------------------------===//

#include "ExecKernels.h"
#include "ExecReference.h"
#include "LibrarySchedule.h"

#include "compiler/Compile.h"
#include "common/Dispatch.h"
#include "runtime/exec/Interpreter.h"
#include "runtime/exec/MemoryLinks.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

namespace cclc {
namespace {

using host::DType;
using host::RedOp;

/// Small enough that larger counts take several rounds.
constexpr size_t SlotBytes = 4096;
/// A healthy collective here takes milliseconds; a hang fails the test, not the run.
constexpr std::chrono::milliseconds HealthyTimeout{20000};

/// The stems of algorithms/*.ccl, sorted.
std::vector<std::string> libraryAlgorithms() {
  std::vector<std::string> Stems;
  for (const auto &Entry :
       std::filesystem::directory_iterator(std::string(CCLC_SOURCE_DIR) + "/algorithms"))
    if (Entry.path().extension() == ".ccl")
      Stems.push_back(Entry.path().stem().string());
  std::sort(Stems.begin(), Stems.end());
  return Stems;
}

/// algorithms/<Stem>.ccl compiled for NRanks ranks without a topology, as
/// `cclc compile --nranks` does with Options; nullopt when the algorithm's
/// requirements exclude NRanks. Any other failure is a test failure.
std::optional<sched::Schedule> compileLibrary(const std::string &Stem, int32_t NRanks,
                                              const compiler::BuildOptions &Options = {}) {
  SourceManager SM;
  std::ostringstream Errors;
  DiagnosticEngine Diags(SM, Errors);
  std::unique_ptr<dsl::Algorithm> Algo = test::libraryAlgorithm(Stem, SM, Diags);
  std::ostringstream Log;
  std::optional<sched::Schedule> S =
      Algo ? compiler::buildSchedule(*Algo, target::flatTarget(NRanks), Options, Log, Diags)
           : std::nullopt;
  if (!S && Errors.str().find("is not met") == std::string::npos)
    ADD_FAILURE() << Stem << " for " << NRanks << " ranks:\n" << Errors.str();
  return S;
}

uint64_t splitMix(uint64_t X) {
  X += 0x9e3779b97f4a7c15ull;
  X = (X ^ (X >> 30)) * 0xbf58476d1ce4e5b9ull;
  X = (X ^ (X >> 27)) * 0x94d049bb133111ebull;
  return X ^ (X >> 31);
}

/// A deterministic pseudo-random input element. Floats have full mantissas
/// and varied exponents, so that a different reduction order shows in the
/// bits; integers stay small enough that no sum or product of up to eight
/// ranks overflows.
template <class T, class Op> T inputValue(uint64_t Key) {
  uint64_t R = splitMix(Key);
  if constexpr (std::is_integral_v<T>) {
    int64_t Limit = std::is_same_v<Op, host::Sum> && sizeof(T) >= 4 ? 1 << 20 : 4;
    int64_t Span = std::is_signed_v<T> ? 2 * Limit + 1 : Limit + 1;
    return T(int64_t(R % uint64_t(Span)) - (std::is_signed_v<T> ? Limit : 0));
  } else {
    float Mantissa = float(int64_t(R >> 40) - (int64_t(1) << 23)) / float(1 << 23);
    float Value = std::ldexp(Mantissa, int(R % 9) - 4);
    if constexpr (std::is_floating_point_v<T>)
      return T(Value);
    else
      return T::fromFloat(Value);
  }
}

/// The ranks' arrays of a collective of Count elements: inputs from Seed,
/// output and scratch filled with a pattern no executor writes by chance.
template <class T, class Op>
std::vector<test::RankArrays<T>> makeArrays(const exec::ScheduleShape &Shape, int32_t NRanks,
                                            size_t Count, uint64_t Seed) {
  std::vector<test::RankArrays<T>> Ranks(NRanks);
  for (int32_t R = 0; R < NRanks; ++R) {
    test::RankArrays<T> &A = Ranks[R];
    A.Input.resize(size_t(Shape.InputUnits) * Count);
    for (size_t I = 0; I < A.Input.size(); ++I)
      A.Input[I] = inputValue<T, Op>(Seed ^ (uint64_t(R) << 48) ^ I);
    A.Output.resize(size_t(Shape.OutputUnits) * Count);
    A.Scratch.resize(size_t(Shape.ScratchUnits) * Count);
    std::memset(static_cast<void *>(A.Output.data()), 0xa5, A.Output.size() * sizeof(T));
    std::memset(static_cast<void *>(A.Scratch.data()), 0x5a, A.Scratch.size() * sizeof(T));
  }
  return Ranks;
}

/// Runs a collective on Ranks with one thread per rank and channel; every
/// rank must finish.
template <class T>
void runThreads(const sched::Schedule &S, size_t Count, std::vector<test::RankArrays<T>> &Ranks,
                const exec::ChannelFn &Run) {
  exec::MemoryLinks Net(S.NRanks, S.NChannels, uint32_t(S.BufferSlots), SlotBytes,
                        HealthyTimeout);
  std::vector<host::KernelArgs> Args(S.NRanks);
  for (int32_t R = 0; R < S.NRanks; ++R) {
    Args[R].Input = Ranks[R].Input.data();
    Args[R].Output = Ranks[R].Output.data();
    Args[R].Scratch = Ranks[R].Scratch.empty() ? nullptr : Ranks[R].Scratch.data();
    Args[R].Count = Count;
    Args[R].SlotBytes = SlotBytes;
  }
  std::vector<std::optional<host::CommError>> Errors = exec::runRanks(Net, Args, Run);
  for (int32_t R = 0; R < S.NRanks; ++R)
    EXPECT_FALSE(Errors[R]) << "rank " << R << ": " << Errors[R]->what();
}

/// Got's inputs and outputs have the same bits as Want's.
template <class T>
void expectSameBits(const std::vector<test::RankArrays<T>> &Got,
                    const std::vector<test::RankArrays<T>> &Want, const std::string &Executor) {
  auto Compare = [&](const std::vector<T> &G, const std::vector<T> &W, int32_t Rank,
                     const char *Buffer) {
    ASSERT_EQ(G.size(), W.size());
    for (size_t I = 0; I < G.size(); ++I)
      if (std::memcmp(&G[I], &W[I], sizeof(T)) != 0) {
        ADD_FAILURE() << Executor << ": rank " << Rank << " " << Buffer << "[" << I
                      << "] differs from the reference";
        return;
      }
  };
  for (size_t R = 0; R < Want.size(); ++R) {
    Compare(Got[R].Input, Want[R].Input, int32_t(R), "input");
    Compare(Got[R].Output, Want[R].Output, int32_t(R), "output");
  }
}

/// Integer sums have one right answer whatever the order: what the
/// collective promises (Postcondition.h), computed directly from the inputs.
void expectIntegerSums(const sched::Schedule &S, size_t Count,
                       const std::vector<test::RankArrays<int32_t>> &Ranks) {
  auto SumOver = [&](size_t Index) {
    int64_t Sum = 0;
    for (const test::RankArrays<int32_t> &A : Ranks)
      Sum += A.Input[Index];
    return int32_t(Sum);
  };
  for (int32_t R = 0; R < S.NRanks; ++R) {
    const std::vector<int32_t> &Out = Ranks[R].Output;
    for (size_t I = 0; I < Out.size(); ++I) {
      int32_t Want = 0;
      switch (S.Collective) {
      case plan::CollectiveKind::AllReduce: Want = SumOver(I); break;
      case plan::CollectiveKind::Reduce:
        if (R != S.Root)
          continue;
        Want = SumOver(I);
        break;
      case plan::CollectiveKind::Broadcast: Want = Ranks[S.Root].Input[I]; break;
      case plan::CollectiveKind::AllGather: Want = Ranks[I / Count].Input[I % Count]; break;
      case plan::CollectiveKind::ReduceScatter: Want = SumOver(size_t(R) * Count + I); break;
      case plan::CollectiveKind::AllToAll:
        Want = Ranks[I / Count].Input[size_t(R) * Count + I % Count];
        break;
      }
      if (Out[I] != Want) {
        ADD_FAILURE() << "rank " << R << " output[" << I << "] is " << Out[I] << ", not " << Want;
        return;
      }
    }
  }
}

/// One way to run a rank's channel for a given type and operator.
struct Executor {
  std::string Name;
  exec::ChannelFn Run;
};

/// The executors of one schedule: the interpreter, and whatever else a test
/// compares with it.
using ExecutorsFn = std::function<std::vector<Executor>(DType, RedOp)>;

ExecutorsFn interpreterOnly(const exec::Interpreter &Interp) {
  return [&Interp](DType Type, RedOp Op) {
    return std::vector<Executor>{
        {"interpreter", [&Interp, Type, Op](const host::KernelArgs &Args, int Channel) {
           Interp.run(Type, Op, Args, Channel);
         }}};
  };
}

/// The interpreter, and its trace of each channel (host/Trace.h), run
/// twice: a repeat of a call on the same buffers runs the trace again.
ExecutorsFn interpreterAndTraces(const exec::Interpreter &Interp) {
  return [&Interp](DType Type, RedOp Op) {
    std::vector<Executor> Executors = interpreterOnly(Interp)(Type, Op);
    Executors.push_back(
        {"trace run twice", [&Interp, Type, Op](const host::KernelArgs &Args, int Channel) {
           std::unique_ptr<host::Trace> Recorded = Interp.trace(Type, Op, Args, Channel);
           Recorded->run();
           Recorded->run();
         }});
    return Executors;
  };
}

/// Count elements of Type reduced with Op: every executor against the
/// reference.
void checkCase(const sched::Schedule &S, const ExecutorsFn &Executors, DType Type, RedOp Op,
               size_t Count) {
  SCOPED_TRACE(std::string(plan::dtypeName(Type)) + " " + std::string(plan::redOpName(Op)) +
               " count " + std::to_string(Count));
  exec::ScheduleShape Shape = plan::scheduleShape(S);
  kern::withTypeAndOperator<host::TypeSet>(Type, Op, [&]<class T, class O>() {
    const uint64_t Seed = splitMix(Count * 131 + size_t(Type) * 7 + size_t(Op));
    std::vector<test::RankArrays<T>> Want = makeArrays<T, O>(Shape, S.NRanks, Count, Seed);
    test::Reference<T, O>(S, Count, SlotBytes, Want).run();
    if constexpr (std::is_same_v<T, int32_t> && std::is_same_v<O, host::Sum>)
      expectIntegerSums(S, Count, Want);
    for (const Executor &E : Executors(Type, Op)) {
      std::vector<test::RankArrays<T>> Got = makeArrays<T, O>(Shape, S.NRanks, Count, Seed);
      runThreads(S, Count, Got, E.Run);
      expectSameBits(Got, Want, E.Name);
    }
  });
}

/// A count that takes two full rounds and a partial one for elements of Type.
size_t severalRounds(const sched::Schedule &S, DType Type) {
  kern::RoundPlan Plan = kern::RoundPlan::make(plan::scheduleShape(S).Grid, 1,
                                               plan::dtypeBytes(Type), SlotBytes);
  return 2 * Plan.MaxRoundElems + 333;
}

constexpr std::array TestedTypes = {DType::F32, DType::BF16, DType::I32};
constexpr std::array TestedOps = {RedOp::Sum, RedOp::Max};

/// The full matrix of types, operators and counts.
void checkMatrix(const sched::Schedule &S, const ExecutorsFn &Executors) {
  for (DType Type : TestedTypes)
    for (RedOp Op : TestedOps)
      for (size_t Count : {size_t(0), size_t(1), size_t(1001), severalRounds(S, Type)})
        checkCase(S, Executors, Type, Op, Count);
}

//===----------------------------------------------------------------------===//
// Every library algorithm on the interpreter
//===----------------------------------------------------------------------===//

class LibraryExec : public testing::TestWithParam<std::string> {};

TEST_P(LibraryExec, InterpreterAndItsTracesMatchReference) {
  const std::string &Stem = GetParam();
  std::vector<int32_t> Supported;
  for (int32_t NRanks = 2; NRanks <= 8; ++NRanks) {
    SCOPED_TRACE(Stem + " on " + std::to_string(NRanks) + " ranks");
    std::optional<sched::Schedule> S = compileLibrary(Stem, NRanks);
    if (!S)
      continue;
    Supported.push_back(NRanks);
    exec::Interpreter Interp(*S);
    checkMatrix(Interp.schedule(), interpreterAndTraces(Interp));

    // Finer chunks, software pipelining and, for flat algorithms, two channels.
    compiler::BuildOptions Finer;
    Finer.Pipeline.ChunksFactor = 2;
    Finer.Channels = S->Topology == plan::TopologyKind::None ? 2 : 0;
    SCOPED_TRACE("chunks factor 2, " + std::to_string(Finer.Channels) + " channels");
    std::optional<sched::Schedule> Pipelined = compileLibrary(Stem, NRanks, Finer);
    ASSERT_TRUE(Pipelined);
    exec::Interpreter PipelinedInterp(*Pipelined);
    checkMatrix(PipelinedInterp.schedule(), interpreterAndTraces(PipelinedInterp));
  }
  for (int32_t NRanks : {2, 4, 8})
    EXPECT_NE(std::find(Supported.begin(), Supported.end(), NRanks), Supported.end())
        << Stem << " does not compile for " << NRanks << " ranks";
}

INSTANTIATE_TEST_SUITE_P(Algorithms, LibraryExec, testing::ValuesIn(libraryAlgorithms()),
                         [](const testing::TestParamInfo<std::string> &Info) {
                           std::string Name = Info.param;
                           std::replace(Name.begin(), Name.end(), '-', '_');
                           return Name;
                         });

TEST(Interpreter, EveryTypeAndOperator) {
  for (const char *Stem : {"ring-allreduce", "tree-allreduce"}) {
    std::optional<sched::Schedule> S = compileLibrary(Stem, 3);
    ASSERT_TRUE(S);
    exec::Interpreter Interp(*S);
    for (int Type = 0; Type <= int(DType::U64); ++Type)
      for (int Op = 0; Op <= int(RedOp::Max); ++Op)
        checkCase(Interp.schedule(), interpreterOnly(Interp), DType(Type), RedOp(Op), 1001);
  }
}

TEST(Interpreter, ScheduleShape) {
  std::optional<sched::Schedule> Ring = compileLibrary("ring-allreduce", 4);
  ASSERT_TRUE(Ring);
  exec::ScheduleShape Shape = plan::scheduleShape(*Ring);
  EXPECT_EQ(Shape.Grid.NChannels, 1);
  EXPECT_EQ(Shape.Grid.ChunksPerChannel, 4);
  EXPECT_EQ(Shape.Grid.MaxSliceChunks, 1);
  EXPECT_EQ(Shape.ScratchUnits, 0) << "ring allreduce needs no scratch";
  EXPECT_EQ(exec::minSlotBytes(Shape.Grid, 4), 16u);

  std::optional<sched::Schedule> Halving = compileLibrary("halving-doubling-allreduce", 8);
  ASSERT_TRUE(Halving);
  EXPECT_EQ(plan::scheduleShape(*Halving).Grid.MaxSliceChunks, 4)
      << "the first exchange moves half the chunks";

  std::optional<sched::Schedule> Scatter = compileLibrary("ring-reduce-scatter", 4);
  ASSERT_TRUE(Scatter);
  Shape = plan::scheduleShape(*Scatter);
  EXPECT_EQ(Shape.InputUnits, 4);
  EXPECT_EQ(Shape.OutputUnits, 1);
  EXPECT_EQ(Shape.ScratchUnits, 4);
}

/// The encoding both interpreters run: one exchange per butterfly stage, with
/// the peers and slices of the send and the receive it pairs.
TEST(Interpreter, EncodedProgram) {
  std::optional<sched::Schedule> Butterfly = compileLibrary("butterfly-allreduce", 4);
  ASSERT_TRUE(Butterfly);
  exec::ScheduleShape Shape = plan::scheduleShape(*Butterfly);
  plan::MessageMatch Match(*Butterfly);
  for (int Rank = 0; Rank < 4; ++Rank) {
    plan::EncodedProgram P = plan::encodeProgram(*Butterfly, Shape, Rank, Match);
    const std::vector<sched::Step> &Steps = Butterfly->Ranks[size_t(Rank)].Channels[0].Steps;
    ASSERT_EQ(P.ChannelBegin.size(), size_t(Shape.Grid.NChannels) + 1);
    EXPECT_EQ(P.ChannelBegin.front(), 0u);
    EXPECT_EQ(P.ChannelBegin.back(), P.Steps.size());
    size_t Exchanges = 0, Step = 0;
    for (const kern::ProgramStep &S : P.Steps) {
      if (S.Op != kern::OpKind::ExchangeReduce) {
        ++Step;
        continue;
      }
      ++Exchanges;
      const sched::Step &Send = Steps[Step], &Receive = Steps[Step + 1];
      ASSERT_EQ(Send.Op, sched::OpKind::Send);
      ASSERT_TRUE(Send.WithNext);
      EXPECT_EQ(S.SendPeer, Send.Peer);
      EXPECT_EQ(S.RecvPeer, Receive.Peer);
      EXPECT_EQ(S.Src.Chunk, Send.Src.Chunk);
      EXPECT_EQ(S.Dst.Count, Receive.Dst.Count);
      Step += 2;
    }
    EXPECT_EQ(Step, Steps.size());
    EXPECT_EQ(Exchanges, 2u) << "rank " << Rank << ": one exchange per stage of log2(4)";
  }
}

//===----------------------------------------------------------------------===//
// Generated kernels
//===----------------------------------------------------------------------===//

/// The kernels `cclc compile --emit=host` generated for one library algorithm.
struct GeneratedAlgorithm {
  std::string Stem;
  int32_t NRanks;
  std::span<const host::KernelInfo> Kernels;
};

const std::vector<GeneratedAlgorithm> &generatedAlgorithms() {
  static const std::vector<GeneratedAlgorithm> List = {CCLC_EXEC_KERNELS};
  return List;
}

class GeneratedExec : public testing::TestWithParam<GeneratedAlgorithm> {};

TEST_P(GeneratedExec, KernelsMatchInterpreterAndReference) {
  const GeneratedAlgorithm &Gen = GetParam();
  std::optional<sched::Schedule> S = compileLibrary(Gen.Stem, Gen.NRanks);
  ASSERT_TRUE(S);
  exec::Interpreter Interp(*S);
  const exec::ScheduleShape &Shape = Interp.shape();
  ASSERT_EQ(Gen.Kernels.size(), TestedTypes.size() * TestedOps.size());
  for (const host::KernelInfo &Info : Gen.Kernels) {
    EXPECT_EQ(Info.Algorithm, S->Algorithm);
    EXPECT_EQ(Info.NRanks, S->NRanks);
    EXPECT_EQ(Info.Root, S->Root);
    EXPECT_EQ(Info.Shape.NChannels, Shape.Grid.NChannels);
    EXPECT_EQ(Info.Shape.ChunksPerChannel, Shape.Grid.ChunksPerChannel);
    EXPECT_EQ(Info.Shape.MaxSliceChunks, Shape.Grid.MaxSliceChunks)
        << "kernels and the interpreter must cut rounds alike";
    EXPECT_EQ(Info.InputUnits, Shape.InputUnits);
    EXPECT_EQ(Info.OutputUnits, Shape.OutputUnits);
    EXPECT_GE(Info.ScratchUnits, Shape.ScratchUnits);
  }
  auto Executors = [&](DType Type, RedOp Op) {
    auto Matches = [&](const host::KernelInfo &K) { return K.Type == Type && K.Op == Op; };
    auto Found = std::find_if(Gen.Kernels.begin(), Gen.Kernels.end(), Matches);
    if (Found == Gen.Kernels.end()) {
      ADD_FAILURE() << "no kernel for " << plan::dtypeName(Type) << " " << plan::redOpName(Op);
      return std::vector<Executor>{};
    }
    host::KernelFn Kernel = Found->Run;
    auto Interpret = [&Interp, Type, Op](const host::KernelArgs &Args, int Channel) {
      Interp.run(Type, Op, Args, Channel);
    };
    return std::vector<Executor>{
        {"interpreter", Interpret},
        {"kernel", Kernel},
        // Ranks may run different executors: their messages are the same.
        {"kernel on odd ranks, interpreter on even",
         [Kernel, Interpret](const host::KernelArgs &Args, int Channel) {
           if (Args.Rank % 2)
             Kernel(Args, Channel);
           else
             Interpret(Args, Channel);
         }}};
  };
  checkMatrix(Interp.schedule(), Executors);
}

INSTANTIATE_TEST_SUITE_P(Algorithms, GeneratedExec, testing::ValuesIn(generatedAlgorithms()),
                         [](const testing::TestParamInfo<GeneratedAlgorithm> &Info) {
                           std::string Name =
                               Info.param.Stem + "_" + std::to_string(Info.param.NRanks);
                           std::replace(Name.begin(), Name.end(), '-', '_');
                           return Name;
                         });

TEST(GeneratedExec, EveryLibraryAlgorithmHasKernels) {
  std::vector<std::string> Generated;
  for (const GeneratedAlgorithm &Gen : generatedAlgorithms())
    Generated.push_back(Gen.Stem);
  std::sort(Generated.begin(), Generated.end());
  EXPECT_EQ(Generated, libraryAlgorithms());
}

//===----------------------------------------------------------------------===//
// Failures: every rank stops, none hangs
//===----------------------------------------------------------------------===//

/// Ring allreduce on four ranks, rank Stopped running Stop instead of the
/// interpreter and Meanwhile running beside them: every rank's error, the
/// time the collective took and whether the abort flag went up.
struct FailedRun {
  std::vector<std::optional<host::CommError>> Errors;
  std::chrono::milliseconds Took;
  bool Aborted = false;
};
FailedRun runWithStoppedRank(std::chrono::milliseconds Timeout, int Stopped,
                             const exec::ChannelFn &Stop,
                             const std::function<void(exec::MemoryLinks &)> &Meanwhile = {}) {
  std::optional<sched::Schedule> S = compileLibrary("ring-allreduce", 4);
  EXPECT_TRUE(S);
  if (!S)
    return {};
  exec::Interpreter Interp(*S);
  const size_t Count = 1001;
  std::vector<test::RankArrays<float>> Ranks =
      makeArrays<float, host::Sum>(Interp.shape(), S->NRanks, Count, 1);
  exec::MemoryLinks Net(S->NRanks, S->NChannels, uint32_t(S->BufferSlots), SlotBytes, Timeout);
  std::vector<host::KernelArgs> Args(S->NRanks);
  for (int32_t R = 0; R < S->NRanks; ++R) {
    Args[R].Input = Ranks[R].Input.data();
    Args[R].Output = Ranks[R].Output.data();
    Args[R].Count = Count;
    Args[R].SlotBytes = SlotBytes;
  }
  std::jthread Side;
  if (Meanwhile)
    Side = std::jthread([&] { Meanwhile(Net); });
  auto Start = std::chrono::steady_clock::now();
  std::vector<std::optional<host::CommError>> Errors =
      exec::runRanks(Net, Args, [&](const host::KernelArgs &A, int Channel) {
        if (A.Rank == Stopped)
          Stop(A, Channel);
        else
          Interp.run(DType::F32, RedOp::Sum, A, Channel);
      });
  auto Took = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - Start);
  return {std::move(Errors), Took, Net.aborted()};
}

int countStatus(const FailedRun &Run, host::CommStatus Status) {
  return int(std::count_if(Run.Errors.begin(), Run.Errors.end(), [&](const auto &E) {
    return E && E->status() == Status;
  }));
}

TEST(MemoryLinks, StoppedRankMakesTheOthersTimeOut) {
  FailedRun Run = runWithStoppedRank(std::chrono::milliseconds(200), 2,
                                     [](const host::KernelArgs &, int) {});
  ASSERT_EQ(Run.Errors.size(), 4u);
  EXPECT_FALSE(Run.Errors[2]) << "the stopped rank did nothing that could fail";
  // The first rank to wait on the stopped one times out; the abort it raises
  // stops the rest, whether they were waiting yet or not.
  EXPECT_GE(countStatus(Run, host::CommStatus::Timeout), 1);
  EXPECT_EQ(countStatus(Run, host::CommStatus::Timeout) +
                countStatus(Run, host::CommStatus::Aborted),
            3);
  for (const auto &E : Run.Errors)
    if (E && E->status() == host::CommStatus::Timeout) {
      EXPECT_NE(std::string(E->what()).find("timed out after 200 ms"), std::string::npos)
          << E->what();
    }
  EXPECT_LT(Run.Took, std::chrono::seconds(5));
}

TEST(MemoryLinks, AbortStopsEveryRank) {
  FailedRun Run = runWithStoppedRank(
      std::chrono::minutes(1), 2, [](const host::KernelArgs &, int) {},
      [](exec::MemoryLinks &Net) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        Net.abort();
      });
  EXPECT_EQ(countStatus(Run, host::CommStatus::Aborted), 3);
  EXPECT_LT(Run.Took, std::chrono::seconds(10)) << "the ranks waited for their timeout";
}

TEST(MemoryLinks, FailingRankStopsTheOthers) {
  FailedRun Run = runWithStoppedRank(std::chrono::minutes(1), 1,
                                     [](const host::KernelArgs &, int) {
                                       throw host::CommError(host::CommStatus::Mismatch,
                                                             "this rank gives up");
                                     });
  ASSERT_EQ(Run.Errors.size(), 4u);
  ASSERT_TRUE(Run.Errors[1]);
  EXPECT_EQ(Run.Errors[1]->status(), host::CommStatus::Mismatch);
  EXPECT_TRUE(Run.Aborted) << "the failing rank raises the abort flag";
  EXPECT_EQ(countStatus(Run, host::CommStatus::Aborted), 3);
  EXPECT_LT(Run.Took, std::chrono::seconds(10)) << "the ranks waited for their timeout";
}

TEST(MemoryLinks, BugsAreRethrown) {
  EXPECT_THROW(runWithStoppedRank(std::chrono::minutes(1), 3,
                                  [](const host::KernelArgs &, int) {
                                    throw std::logic_error("not a communication failure");
                                  }),
               std::logic_error);
}

} // namespace
} // namespace cclc
