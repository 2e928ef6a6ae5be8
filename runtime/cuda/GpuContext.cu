//===- GpuContext.cu - A communicator's GPU --------------------*- CUDA -*-===//
//
// The runtime's GPU executor (runtime/api/Gpu.h). A communicator makes it at
// its first GPU call, on the device current then, with what every later call
// shares: an abort word that the kernels poll and the GPU transports raise,
// shared by the ranks of the host and mapped into the device, a status word in device memory where
// the first failing kernel records why, a stream of its own for setup, and device workspace; it
// also loads the interpreter's kernels and the registered ones then, before any of its kernels can
// wait (see gpu::loadInterpreter). An algorithm's first GPU call connects its GPU transports
// (collective: every rank makes the same calls) and uploads its program; every call then only
// places buffers, copies an overlapping input aside and launches one kernel
// on the caller's stream.
//
// Calls return before their kernels run, so nothing here waits for the GPU
// on a call's path: no synchronous copy, no synchronization, memory kept
// until the context is destroyed. Each launch records an event on its
// stream, and destroying waits for those events before it frees anything
// (CUDA's frees then wait for the rest of the device too, an application's
// kernel among it). Enqueueing without waiting is also what lets an
// application capture calls into a CUDA graph; the setup a first call does
// (allocating, mapping, uploading on the setup stream) runs with the
// thread's capture mode relaxed, so capturing works during that call too.
//
// Failures inside kernels cannot be returned by the calls that enqueued
// them. A kernel that fails records the failure in the status word and
// raises the abort word, so that its other blocks and later kernels stop at
// once; failure() reads the status word only once the abort word is up (or
// the GPU transports report a failure), so asking costs nothing while all
// is well. Waits inside kernels have no time limit unless
// CCLC_KERNEL_TIMEOUT_MS sets one: a peer may launch its kernel much later
// than this rank (a long computation before the collective), and a failure
// reaches the kernels through the abort word.
//
//===----------------------------------------------------------------------===//

#include "runtime/api/Environment.h"
#include "runtime/api/Gpu.h"
#include "runtime/cuda/CudaError.h"
#include "runtime/cuda/GpuConnections.h"
#include "runtime/cuda/InterpreterKernel.h"
#include "runtime/transport/shm/HostAbort.h"

#include "cuda/Kernel.cuh"

#include <atomic>
#include <chrono>
#include <cstring>
#include <iostream>
#include <map>
#include <new>

namespace cclc::runtime {

namespace {

using gpu::check;

static_assert(std::atomic<uint32_t>::is_always_lock_free &&
                  sizeof(std::atomic<uint32_t>) == sizeof(uint32_t),
              "kernels read the abort word as a plain uint32_t");

/// Runs Body, turning a failing CUDA call into the C API's cclcSystemError.
template <class F> decltype(auto) reporting(F &&Body) {
  try {
    return Body();
  } catch (const gpu::CudaError &E) {
    throw ApiError(cclcSystemError, E.what());
  }
}

/// Makes Device current on the calling thread for the scope and restores the
/// thread's device after: calls may come from threads whose current device
/// is another. Where the device cannot be made current, the CUDA calls that
/// follow fail and say so.
class DeviceScope {
public:
  explicit DeviceScope(int Device) noexcept {
    if (cudaGetDevice(&Previous) != cudaSuccess) {
      cudaGetLastError();
      return;
    }
    if (Previous != Device)
      Switched = cudaSetDevice(Device) == cudaSuccess;
  }
  ~DeviceScope() {
    if (Switched)
      cudaSetDevice(Previous);
  }
  DeviceScope(const DeviceScope &) = delete;
  DeviceScope &operator=(const DeviceScope &) = delete;

private:
  int Previous = 0;
  bool Switched = false;
};

/// Device memory on Device for the workspace of GPU calls
/// (Workspace::Memory): a call grows its workspace before it switches to the
/// communicator's device, so the allocation switches itself.
void *allocateDevice(int Device, cudaStream_t Setup, bool Pooled, size_t Bytes) {
  return reporting([&] {
    DeviceScope Scope(Device);
    gpu::RelaxedCapture Relaxed;
    void *Block = nullptr;
    std::string What = "cannot allocate " + std::to_string(Bytes) +
                       " bytes of device memory for a collective's scratch, input copy or "
                       "stand-in buffers";
    const char *Remedy = "free device memory or make smaller calls";
    if (!Pooled) {
      check(cudaMalloc(&Block, Bytes), What, Remedy);
      return Block;
    }
    // Stream-ordered: the pool grows without waiting for kernels that run,
    // which cudaMalloc may do, and those may wait for this rank.
    check(cudaMallocAsync(&Block, Bytes, Setup), What, Remedy);
    check(cudaStreamSynchronize(Setup), What, Remedy);
    return Block;
  });
}

void freeDevice(void *Block) {
  gpu::RelaxedCapture Relaxed;
  cudaFree(Block);
}

/// The stream a call enqueues on: the caller's, or the legacy default stream
/// for a call with device buffers and a NULL stream.
cudaStream_t streamOf(void *Stream) {
  return Stream ? static_cast<cudaStream_t>(Stream) : cudaStreamLegacy;
}

class CudaContext final : public GpuContext {
public:
  CudaContext(net::Bootstrap &Boot, MismatchWords Describe);
  ~CudaContext() override;

  void checkBuffer(const void *Buffer, const char *Name) override;
  void loadKernels(const std::deque<Algorithm> &Loaded) override;
  Workspace &space() override { return *Space; }
  void copy(void *Dst, const void *Src, size_t Bytes, void *Stream) override;
  void launch(const Request &R, const Algorithm &A, const kern::CallArgs &Args,
              const kern::CallStamp &Stamp,
              void *Stream) override;
  std::optional<Classified> failure() override;
  void synchronize() override;
  void closePeerMemory() override;
  void abort(const std::string &Cause) override;

private:
  using Sets = ConnectionSets<gpu::GpuConnections>;

  /// What an algorithm's GPU calls reuse, made at its first.
  struct Prepared {
    const Sets::Set *Net = nullptr;
    /// The interpreter's program for this rank, in device memory; empty for
    /// generated kernels.
    gpu::DeviceBuffer Steps, ChannelBegin;
    kern::ProgramView Program;
  };

  /// A's connections and program, connecting and uploading at its first
  /// call; the caller relaxes the capture mode.
  const Prepared &prepare(const Algorithm &A);
  /// The kernels' status word, as it is now.
  cuda::KernelStatus readStatus();
  /// Records on Stream that this context's work on it ends here (the
  /// stream is being captured into a graph: nothing to record, as the graph
  /// runs later, when its owner launches it).
  void recordLaunch(cudaStream_t Stream);
  /// Waits for every launch recorded so far; the first CUDA error is
  /// thrown, with What, unless Quiet.
  void waitForLaunches(const std::string &What, bool Quiet);
  std::string rankName() const { return "rank " + std::to_string(Rank); }

  net::Bootstrap &Boot;
  int Rank;
  /// Names both calls of a message from another call.
  MismatchWords Describe;
  int Device = 0;
  /// A kernel wait's limit, 0 for none (CCLC_KERNEL_TIMEOUT_MS).
  uint64_t KernelTimeoutNs;
  /// The abort word the ranks of this host share (net/HostAbort.h), so that
  /// one rank's failure stops every local rank's kernels at once, mapped into
  /// the device by AbortPage; or, where CUDA cannot map that page, a word of
  /// this rank's own (OwnAbort). AbortWord and AbortDevice view the one used.
  std::optional<net::HostAbortWord> HostAbort;
  gpu::MappedPages AbortPage;
  gpu::MappedBuffer OwnAbort;
  std::atomic<uint32_t> *AbortWord = nullptr;
  void *AbortDevice = nullptr;
  /// The blocks of this context's kernels that run, in mapped memory: the
  /// TCP proxies do not sleep while it is nonzero.
  gpu::MappedBuffer Busy;
  std::atomic<uint32_t> *InFlight = nullptr;
  /// Which same-host peers this rank reaches over CUDA IPC.
  std::optional<net::PeerAccess> Access;
  /// By stream: an event recorded after this context's last launch on it.
  std::map<cudaStream_t, cudaEvent_t> Launched;
  /// Set once synchronize() saw every kernel end with none failed: the
  /// communicator is being destroyed regularly.
  bool Drained = false;
  /// A cuda::KernelStatus, zeroed once: the first failure of any kernel.
  gpu::DeviceBuffer Status;
  /// Where readStatus() copies it, pinned so that the copy is asynchronous.
  gpu::MappedBuffer StatusCopy;
  std::optional<gpu::OwnStream> Setup;
  std::optional<Workspace> Space;
  /// Declared after the abort word, which its connections hold.
  std::optional<Sets> Connections;
  /// By algorithm: the table's algorithms have stable addresses.
  std::map<const Algorithm *, Prepared> Algorithms;
};

CudaContext::CudaContext(net::Bootstrap &Boot, MismatchWords Describe)
    : Boot(Boot), Rank(Boot.rank()), Describe(std::move(Describe)),
      KernelTimeoutNs(uint64_t(std::chrono::nanoseconds(kernelTimeoutFromEnvironment()).count())) {
  const char *Remedy = "run where a CUDA device and its driver are present, or pass host buffers "
                       "and a NULL stream to run on the host";
  int Count = 0;
  check(cudaGetDeviceCount(&Count), "CUDA finds no usable GPU", Remedy);
  check(cudaGetDevice(&Device), "cannot tell which GPU is current", Remedy);
  gpu::RelaxedCapture Relaxed;
  HostAbort.emplace(Boot);
  std::string Unshared = HostAbort->whyNotShared();
  try {
    AbortPage = gpu::MappedPages(HostAbort->page(), net::HostAbortWord::pageBytes(),
                                 "the abort word of " + rankName());
    AbortWord = &HostAbort->word();
    AbortDevice = AbortPage.device();
  } catch (const gpu::CudaError &E) {
    // A word of this rank's own still stops its kernels and its proxies.
    Unshared = E.what();
    OwnAbort = gpu::MappedBuffer(sizeof(std::atomic<uint32_t>), "the abort word of " + rankName());
    AbortWord = new (OwnAbort.host()) std::atomic<uint32_t>(0);
    AbortDevice = OwnAbort.device();
  }
  if (!Unshared.empty())
    std::cerr << "cclc WARN " + rankName() + ": the ranks of this host share no abort word (" +
                     Unshared +
                     "); a failure stops the GPU collectives of its other ranks at their "
                     "timeout\n"
              << std::flush;
  Access.emplace(Boot, gpu::gpuBusId(Device), [Device = Device](const std::string &Peer) {
    return gpu::canWriteTo(Device, Peer);
  });
  if (debugInfoFromEnvironment())
    std::cerr << "cclc INFO GPU transports of " + Access->describe() + "\n" << std::flush;
  Busy = gpu::MappedBuffer(sizeof(std::atomic<uint32_t>), "the running kernels of " + rankName());
  InFlight = new (Busy.host()) std::atomic<uint32_t>(0);
  Status = gpu::DeviceBuffer(sizeof(cuda::KernelStatus), "the kernels' status of " + rankName());
  StatusCopy = gpu::MappedBuffer(sizeof(cuda::KernelStatus), "reading the kernels' status");
  Setup.emplace("setting up the GPU collectives of " + rankName());
  check(cudaMemsetAsync(Status.get(), 0, sizeof(cuda::KernelStatus), Setup->get()),
        "cannot clear the kernels' status of " + rankName());
  Setup->finish("cannot clear the kernels' status of " + rankName());
  check(gpu::loadInterpreter(), "cannot load the plan interpreter's kernels on " + rankName());
  int Pooled = 0;
  check(cudaDeviceGetAttribute(&Pooled, cudaDevAttrMemoryPoolsSupported, Device),
        "cannot ask GPU " + std::to_string(Device) + " about its memory pools");
  Space.emplace(Workspace::Memory{
      [Device = Device, Setup = Setup->get(), Pooled = Pooled != 0](size_t Bytes) {
        return allocateDevice(Device, Setup, Pooled, Bytes);
      },
      freeDevice,
      /*KeepReplaced=*/true});
  Connections.emplace(Rank, [this](const RankLinks &Mine, const net::LinkOptions &Options) {
    return std::make_unique<gpu::GpuConnections>(this->Boot, Mine.Sends, Mine.Recvs, Options,
                                                 *Access, *AbortWord, InFlight);
  });
}

CudaContext::~CudaContext() {
  // After an abort or a failure, kernels may still run, and may wait for
  // peers that are gone: raising the abort word stops them, and nothing is
  // freed before they ended. A regular destroy waited for them already
  // (synchronize()), unmapped the peers' memory and waited for every rank to
  // do the same, and leaves the word down, so the TCP proxy says goodbye
  // instead of telling its peers that this rank failed.
  DeviceScope Scope(Device);
  gpu::RelaxedCapture Relaxed;
  if (!Drained)
    AbortWord->store(1, std::memory_order_release);
  waitForLaunches({}, /*Quiet=*/true);
  for (auto &[Stream, Event] : Launched)
    cudaEventDestroy(Event);
  // Freed here, with the communicator's device current.
  Algorithms.clear();
  Connections.reset();
  Space.reset();
  Setup.reset();
  Status = {};
  StatusCopy = {};
  Busy = {};
  AbortPage = {};
  OwnAbort = {};
  HostAbort.reset();
}

void CudaContext::loadKernels(const std::deque<Algorithm> &Loaded) {
  reporting([&] {
    DeviceScope Scope(Device);
    gpu::RelaxedCapture Relaxed;
    for (const Algorithm &A : Loaded)
      for (const auto &[Key, Info] : A.CudaKernels) {
        cudaFuncAttributes Attributes;
        check(cudaFuncGetAttributes(&Attributes, reinterpret_cast<const void *>(Info->Run)),
              "cannot load kernel " + std::string(Info->Algorithm) + " (" + Info->Collective +
                  ") on " + rankName());
      }
  });
}

void CudaContext::checkBuffer(const void *Buffer, const char *Name) {
  // Messages are built only for refusals: a call that passes costs no strings.
  cudaPointerAttributes Attributes{};
  reporting([&] {
    DeviceScope Scope(Device);
    gpu::RelaxedCapture Relaxed;
    if (cudaError_t Err = cudaPointerGetAttributes(&Attributes, Buffer); Err != cudaSuccess)
      check(Err, std::string("cannot tell what memory ") + Name + " is");
  });
  auto Refuse = [&](const std::string &Problem) {
    throw ApiError(cclcInvalidArgument, std::string(Name) + " is " + Problem);
  };
  if (Attributes.type == cudaMemoryTypeUnregistered)
    Refuse("host memory that GPU " + std::to_string(Device) +
           " cannot reach; pass device memory (cudaMalloc), pinned memory (cudaHostAlloc) or "
           "managed memory, or pass host buffers and a NULL stream to run on the host");
  if (Attributes.type == cudaMemoryTypeHost && Attributes.devicePointer != Buffer)
    Refuse("pinned host memory that GPU " + std::to_string(Device) +
           " reaches only at another address; allocate it with cudaHostAlloc "
           "(cudaHostAllocMapped), or pass device memory");
  if (Attributes.type == cudaMemoryTypeDevice && Attributes.device != Device)
    Refuse("memory of GPU " + std::to_string(Attributes.device) +
           ", but the communicator runs on GPU " + std::to_string(Device) +
           " (the device current when it first ran on the GPU); pass memory of GPU " +
           std::to_string(Device));
}

void CudaContext::copy(void *Dst, const void *Src, size_t Bytes, void *Stream) {
  reporting([&] {
    DeviceScope Scope(Device);
    if (cudaError_t Err = cudaMemcpyAsync(Dst, Src, Bytes, cudaMemcpyDefault, streamOf(Stream));
        Err != cudaSuccess)
      check(Err, "cannot copy the input of an in-place call aside on " + rankName());
  });
}

const CudaContext::Prepared &CudaContext::prepare(const Algorithm &A) {
  if (auto It = Algorithms.find(&A); It != Algorithms.end())
    return It->second;
  Prepared P;
  P.Net = &Connections->connect(A.Links, A.LinkOptions);
  if (A.Kind == Algorithm::Executor::Interpreter) {
    const plan::EncodedProgram &Program = A.Interp->program(Rank);
    std::string Whose = " of " + A.Name + " for " + rankName();
    P.Steps = gpu::upload(Program.Steps, Setup->get(), "the program steps" + Whose);
    P.ChannelBegin =
        gpu::upload(Program.ChannelBegin, Setup->get(), "the program channels" + Whose);
    Setup->finish("cannot copy the program" + Whose + " to the device");
    P.Program = {static_cast<const kern::ProgramStep *>(P.Steps.get()),
                 static_cast<const uint32_t *>(P.ChannelBegin.get()), Program.Shape};
  }
  // No rank launches before every rank has set up: setup allocates and
  // copies, which CUDA may make wait for kernels already running on the
  // device, and ranks that share a GPU would then wait on each other's
  // kernels until the timeout.
  Boot.barrier();
  return Algorithms.emplace(&A, std::move(P)).first->second;
}

void CudaContext::launch(const Request &R, const Algorithm &A, const kern::CallArgs &Call,
                         const kern::CallStamp &Stamp, void *Stream) {
  reporting([&] {
    DeviceScope Scope(Device);
    // For the first call's setup, and the device queries before a launch.
    gpu::RelaxedCapture Relaxed;
    const Prepared &P = prepare(A);
    cuda::KernelArgs Args;
    static_cast<kern::CallArgs &>(Args) = Call;
    Args.SlotBytes = P.Net->Options.SlotBytes;
    Args.Net = P.Net->Net->links();
    Args.Abort = static_cast<uint32_t *>(AbortDevice);
    Args.Status = static_cast<cuda::KernelStatus *>(Status.get());
    Args.TimeoutNs = KernelTimeoutNs;
    Args.InFlight = static_cast<uint32_t *>(Busy.device());
    Args.Call = Stamp;
    std::string Why;
    cudaError_t Err =
        A.Kind == Algorithm::Executor::CudaKernel
            ? cuda::launch(*A.cudaKernelFor(R), Args, streamOf(Stream), Why)
            : gpu::launchInterpreter(R.Type, R.Op, Args, P.Program, streamOf(Stream), Why);
    if (Err != cudaSuccess)
      throw ApiError(cclcSystemError, Why);
    recordLaunch(streamOf(Stream));
  });
}

void CudaContext::recordLaunch(cudaStream_t Stream) {
  cudaStreamCaptureStatus Capture = cudaStreamCaptureStatusNone;
  check(cudaStreamIsCapturing(Stream, &Capture),
        "cannot tell whether the stream of a collective of " + rankName() + " is being captured");
  if (Capture != cudaStreamCaptureStatusNone)
    return;
  auto [It, New] = Launched.try_emplace(Stream, nullptr);
  if (New)
    if (cudaError_t Err = cudaEventCreateWithFlags(&It->second, cudaEventDisableTiming);
        Err != cudaSuccess) {
      Launched.erase(It);
      check(Err, "cannot create an event to wait for the collectives of " + rankName());
    }
  check(cudaEventRecord(It->second, Stream),
        "cannot record the end of a collective of " + rankName());
}

void CudaContext::waitForLaunches(const std::string &What, bool Quiet) {
  for (auto &[Stream, Event] : Launched)
    if (cudaError_t Err = cudaEventSynchronize(Event); Err != cudaSuccess) {
      cudaGetLastError();
      if (!Quiet)
        check(Err, What);
    }
}

cuda::KernelStatus CudaContext::readStatus() {
  DeviceScope Scope(Device);
  gpu::RelaxedCapture Relaxed;
  std::string What = "cannot read the kernels' status of " + rankName();
  check(cudaMemcpyAsync(StatusCopy.host(), Status.get(), sizeof(cuda::KernelStatus),
                        cudaMemcpyDeviceToHost, Setup->get()),
        What);
  Setup->finish(What);
  cuda::KernelStatus S;
  std::memcpy(&S, StatusCopy.host(), sizeof S);
  return S;
}

std::optional<Classified> CudaContext::failure() {
  std::string Heard = Connections->failure();
  if (AbortWord->load(std::memory_order_acquire) == 0 && Heard.empty())
    return std::nullopt;
  std::string Prefix = "a GPU collective failed on " + rankName() + ": ";
  cuda::KernelStatus S{};
  try {
    S = readStatus();
  } catch (const gpu::CudaError &E) {
    // A kernel that faulted leaves the device unusable: every call fails.
    return Classified{cclcSystemError, Prefix + E.what()};
  }
  cuda::CommStatus Code = cuda::CommStatus(S.Code);
  bool OtherCall = Code == cuda::CommStatus::Mismatch && S.Sent.Seq;
  std::string Cause = Code == cuda::CommStatus::Ok
                          ? (Heard.empty() ? "a rank of this host aborted the GPU collectives" : Heard)
                      : OtherCall ? Describe(S.Peer, S.Sent, S.Called)
                                  : cuda::describe(S);
  if (!Heard.empty() && Cause.find(Heard) == std::string::npos)
    Cause += " (first failure: " + Heard + ")";
  return Classified{Code == cuda::CommStatus::Timeout ? cclcTimeout
                    : OtherCall                       ? cclcInvalidUsage
                                                      : cclcRemoteError,
                    Prefix + Cause};
}

void CudaContext::synchronize() {
  reporting([&] {
    DeviceScope Scope(Device);
    waitForLaunches("cannot wait for the GPU collectives of " + rankName(), /*Quiet=*/false);
  });
  Drained = AbortWord->load(std::memory_order_acquire) == 0;
}

void CudaContext::closePeerMemory() {
  DeviceScope Scope(Device);
  gpu::RelaxedCapture Relaxed;
  Connections->forEach([](gpu::GpuConnections &C) { C.closePeerMemory(); });
}

void CudaContext::abort(const std::string &Cause) {
  Connections->abort(Cause);
  AbortWord->store(1, std::memory_order_release);
}

} // namespace

std::unique_ptr<GpuContext> createGpuContext(net::Bootstrap &Boot, const std::string &Call,
                                             MismatchWords Describe) {
  try {
    return std::make_unique<CudaContext>(Boot, std::move(Describe));
  } catch (const gpu::CudaError &E) {
    throw ApiError(cclcSystemError, "cannot run " + Call + " on the GPU: " + E.what());
  }
}

} // namespace cclc::runtime
