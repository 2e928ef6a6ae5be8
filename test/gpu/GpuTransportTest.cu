//===- GpuTransportTest.cu - GPU ranks over CUDA IPC and TCP ----*- CUDA -*-===//
//
// Ranks run as threads of one process on the first GPU, each with its own
// bootstrap, GpuConnections and stream, as a runtime with one thread per GPU
// rank runs them. A kernel per rank passes messages of every size around a
// ring over the links GpuConnections made, through FIFOs that wrap many
// times: every rank must receive exactly what its predecessor sent, once
// over CUDA IPC (ranks of one process write into each other's device
// memory) and once over TCP (CCLC_TRANSPORT=tcp: mapped host memory and a
// proxy thread per rank). abort() must raise the word the kernels poll and
// report its cause; over TCP the peer's proxy must carry it to the peer's
// kernel, which then stops long before its timeout. With peer access turned
// off (CCLC_P2P_DISABLE=1), ranks of one host must fall back on the mapped
// host memory of the TCP links. Each side of a CUDA IPC link must poll its
// own memory: Tail in the receiver's FIFO, Head in the sender's block.
//
//===----------------------------------------------------------------------===//

#include "cuda/Kernel.cuh"
#include "runtime/cuda/GpuConnections.h"
#include "runtime/bootstrap/Bootstrap.h"

#include "GpuTest.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <memory>
#include <new>
#include <string>
#include <thread>
#include <vector>

using namespace cclc;
using namespace cclc::gputest;
using namespace std::chrono_literals;

namespace {

constexpr int Channels = 2;
constexpr uint32_t NumSlots = 4;
constexpr size_t SlotBytes = 4096;
constexpr size_t MaxElems = SlotBytes / sizeof(int32_t);
constexpr int Messages = 40; // Ten times the slots of each FIFO.
constexpr int BlockThreads = 128;
constexpr uint64_t TimeoutNs = 10'000'000'000;

/// The elements of message M on Channel: from 1 to a full slot.
__host__ __device__ size_t messageElems(int Channel, int M) {
  return 1 + (size_t(M) * 97 + size_t(Channel) * 13) % MaxElems;
}

/// Where message M of Channel lies in a rank's input and output.
__host__ __device__ size_t messageAt(int Channel, int M) {
  return (size_t(Channel) * Messages + size_t(M)) * MaxElems;
}

constexpr size_t BufferElems = size_t(Channels) * Messages * MaxElems;

/// Block c sends every message of channel c to Next and receives Prev's
/// into Output, as a ring's step does.
__global__ void passRing(cuda::Links Net, int Next, int Prev, const int32_t *Input, int32_t *Output,
                         uint32_t *Abort, cuda::KernelStatus *Status) {
  int Channel = int(blockIdx.x);
  cuda::enterChannel(cuda::Waiter{Abort, Status, TimeoutNs}, Channel);
  for (int M = 0; M < Messages; ++M) {
    kern::Layout L;
    L.Count = L.RoundElems = L.PieceElems = messageElems(Channel, M);
    size_t At = messageAt(Channel, M);
    cuda::send<int32_t, cuda::Sum>(Net.out(Next, Channel),
                                   cuda::Slice<const int32_t>{Input + At, &L, 1, 0, 1});
    cuda::recv<int32_t, cuda::Sum>(Net.in(Prev, Channel),
                                   cuda::Slice<int32_t>{Output + At, &L, 1, 0, 1});
  }
}

/// Rank's input: every element tells who sent it and where it belongs.
std::vector<int32_t> inputOf(int Rank) {
  std::vector<int32_t> V(BufferElems);
  for (size_t I = 0; I < V.size(); ++I)
    V[I] = int32_t(Rank * 1'000'003 + int64_t(I) * 7);
  return V;
}

/// Throws, failing the rank's thread, unless Ok.
void require(bool Ok, const std::string &What) {
  if (!Ok)
    throw std::runtime_error("check failed: " + What);
}

/// Runs Body in NRanks threads of one job on the first GPU and checks that
/// none failed. A rank that fails leaves the others to time out in the
/// bootstrap or their kernels, so the test ends either way.
void runRanks(int NRanks, const std::function<void(net::Bootstrap &)> &Body) {
  std::unique_ptr<net::Root> Root = net::createRoot(10s);
  net::UniqueId Id = Root->id();
  std::vector<std::string> Errors(static_cast<size_t>(NRanks));
  std::vector<std::thread> Threads;
  for (int Rank = 0; Rank < NRanks; ++Rank)
    Threads.emplace_back([&, Rank] {
      try {
        CCLC_CUDA(cudaSetDevice(0));
        Body(*net::Bootstrap::init(Id, Rank, NRanks, 10s));
      } catch (const std::exception &E) {
        Errors[size_t(Rank)] = E.what();
      }
    });
  for (std::thread &T : Threads)
    T.join();
  for (int Rank = 0; Rank < NRanks; ++Rank)
    EXPECT_EQ("", Errors[size_t(Rank)]) << "rank " << Rank;
}

/// Which peers of the job Rank's GPU (device 0) reaches over CUDA IPC.
net::PeerAccess peerAccess(net::Bootstrap &B) {
  return net::PeerAccess(B, gpu::gpuBusId(0),
                         [](const std::string &Peer) { return gpu::canWriteTo(0, Peer); });
}

/// Whether P points into the FIFO memory that starts at Q's header.
bool inFifo(const void *P, const cuda::Fifo &Q) {
  auto At = reinterpret_cast<uintptr_t>(P), Begin = reinterpret_cast<uintptr_t>(Q.Header);
  return At >= Begin && At < Begin + cuda::Fifo::bytesFor(Q.NumSlots, Q.SlotBytes);
}

/// Rank's links of a ring: it sends to Next and receives from Prev on
/// every channel.
struct RingLinks {
  int Next, Prev;
  std::vector<net::Link> Sends, Recvs;

  explicit RingLinks(const net::Bootstrap &B)
      : Next((B.rank() + 1) % B.size()), Prev((B.rank() + B.size() - 1) % B.size()) {
    for (int Channel = 0; Channel < Channels; ++Channel) {
      Sends.push_back({Next, Channel});
      Recvs.push_back({Prev, Channel});
    }
  }
};

/// What a GPU rank needs besides its connections: the abort word in mapped
/// memory, a status word and a stream of its own.
class RankState {
public:
  RankState() : AbortMem(sizeof(uint32_t), "the abort word of a test rank") {
    static_assert(sizeof(std::atomic<uint32_t>) == sizeof(uint32_t));
    Abort = new (AbortMem.host()) std::atomic<uint32_t>(0);
    CCLC_CUDA(cudaMemset(Status.get(), 0, Status.bytes()));
    CCLC_CUDA(cudaStreamCreateWithFlags(&Stream, cudaStreamNonBlocking));
  }
  ~RankState() { cudaStreamDestroy(Stream); }
  RankState(const RankState &) = delete;
  RankState &operator=(const RankState &) = delete;

  std::atomic<uint32_t> &abort() { return *Abort; }
  uint32_t *deviceAbort() const { return static_cast<uint32_t *>(AbortMem.device()); }
  cuda::KernelStatus status() const { return Status.download()[0]; }

  /// Launches passRing over R on the rank's stream.
  void launchRing(const gpu::GpuConnections &C, const RingLinks &R, const int32_t *Input,
                  int32_t *Output) {
    passRing<<<Channels, BlockThreads, 0, Stream>>>(C.links(), R.Next, R.Prev, Input, Output,
                                                    deviceAbort(), Status.get());
    CCLC_CUDA(cudaGetLastError());
  }
  void wait() { CCLC_CUDA(cudaStreamSynchronize(Stream)); }
  /// Runs the ring and checks that it stopped on the abort word, long
  /// before its timeout.
  void runAborted(const gpu::GpuConnections &C, const RingLinks &R, const int32_t *Input,
                  int32_t *Output) {
    auto Start = std::chrono::steady_clock::now();
    launchRing(C, R, Input, Output);
    wait();
    require(std::chrono::steady_clock::now() - Start < 5s, "stopped long before the timeout");
    cuda::KernelStatus S = status();
    require(S.Code == uint32_t(cuda::CommStatus::Aborted), cuda::describe(S));
  }

private:
  gpu::MappedBuffer AbortMem;
  std::atomic<uint32_t> *Abort = nullptr;
  DeviceBuffer<cuda::KernelStatus> Status{1};
  cudaStream_t Stream = nullptr;
};

const net::LinkOptions Options{NumSlots, SlotBytes};

/// The tables GpuConnections uploaded hold the links of the ring and empty
/// views elsewhere, at entry Channel * NPeers + Peer.
/// Over CUDA IPC (Ipc) each Head word lies outside the FIFO, in the
/// sender's block; otherwise it is the FIFO header's own word, which a proxy
/// shares.
void checkTables(const gpu::GpuConnections &C, const net::Bootstrap &B, const RingLinks &R,
                 bool Ipc) {
  const cuda::Links &Net = C.links();
  require(Net.NPeers == B.size(), "a table row per rank of the job");
  std::vector<cuda::Outbox> Outs(size_t(Channels) * B.size());
  std::vector<cuda::Inbox> Ins(Outs.size());
  CCLC_CUDA(cudaMemcpy(Outs.data(), Net.Outs, Outs.size() * sizeof(cuda::Outbox),
                       cudaMemcpyDeviceToHost));
  CCLC_CUDA(
      cudaMemcpy(Ins.data(), Net.Ins, Ins.size() * sizeof(cuda::Inbox), cudaMemcpyDeviceToHost));
  for (int Channel = 0; Channel < Channels; ++Channel)
    for (int Peer = 0; Peer < B.size(); ++Peer) {
      const cuda::Outbox &Out = Outs[size_t(Channel) * B.size() + Peer];
      const cuda::Inbox &In = Ins[size_t(Channel) * B.size() + Peer];
      std::string Where = "channel " + std::to_string(Channel) + ", peer " + std::to_string(Peer);
      require(Peer == R.Next ? Out.Peer == Peer && Out.Q.Header && Out.Q.NumSlots == NumSlots
                             : Out.Peer == -1 && !Out.Q.Header,
              "send entry of " + Where);
      require(Peer == R.Prev ? In.Peer == Peer && In.Q.Header && In.Q.SlotBytes == SlotBytes
                             : In.Peer == -1 && !In.Q.Header,
              "receive entry of " + Where);
      if (Peer == R.Next)
        require(Ipc ? Out.Head && !inFifo(Out.Head, Out.Q) && Out.Step == 0
                    : Out.Head == &Out.Q.Header->Head,
                "the Head word of the send entry of " + Where);
      if (Peer == R.Prev)
        require(Ipc ? In.Head && !inFifo(In.Head, In.Q) && In.Step == 0
                    : In.Head == &In.Q.Header->Head,
                "the Head word of the receive entry of " + Where);
    }
}

/// Passes every message around a ring of NRanks GPU ranks and checks what
/// each received; Transport is what every link must use.
void checkRing(int NRanks, const std::string &Transport) {
  runRanks(NRanks, [&](net::Bootstrap &B) {
    RingLinks R(B);
    RankState State;
    gpu::GpuConnections C(B, R.Sends, R.Recvs, Options, peerAccess(B), State.abort());
    require(C.transportName(R.Next) == Transport && C.transportName(R.Prev) == Transport,
            "the links use " + Transport);
    checkTables(C, B, R, Transport == "cuda-ipc");
    DeviceBuffer<int32_t> Input(BufferElems), Output(BufferElems);
    Input.upload(inputOf(B.rank()));
    CCLC_CUDA(cudaMemset(Output.get(), 0, Output.bytes()));
    // No rank waits on the device (as the copies above may) while a peer's
    // kernel waits for it.
    B.barrier();
    State.launchRing(C, R, Input.get(), Output.get());
    State.wait();
    cuda::KernelStatus S = State.status();
    require(S.Code == uint32_t(cuda::CommStatus::Ok), cuda::describe(S));
    require(C.failure().empty(), "no failure: " + C.failure());
    std::vector<int32_t> Want = inputOf(R.Prev), Got = Output.download();
    for (int Channel = 0; Channel < Channels; ++Channel)
      for (int M = 0; M < Messages; ++M) {
        size_t At = messageAt(Channel, M);
        require(sameBits(Got.data() + At, Want.data() + At, messageElems(Channel, M)),
                "message " + std::to_string(M) + " of channel " + std::to_string(Channel) +
                    " from rank " + std::to_string(R.Prev));
      }
    // The runtime's teardown: unmap the peers' memory, then no rank frees
    // its own before every peer has.
    C.closePeerMemory();
    B.barrier();
  });
}

/// Runs each test with CCLC_TRANSPORT set to the parameter, or unset.
class GpuTransport : public ::testing::TestWithParam<const char *> {
protected:
  void SetUp() override {
    if (*GetParam())
      ::setenv("CCLC_TRANSPORT", GetParam(), 1);
  }
  void TearDown() override { ::unsetenv("CCLC_TRANSPORT"); }
  /// What every link between the ranks of this process must use.
  std::string expected() const { return *GetParam() ? "tcp" : "cuda-ipc"; }
};

TEST_P(GpuTransport, TwoRanksPassARing) { checkRing(2, expected()); }

TEST_P(GpuTransport, ThreeRanksPassARing) { checkRing(3, expected()); }

TEST_P(GpuTransport, AbortRaisesTheWordAndKeepsTheCause) {
  bool Tcp = expected() == "tcp";
  runRanks(2, [&](net::Bootstrap &B) {
    RingLinks R(B);
    RankState State;
    gpu::GpuConnections C(B, R.Sends, R.Recvs, Options, peerAccess(B), State.abort());
    DeviceBuffer<int32_t> Input(BufferElems), Output(BufferElems);
    B.barrier();
    if (B.rank() == 0) {
      std::this_thread::sleep_for(100ms);
      C.abort("rank 0 stopped the test");
      C.abort("a later cause");
      require(State.abort().load() != 0, "abort() raises the word the kernels poll");
      require(C.failure() == "rank 0 stopped the test", "the first cause: " + C.failure());
      // A kernel launched now stops at its first wait.
      State.runAborted(C, R, Input.get(), Output.get());
    } else if (Tcp) {
      // Rank 1's kernel waits for rank 0, which aborts instead of sending:
      // rank 0's proxy sends its cause in an abort frame and drops the
      // connections, and rank 1's proxy raises rank 1's word.
      State.runAborted(C, R, Input.get(), Output.get());
      require(C.failure() == "rank 0 stopped the test", "rank 0's cause: " + C.failure());
    }
    // Over CUDA IPC nothing carries the abort to the peer, whose kernels
    // would time out instead; rank 1 only keeps its FIFOs until rank 0 is
    // done with them.
    B.barrier();
  });
}

/// Ranks of one GPU reach each other directly; with peer access turned off
/// by NCCL's variable, they pass the ring over mapped host memory and the
/// proxies instead, and every rank agrees.
TEST(GpuPeerAccess, DisabledPeerAccessFallsBackToMappedMemory) {
  runRanks(2, [](net::Bootstrap &B) {
    require(peerAccess(B).direct(1 - B.rank()), "two ranks of one GPU reach each other");
  });
  ::setenv("NCCL_P2P_DISABLE", "1", 1);
  checkRing(2, "tcp");
  ::unsetenv("NCCL_P2P_DISABLE");
}

INSTANTIATE_TEST_SUITE_P(Gpu, GpuTransport, ::testing::Values("", "tcp"),
                         [](const ::testing::TestParamInfo<const char *> &Info) {
                           return std::string(*Info.param ? "Tcp" : "CudaIpc");
                         });

} // namespace
