//===- ConnectionTest.cu - Two ranks on one GPU, and a host proxy ---------===//
//
// Two ranks run as two kernels on one GPU, on streams of their own, over
// FIFOs in device memory: allreduces written the way generated kernels are
// (the kernel skeleton, its round loop and the primitives) must give the
// host operators' result, through small FIFOs that wrap many times. A rank
// whose peer never comes, a raised abort flag and ranks that disagree on
// the message sizes must each end the kernels with the right status instead
// of a hang; so must ranks whose launches carry different calls' stamps,
// at their first message. A host thread using host/Connection.h must talk
// to a kernel through the same FIFO memory.
//
//===----------------------------------------------------------------------===//

#include "cuda/Interpreter.cuh"
#include "cuda/Kernel.cuh"
#include "host/Connection.h"
#include "host/Types.h"

#include "GpuTest.h"

#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <cstring>
#include <iterator>
#include <memory>
#include <thread>
#include <type_traits>
#include <vector>

using namespace cclc;
using namespace cclc::gputest;

namespace {

/// How the two ranks of an allreduce exchange their chunks.
enum class Variant {
  SendRecv, ///< send + recv_reduce, then send + recv.
  Exchange, ///< exchange_reduce, then exchange.
  Ring,     ///< rank 0 sends and receives; rank 1 runs recv_reduce_send.
};

/// Two channels of two chunks each: channel c holds chunks 2c and 2c + 1,
/// and rank r reduces chunk 2c + r of every channel.
constexpr int Channels = 2;
__host__ __device__ constexpr kern::GridShape pairShape() { return {Channels, 2, 2}; }
constexpr uint32_t NumSlots = 2;
constexpr size_t SlotBytes = 1024;
constexpr int BlockThreads = 256;

/// An allreduce over two ranks, as cclc would generate it.
/// The kernel of Variant V, with the primitives of Prims: the interpreter's
/// table of the simple protocol's, or of a line protocol's.
template <class T, class Op, Variant V, class Prims>
__global__ void allReduce(const cuda::KernelArgs Args) {
  using cuda::Slice;
  int Channel = blockIdx.x, Peer = 1 - Args.Rank;
  int First = Channel * 2, Mine = First + Args.Rank, Theirs = First + Peer;
  cuda::forEachRound<T>(Args, pairShape(), [&](const kern::Layout &L) {
    Slice<const T> Input{static_cast<const T *>(Args.Input), &L, 1, First, 2};
    auto Out = [&](int Chunk, int N) {
      return Slice<T>{static_cast<T *>(Args.Output), &L, 1, Chunk, N};
    };
    auto Sent = [&](int Chunk) {
      return Slice<const T>{static_cast<const T *>(Args.Output), &L, 1, Chunk, 1};
    };
    cuda::Outbox &To = Args.Net.out(Peer, Channel);
    cuda::Inbox &From = Args.Net.in(Peer, Channel);
    if constexpr (V == Variant::SendRecv) {
      Prims::template copy<T, Op>(Input, Out(First, 2));
      Prims::template send<T, Op>(To, Sent(Theirs));
      Prims::template recvReduce<T, Op>(From, Out(Mine, 1));
      Prims::template send<T, Op>(To, Sent(Mine));
      Prims::template recv<T, Op>(From, Out(Theirs, 1));
    } else if constexpr (V == Variant::Exchange) {
      Prims::template copy<T, Op>(Input, Out(First, 2));
      Prims::template exchangeReduce<T, Op>(To, From, Sent(Theirs), Out(Mine, 1));
      Prims::template exchange<T, Op>(To, From, Sent(Mine), Out(Theirs, 1));
    } else if (Args.Rank == 0) {
      Prims::template send<T, Op>(To, Input);
      Prims::template recv<T, Op>(From, Out(First, 2));
    } else {
      Prims::template copy<T, Op>(Input, Out(First, 2));
      Prims::template recvReduceSend<T, Op>(From, To, Out(First, 2));
    }
  });
}

template <class T, class Op, Variant V, class Prims = cuda::PrimitiveTable>
cuda::KernelInfo allReduceInfo() {
  return {"pair",
          "allreduce",
          2,
          0,
          pairShape(),
          1,
          1,
          0,
          cuda::DType::F32,
          cuda::RedOp::Sum,
          0,
          0,
          BlockThreads,
          allReduce<T, Op, V, Prims>};
}

/// The FIFOs, connection tables, abort flag and status words of two ranks.
class RankPair {
public:
  RankPair() {
    for (int From = 0; From < 2; ++From)
      for (int Channel = 0; Channel < Channels; ++Channel) {
        auto &Mem = Fifos[From][Channel];
        Mem = std::make_unique<DeviceBuffer<std::byte>>(cuda::Fifo::bytesFor(NumSlots, SlotBytes));
        CCLC_CUDA(cuda::clearFifo(fifo(From, Channel), nullptr));
      }
    for (int Rank = 0; Rank < 2; ++Rank) {
      int Peer = 1 - Rank;
      std::vector<cuda::Outbox> Outs(Channels * 2);
      std::vector<cuda::Inbox> Ins(Channels * 2);
      for (int Channel = 0; Channel < Channels; ++Channel) {
        // Both ends are kernels on one GPU: steps of the line protocols may
        // use it.
        cuda::Outbox &Out = Outs[Channel * 2 + Peer] =
            cuda::Outbox::inHeader(fifo(Rank, Channel), Peer);
        cuda::Inbox &In = Ins[Channel * 2 + Peer] = cuda::Inbox::inHeader(fifo(Peer, Channel), Peer);
        Out.LowLatency = In.LowLatency = true;
        Out.WholeLines = In.WholeLines = true;
      }
      OutTables[Rank] = std::make_unique<DeviceBuffer<cuda::Outbox>>(Outs.size());
      OutTables[Rank]->upload(Outs);
      InTables[Rank] = std::make_unique<DeviceBuffer<cuda::Inbox>>(Ins.size());
      InTables[Rank]->upload(Ins);
      CCLC_CUDA(cudaStreamCreateWithFlags(&Streams[Rank], cudaStreamNonBlocking));
    }
    CCLC_CUDA(cudaStreamCreateWithFlags(&Reader, cudaStreamNonBlocking));
    CCLC_CUDA(cudaMemset(Status.get(), 0, Status.bytes()));
    CCLC_CUDA(cudaDeviceSynchronize());
  }
  ~RankPair() {
    for (cudaStream_t S : Streams)
      cudaStreamDestroy(S);
    cudaStreamDestroy(Reader);
  }

  cuda::Fifo fifo(int From, int Channel) const {
    return cuda::Fifo::place(Fifos[From][Channel]->get(), NumSlots, SlotBytes);
  }
  cuda::KernelStatus status(int Rank) const { return Status.download()[Rank]; }
  cudaStream_t stream(int Rank) const { return Streams[Rank]; }
  /// Rank's status word as it is now, read while kernels may run.
  cuda::KernelStatus statusNow(int Rank) const {
    cuda::KernelStatus S{};
    CCLC_CUDA(cudaMemcpyAsync(&S, Status.get() + Rank, sizeof S, cudaMemcpyDeviceToHost, Reader));
    CCLC_CUDA(cudaStreamSynchronize(Reader));
    return S;
  }
  uint32_t &abort() const { return *Abort.host(); }
  /// The running blocks of both ranks' kernels.
  uint32_t inFlight() const { return reinterpret_cast<volatile uint32_t *>(Busy.host())[0]; }

  /// Rank's arguments for buffers of Count elements.
  cuda::KernelArgs args(int Rank, const void *Input, void *Output, size_t Count,
                        uint64_t TimeoutNs) const {
    cuda::KernelArgs A;
    A.Rank = Rank;
    A.Input = Input;
    A.Output = Output;
    A.Count = Count;
    A.SlotBytes = SlotBytes;
    A.Net = {OutTables[Rank]->get(), InTables[Rank]->get(), 2};
    A.Abort = Abort.device();
    A.Status = Status.get() + Rank;
    A.TimeoutNs = TimeoutNs;
    A.InFlight = Busy.device();
    return A;
  }
  /// Loads Info's kernel now. CUDA loads a kernel at its first launch unless
  /// told otherwise, and that load may wait for the kernels running on the
  /// device: a kernel launched beside another that waits for it must be
  /// loaded before the other starts.
  static void load(const cuda::KernelInfo &Info) {
    cudaFuncAttributes Attributes;
    CCLC_CUDA(cudaFuncGetAttributes(&Attributes, reinterpret_cast<const void *>(Info.Run)));
  }
  /// Launches Info for the ranks in Args (one or two) without waiting.
  void start(const cuda::KernelInfo &Info, const std::vector<cuda::KernelArgs> &Args) {
    for (const cuda::KernelArgs &A : Args) {
      std::string Why;
      ASSERT_EQ(cudaSuccess, cuda::launch(Info, A, Streams[A.Rank], Why)) << Why;
    }
  }
  /// Waits for the kernels of the ranks in Args.
  void wait(const std::vector<cuda::KernelArgs> &Args) {
    for (const cuda::KernelArgs &A : Args)
      CCLC_CUDA(cudaStreamSynchronize(Streams[A.Rank]));
  }
  /// Launches Info for the ranks in Args (one or two) and waits for them.
  void run(const cuda::KernelInfo &Info, const std::vector<cuda::KernelArgs> &Args) {
    start(Info, Args);
    wait(Args);
  }

private:
  std::unique_ptr<DeviceBuffer<std::byte>> Fifos[2][Channels];
  std::unique_ptr<DeviceBuffer<cuda::Outbox>> OutTables[2];
  std::unique_ptr<DeviceBuffer<cuda::Inbox>> InTables[2];
  MappedBuffer<uint32_t> Abort, Busy;
  DeviceBuffer<cuda::KernelStatus> Status{2};
  cudaStream_t Streams[2] = {};
  /// Reads the status words while the ranks' streams run.
  cudaStream_t Reader = nullptr;
};

/// Values whose reductions stay finite and exact enough to compare bits: the
/// device and the host apply the same operators in the same order.
template <class H> std::vector<H> inputOf(int Rank, size_t Count) {
  std::vector<H> V(Count);
  for (size_t I = 0; I < Count; ++I) {
    int64_t X = int64_t((I * 7 + Rank * 13) % 23) - 11;
    if constexpr (host::IsHalf<H>)
      V[I] = H::fromFloat(float(X) / 4);
    else
      V[I] = H(X);
  }
  return V;
}

/// Which rank reduces each element (rank r owns chunk 2c + r of channel c).
std::vector<int> owners(size_t Count, size_t ElemBytes) {
  std::vector<int> Owner(Count, -1);
  kern::RoundPlan Plan = kern::RoundPlan::make(pairShape(), Count, ElemBytes, SlotBytes);
  for (size_t R = 0; R < Plan.Rounds; ++R) {
    kern::Layout L = Plan.round(R, ElemBytes);
    for (int32_t Chunk = 0; Chunk < pairShape().chunksPerUnit(); ++Chunk) {
      kern::Segment S = L.chunk(1, Chunk);
      for (size_t I = S.Begin; I < S.Begin + S.Elems; ++I)
        Owner[I] = Chunk % 2;
    }
  }
  return Owner;
}

/// The stamp of call Seq of an allreduce of Count elements with operator Op.
kern::CallStamp callStamp(uint64_t Seq, size_t Count, uint8_t Op) {
  kern::CallStamp S;
  S.Seq = Seq;
  S.Count = Count;
  S.Plan = 0x5eed;
  S.Op = Op;
  return S;
}

/// Runs the allreduce variant V of D (host type H) with DOp on both ranks,
/// as two calls of one stamp, and checks both outputs of the second against
/// HOp on the host.
/// The tables of primitives the kernels run with.
using Simple = cuda::PrimitiveTable;
using LL = cuda::LineTable<kern::Protocol::LL>;
using LL128 = cuda::LineTable<kern::Protocol::LL128>;

/// Two calls of Count elements (by default many rounds, the last one
/// ragged) of Variant V with Prims' primitives give every element right.
template <class D, class H, class DOp, class HOp, Variant V, class Prims = Simple>
void checkAllReduce(size_t Count = 10007) {
  RankPair Ranks;
  std::vector<H> In[2] = {inputOf<H>(0, Count), inputOf<H>(1, Count)};
  std::vector<std::unique_ptr<DeviceBuffer<D>>> Inputs, Outputs;
  std::vector<cuda::KernelArgs> Args;
  for (int Rank = 0; Rank < 2; ++Rank) {
    Inputs.push_back(std::make_unique<DeviceBuffer<D>>(Count));
    Outputs.push_back(std::make_unique<DeviceBuffer<D>>(Count));
    CCLC_CUDA(cudaMemcpy(Inputs[Rank]->get(), In[Rank].data(), Count * sizeof(D),
                         cudaMemcpyHostToDevice));
    Args.push_back(
        Ranks.args(Rank, Inputs[Rank]->get(), Outputs[Rank]->get(), Count, 10'000'000'000));
  }
  for (uint64_t Seq : {1, 2}) {
    for (cuda::KernelArgs &A : Args)
      A.Call = callStamp(Seq, Count, 0);
    Ranks.run(allReduceInfo<D, DOp, V, Prims>(), Args);
    for (int Rank = 0; Rank < 2; ++Rank)
      ASSERT_EQ(uint32_t(cuda::CommStatus::Ok), Ranks.status(Rank).Code)
          << "call " << Seq << ", rank " << Rank << ": " << cuda::describe(Ranks.status(Rank));
  }
  std::vector<int> Owner = owners(Count, sizeof(D));
  for (int Rank = 0; Rank < 2; ++Rank) {
    std::vector<D> Got = Outputs[Rank]->download();
    for (size_t I = 0; I < Count; ++I) {
      // The rank that reduces an element combines its own value with its peer's.
      ASSERT_NE(-1, Owner[I]) << "element " << I << " is in no chunk";
      int Reducer = V == Variant::Ring ? 1 : Owner[I];
      H Want = HOp()(In[Reducer][I], In[1 - Reducer][I]);
      ASSERT_EQ(0, std::memcmp(&Got[I], &Want, sizeof(D))) << "rank " << Rank << ", element " << I;
    }
  }
}

TEST(TwoRanks, SendAndReceive) {
  checkAllReduce<float, float, cuda::Sum, host::Sum, Variant::SendRecv>();
  checkAllReduce<__half, host::f16, cuda::Max, host::Max, Variant::SendRecv>();
  checkAllReduce<int64_t, int64_t, cuda::Prod, host::Prod, Variant::SendRecv>();
}

TEST(TwoRanks, Exchange) {
  checkAllReduce<float, float, cuda::Sum, host::Sum, Variant::Exchange>();
  checkAllReduce<__nv_bfloat16, host::bf16, cuda::Min, host::Min, Variant::Exchange>();
  checkAllReduce<int8_t, int8_t, cuda::Sum, host::Sum, Variant::Exchange>();
}

TEST(TwoRanks, RecvReduceSend) {
  checkAllReduce<float, float, cuda::Sum, host::Sum, Variant::Ring>();
  checkAllReduce<__nv_bfloat16, host::bf16, cuda::Prod, host::Prod, Variant::Ring>();
  checkAllReduce<uint32_t, uint32_t, cuda::Max, host::Max, Variant::Ring>();
}

/// The line protocols' tables, each test of LineProtocol run with each.
template <class Prims> class LineProtocol : public ::testing::Test {};
using LineTables = ::testing::Types<LL, LL128>;
struct LineTableName {
  template <class Prims> static std::string GetName(int) {
    return std::is_same_v<Prims, LL> ? "LL" : "LL128";
  }
};
TYPED_TEST_SUITE(LineProtocol, LineTables, LineTableName);

// A 1024-byte slot holds messages of up to 504 bytes as LL's lines and 952
// as LL128's: a call of 301 elements sends its chunks of f32 (304 and 608
// bytes) as lines but for LL's larger ones, and the 8-byte elements' over
// the limit (608 and 1216 bytes by LL, 1216 by LL128) the simple way, in
// one kernel; the many-round call goes the simple way throughout.
TYPED_TEST(LineProtocol, SendAndReceive) {
  using P = TypeParam;
  checkAllReduce<float, float, cuda::Sum, host::Sum, Variant::SendRecv, P>(301);
  checkAllReduce<__half, host::f16, cuda::Max, host::Max, Variant::SendRecv, P>(301);
  checkAllReduce<int64_t, int64_t, cuda::Prod, host::Prod, Variant::SendRecv, P>(301);
  checkAllReduce<float, float, cuda::Sum, host::Sum, Variant::SendRecv, P>();
}

TYPED_TEST(LineProtocol, Exchange) {
  using P = TypeParam;
  checkAllReduce<float, float, cuda::Sum, host::Sum, Variant::Exchange, P>(301);
  checkAllReduce<__nv_bfloat16, host::bf16, cuda::Min, host::Min, Variant::Exchange, P>(1);
  checkAllReduce<int8_t, int8_t, cuda::Sum, host::Sum, Variant::Exchange, P>(1901);
  checkAllReduce<float, float, cuda::Sum, host::Sum, Variant::Exchange, P>();
}

TYPED_TEST(LineProtocol, RecvReduceSend) {
  using P = TypeParam;
  checkAllReduce<float, float, cuda::Sum, host::Sum, Variant::Ring, P>(97);
  checkAllReduce<__nv_bfloat16, host::bf16, cuda::Prod, host::Prod, Variant::Ring, P>(301);
  checkAllReduce<uint32_t, uint32_t, cuda::Max, host::Max, Variant::Ring, P>(10007);
}

struct LoneRun {
  DeviceBuffer<float> Input, Output;
  explicit LoneRun(size_t Count) : Input(Count), Output(Count) {}
};

/// A rank whose peer never comes times out, by any protocol: by lines
/// (messages of 100 bytes) every thread waits for its own lines.
template <class Prims> void checkMissingPeerTimesOut(size_t Count) {
  RankPair Ranks;
  LoneRun Rank0(Count);
  auto Start = std::chrono::steady_clock::now();
  Ranks.run(allReduceInfo<float, cuda::Sum, Variant::SendRecv, Prims>(),
            {Ranks.args(0, Rank0.Input.get(), Rank0.Output.get(), Count, 50'000'000)});
  EXPECT_LT(std::chrono::steady_clock::now() - Start, std::chrono::seconds(5));
  cuda::KernelStatus S = Ranks.status(0);
  EXPECT_EQ(uint32_t(cuda::CommStatus::Timeout), S.Code) << cuda::describe(S);
  EXPECT_EQ(1, S.Peer);
  EXPECT_EQ(uint32_t(cuda::WaitKind::Receive), S.Wait);
  EXPECT_EQ(1u, Ranks.abort()) << "the failing block raises the abort flag";
  EXPECT_EQ(0u, cuda::describe(S).find("timed out waiting to receive from rank 1 on channel "));
}

TEST(TwoRanks, MissingPeerTimesOut) { checkMissingPeerTimesOut<Simple>(1000); }
TYPED_TEST(LineProtocol, MissingPeerTimesOut) { checkMissingPeerTimesOut<TypeParam>(100); }

/// Without a time limit (the runtime's default) a kernel whose peer never
/// comes waits, counted in flight, until the abort flag is raised, then
/// reports the abort and leaves the count.
TEST(TwoRanks, WithoutALimitAWaitLastsUntilTheAbort) {
  RankPair Ranks;
  LoneRun Rank0(1000);
  std::vector<cuda::KernelArgs> Args = {
      Ranks.args(0, Rank0.Input.get(), Rank0.Output.get(), 1000, /*TimeoutNs=*/0)};
  Ranks.start(allReduceInfo<float, cuda::Sum, Variant::SendRecv>(), Args);
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  EXPECT_EQ(cudaErrorNotReady, cudaStreamQuery(Ranks.stream(0))) << "the kernel still waits";
  EXPECT_EQ(uint32_t(Channels), Ranks.inFlight()) << "every block counts itself in flight";
  EXPECT_EQ(uint32_t(cuda::CommStatus::Ok), Ranks.statusNow(0).Code);
  reinterpret_cast<volatile uint32_t &>(Ranks.abort()) = 1;
  Ranks.wait(Args);
  EXPECT_EQ(uint32_t(cuda::CommStatus::Aborted), Ranks.status(0).Code)
      << cuda::describe(Ranks.status(0));
  EXPECT_EQ(0u, Ranks.inFlight()) << "every block left the count";
}

/// The host reads the status word once it sees the abort flag: by then the
/// failing block's status must be complete.
TEST(TwoRanks, StatusIsCompleteOnceTheAbortFlagIsUp) {
  RankPair Ranks;
  LoneRun Rank0(1000);
  std::vector<cuda::KernelArgs> Args = {
      Ranks.args(0, Rank0.Input.get(), Rank0.Output.get(), 1000, 20'000'000)};
  Ranks.start(allReduceInfo<float, cuda::Sum, Variant::SendRecv>(), Args);
  auto Until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!reinterpret_cast<volatile uint32_t &>(Ranks.abort()))
    ASSERT_LT(std::chrono::steady_clock::now(), Until) << "the wait never timed out";
  cuda::KernelStatus S = Ranks.statusNow(0);
  EXPECT_EQ(uint32_t(cuda::CommStatus::Timeout), S.Code) << cuda::describe(S);
  EXPECT_EQ(1, S.Peer);
  Ranks.wait(Args);
}

TEST(TwoRanks, AbortFlagStopsTheKernel) {
  RankPair Ranks;
  LoneRun Rank0(1000);
  Ranks.abort() = 1;
  auto Start = std::chrono::steady_clock::now();
  Ranks.run(allReduceInfo<float, cuda::Sum, Variant::Exchange>(),
            {Ranks.args(0, Rank0.Input.get(), Rank0.Output.get(), 1000, 60'000'000'000)});
  EXPECT_LT(std::chrono::steady_clock::now() - Start, std::chrono::seconds(5));
  EXPECT_EQ(uint32_t(cuda::CommStatus::Aborted), Ranks.status(0).Code)
      << cuda::describe(Ranks.status(0));
}

/// With 100 and 104 floats the ranks agree on every chunk but the last: on
/// channel 1, rank 0 sends 16 elements where rank 1 expects 20. By lines, the
/// size word comes in the message's first line.
template <class Prims> void checkDifferentMessageSizesAreReported() {
  RankPair Ranks;
  LoneRun Rank0(100), Rank1(104);
  Ranks.run(allReduceInfo<float, cuda::Sum, Variant::SendRecv, Prims>(),
            {Ranks.args(0, Rank0.Input.get(), Rank0.Output.get(), 100, 10'000'000'000),
             Ranks.args(1, Rank1.Input.get(), Rank1.Output.get(), 104, 10'000'000'000)});
  cuda::KernelStatus S = Ranks.status(1);
  EXPECT_EQ(uint32_t(cuda::CommStatus::Mismatch), S.Code) << cuda::describe(S);
  EXPECT_EQ(1, S.Channel);
  EXPECT_EQ(0, S.Peer);
  EXPECT_EQ(64u, S.Got);
  EXPECT_EQ(80u, S.Expected);
  EXPECT_EQ(uint32_t(cuda::CommStatus::Aborted), Ranks.status(0).Code)
      << "rank 0 stops on the abort flag rank 1 raised: " << cuda::describe(Ranks.status(0));
}

TEST(TwoRanks, DifferentMessageSizesAreReported) { checkDifferentMessageSizesAreReported<Simple>(); }
TYPED_TEST(LineProtocol, DifferentMessageSizesAreReported) {
  checkDifferentMessageSizesAreReported<TypeParam>();
}

/// Ranks whose steps take different protocols (plans that disagree) fail
/// with a mismatch, whichever side sends by lines, instead of waiting where
/// the other never writes.
template <class Mine, class Theirs> void checkProtocolsThatDisagreeAreReported() {
  for (int ByMine : {0, 1}) {
    RankPair Ranks;
    LoneRun Rank0(100), Rank1(100);
    std::vector<cuda::KernelArgs> Args = {
        Ranks.args(0, Rank0.Input.get(), Rank0.Output.get(), 100, 10'000'000'000),
        Ranks.args(1, Rank1.Input.get(), Rank1.Output.get(), 100, 10'000'000'000)};
    cuda::KernelInfo First = allReduceInfo<float, cuda::Sum, Variant::SendRecv, Mine>();
    cuda::KernelInfo Second = allReduceInfo<float, cuda::Sum, Variant::SendRecv, Theirs>();
    RankPair::load(Second);
    Ranks.start(First, {Args[size_t(ByMine)]});
    Ranks.start(Second, {Args[size_t(1 - ByMine)]});
    Ranks.wait(Args);
    int Mismatches = 0;
    for (int Rank = 0; Rank < 2; ++Rank) {
      uint32_t Code = Ranks.status(Rank).Code;
      EXPECT_NE(uint32_t(cuda::CommStatus::Ok), Code) << "rank " << Rank;
      EXPECT_NE(uint32_t(cuda::CommStatus::Timeout), Code) << cuda::describe(Ranks.status(Rank));
      Mismatches += Code == uint32_t(cuda::CommStatus::Mismatch);
    }
    EXPECT_GE(Mismatches, 1) << "the first table's protocol on rank " << ByMine;
  }
}

TYPED_TEST(LineProtocol, ProtocolsThatDisagreeAreReported) {
  checkProtocolsThatDisagreeAreReported<TypeParam, Simple>();
  if constexpr (std::is_same_v<TypeParam, LL128>)
    checkProtocolsThatDisagreeAreReported<LL128, LL>();
}

TEST(TwoRanks, DifferentCallsFailAtTheirFirstMessage) {
  // The sizes agree; only the stamps (another operator) tell the calls apart.
  RankPair Ranks;
  LoneRun Rank0(1000), Rank1(1000);
  std::vector<cuda::KernelArgs> Args = {
      Ranks.args(0, Rank0.Input.get(), Rank0.Output.get(), 1000, 10'000'000'000),
      Ranks.args(1, Rank1.Input.get(), Rank1.Output.get(), 1000, 10'000'000'000)};
  Args[0].Call = callStamp(1, 1000, 0);
  Args[1].Call = callStamp(1, 1000, 2);
  Ranks.run(allReduceInfo<float, cuda::Sum, Variant::SendRecv>(), Args);
  int Found = 0;
  for (int Rank = 0; Rank < 2; ++Rank) {
    cuda::KernelStatus S = Ranks.status(Rank);
    if (S.Code == uint32_t(cuda::CommStatus::Aborted))
      continue;
    ++Found;
    ASSERT_EQ(uint32_t(cuda::CommStatus::Mismatch), S.Code) << cuda::describe(S);
    EXPECT_EQ(1 - Rank, S.Peer);
    EXPECT_EQ(Args[size_t(1 - Rank)].Call, S.Sent);
    EXPECT_EQ(Args[size_t(Rank)].Call, S.Called);
    EXPECT_EQ(0u, cuda::describe(S).find("rank " + std::to_string(1 - Rank) +
                                         " sent a message of another call"));
  }
  EXPECT_GE(Found, 1) << "a rank received the other call's first message";
}

TEST(TwoRanks, LaunchRefusesBlocksThatCannotAllBeResident) {
  cuda::KernelInfo Info = allReduceInfo<float, cuda::Sum, Variant::SendRecv>();
  Info.Shape.NChannels = 1 << 20; // More blocks than any GPU holds at once.
  cuda::KernelArgs Args;
  std::string Why;
  EXPECT_EQ(cudaErrorCooperativeLaunchTooLarge, cuda::launch(Info, Args, nullptr, Why));
  EXPECT_NE(std::string::npos, Why.find("holds only")) << Why;
}

/// launch() asks the device once per kernel, device and block size: a kernel
/// that fitted before is still measured by what the device holds, as CUDA
/// says.
TEST(TwoRanks, LaunchKeepsTheDeviceFiguresOfEachKernel) {
  RankPair Ranks;
  LoneRun Rank0(1000);
  Ranks.abort() = 1; // The kernel that fits stops at its first wait.
  cuda::KernelInfo Info = allReduceInfo<float, cuda::Sum, Variant::SendRecv>();
  Ranks.run(Info, {Ranks.args(0, Rank0.Input.get(), Rank0.Output.get(), 1000, 0)});
  int Sms = 0, PerSm = 0;
  CCLC_CUDA(cudaDeviceGetAttribute(&Sms, cudaDevAttrMultiProcessorCount, 0));
  CCLC_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
      &PerSm, reinterpret_cast<const void *>(Info.Run), Info.BlockThreads, 0));
  Info.Shape.NChannels = 1 << 20;
  std::string Why;
  EXPECT_EQ(cudaErrorCooperativeLaunchTooLarge,
            cuda::launch(Info, Ranks.args(0, nullptr, nullptr, 0, 0), nullptr, Why));
  EXPECT_NE(std::string::npos, Why.find("holds only " + std::to_string(int64_t(Sms) * PerSm)))
      << Why;
}

/// Echoes Messages messages of Elems[m] ints from In to Out through Buffer.
__global__ void echo(cuda::Inbox In, cuda::Outbox Out, int32_t *Buffer, const uint32_t *Elems,
                     int Messages, cuda::KernelStatus *Status) {
  cuda::enterChannel(cuda::Waiter{nullptr, Status, 10'000'000'000}, 0);
  for (int M = 0; M < Messages; ++M) {
    kern::Layout L;
    L.Count = L.RoundElems = L.PieceElems = Elems[M];
    cuda::recvCopySend<int32_t, cuda::Sum>(In, Out, cuda::Slice<int32_t>{Buffer, &L, 1, 0, 1});
  }
}

TEST(HostProxy, SharesFifosWithTheDevice) {
  static_assert(sizeof(host::FifoHeader) == sizeof(cuda::FifoHeader));
  ASSERT_EQ(host::Fifo::slotsOffset(NumSlots), cuda::Fifo::slotsOffset(NumSlots));
  ASSERT_EQ(host::Fifo::bytesFor(NumSlots, SlotBytes), cuda::Fifo::bytesFor(NumSlots, SlotBytes));
  constexpr uint32_t Elems[] = {1, 3, 17, 64, 256, 5, 255, 128, 2, 100};
  constexpr int Messages = sizeof(Elems) / sizeof(Elems[0]);

  size_t Bytes = host::Fifo::bytesFor(NumSlots, SlotBytes);
  MappedBuffer<std::byte> ToDevice(Bytes), FromDevice(Bytes);
  DeviceBuffer<cuda::KernelStatus> Status(1);
  CCLC_CUDA(cudaMemset(Status.get(), 0, Status.bytes()));
  DeviceBuffer<int32_t> Buffer(SlotBytes / sizeof(int32_t));
  DeviceBuffer<uint32_t> Sizes(Messages);
  Sizes.upload({std::begin(Elems), std::end(Elems)});

  host::Waiter Wait;
  Wait.Timeout = std::chrono::seconds(10);
  host::Outbox Out{host::Fifo::place(ToDevice.host(), NumSlots, SlotBytes, true), 1, &Wait};
  host::Inbox In{host::Fifo::place(FromDevice.host(), NumSlots, SlotBytes, true), 1, &Wait};
  echo<<<1, BlockThreads>>>(
      cuda::Inbox::inHeader(cuda::Fifo::place(ToDevice.device(), NumSlots, SlotBytes), 0),
      cuda::Outbox::inHeader(cuda::Fifo::place(FromDevice.device(), NumSlots, SlotBytes), 0),
      Buffer.get(), Sizes.get(), Messages, Status.get());
  CCLC_CUDA(cudaGetLastError());
  for (int M = 0; M < Messages; ++M) {
    std::vector<int32_t> Message(Elems[M]);
    for (size_t I = 0; I < Message.size(); ++I)
      Message[I] = int32_t(M * 1000 + I);
    std::memcpy(Out.acquire(), Message.data(), Message.size() * sizeof(int32_t));
    Out.post(Message.size() * sizeof(int32_t));
    const std::byte *Back = In.peek(Message.size() * sizeof(int32_t));
    ASSERT_EQ(0, std::memcmp(Back, Message.data(), Message.size() * sizeof(int32_t)))
        << "message " << M;
    In.release();
  }
  CCLC_CUDA(cudaDeviceSynchronize());
  cuda::KernelStatus S = Status.download()[0];
  EXPECT_EQ(uint32_t(cuda::CommStatus::Ok), S.Code) << cuda::describe(S);
}

} // namespace
