//===- ProcessGroupCclc.cpp - torch.distributed's "cclc" backend ----------===//

#include "ProcessGroupCclc.h"
#include "MappedAllocator.h"

#include <ATen/Functions.h>
#include <ATen/core/ivalue.h>
#include <c10/core/StreamGuard.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <c10/util/Exception.h>
#include <torch/csrc/utils/pybind.h>

#include <cstdlib>
#include <cstring>
#include <future>
#include <optional>
#include <string>

namespace cclc::torch {

namespace {

/// The key under which rank 0 publishes the job's id in the group's store
/// (a prefix store of the group's own, so groups never share it).
constexpr const char *UniqueIdKey = "cclc/unique_id";

/// Throws DistBackendError, saying that What failed on Rank and why (the
/// runtime's message, kept per thread), unless Result is success.
void checkResult(cclcResult_t Result, const char *What, int Rank) {
  if (Result != cclcSuccess)
    C10_THROW_ERROR(DistBackendError, std::string("cclc: ") + What + " failed on rank " +
                                           std::to_string(Rank) + ": " +
                                           cclcGetErrorString(Result) + ": " +
                                           cclcGetLastError(nullptr));
}

/// Refuses tensors the runtime cannot read in place: it takes dense,
/// contiguous tensors in host memory or in a CUDA device's.
void requireDense(const at::Tensor &T, const char *What) {
  TORCH_CHECK(T.device().is_cpu() || T.device().is_cuda(), "cclc: ", What, " is on ",
              T.device().str(), "; the cclc backend takes CPU and CUDA tensors");
  TORCH_CHECK(T.is_contiguous(), "cclc: ", What,
              " is not contiguous; pass a contiguous tensor (tensor.contiguous())");
  TORCH_CHECK(!T.is_sparse(), "cclc: ", What, " is sparse; the cclc backend takes dense tensors");
}

// The runtime's point-to-point engine runs on the host, so the operations
// made of sends and receives stage CUDA tensors through host memory: what
// is sent is copied out when the call is made, on the caller's thread (so
// after the work its current stream holds), and what is received is copied
// in once it has arrived.

/// What a send of T reads: T, or a host copy of a CUDA tensor (undefined
/// stays undefined).
at::Tensor sendable(const at::Tensor &T) { return T.defined() ? T.cpu() : T; }

/// Where a receive into T lands: T, or a host tensor to be copied into the
/// CUDA tensor T afterwards (by landed()).
at::Tensor receivable(const at::Tensor &T) {
  return T.defined() && !T.device().is_cpu() ? at::empty(T.sizes(), T.options().device(at::kCPU))
                                             : T;
}

/// Copies what a receive left in Landing into T, where Landing is a host
/// copy of T's (receivable()).
void landed(const at::Tensor &T, const at::Tensor &Landing) {
  if (T.defined() && !T.is_same(Landing))
    T.copy_(Landing);
}

std::vector<at::Tensor> sendable(const std::vector<at::Tensor> &Tensors) {
  std::vector<at::Tensor> Copies;
  for (const at::Tensor &T : Tensors)
    Copies.push_back(sendable(T));
  return Copies;
}

/// Refuses Other unless it lies on the device of First: one call's tensors
/// are all in host memory or all on one GPU.
void requireSameDevice(const at::Tensor &Other, const at::Tensor &First, const char *What) {
  TORCH_CHECK(Other.device() == First.device(), "cclc: ", What, " has tensors on ",
              First.device().str(), " and on ", Other.device().str(),
              "; one call's tensors must all be on one device");
}

/// How the runtime reduces a tensor: its element type, and how many of them
/// one tensor element holds (2 for complex numbers, reduced as pairs).
struct Reduction {
  cclcDataType_t Type;
  size_t Lanes;
};

Reduction reductionOf(const at::Tensor &T, const c10d::ReduceOp &Op) {
  using R = c10d::ReduceOp::RedOpType;
  R Kind = Op.op_;
  TORCH_CHECK(Kind == R::SUM || Kind == R::AVG || Kind == R::PRODUCT || Kind == R::MIN ||
                  Kind == R::MAX,
              "cclc: the reduction operator ", int(Kind),
              " is not supported; cclc reduces with SUM, AVG, PRODUCT, MIN and MAX");
  switch (T.scalar_type()) {
  case at::kFloat: return {cclcFloat32, 1};
  case at::kDouble: return {cclcFloat64, 1};
  case at::kHalf: return {cclcFloat16, 1};
  case at::kBFloat16: return {cclcBfloat16, 1};
  case at::kChar: return {cclcInt8, 1};
  case at::kByte: return {cclcUint8, 1};
  case at::kInt: return {cclcInt32, 1};
  case at::kLong: return {cclcInt64, 1};
  case at::kUInt32: return {cclcUint32, 1};
  case at::kUInt64: return {cclcUint64, 1};
  case at::kBool:
    TORCH_CHECK(Kind == R::MIN || Kind == R::MAX,
                "cclc: bool tensors reduce with MIN and MAX only");
    return {cclcUint8, 1};
  case at::kComplexFloat:
  case at::kComplexDouble:
    TORCH_CHECK(Kind == R::SUM || Kind == R::AVG,
                "cclc: complex tensors reduce with SUM and AVG only");
    return {T.scalar_type() == at::kComplexFloat ? cclcFloat32 : cclcFloat64, 2};
  default:
    TORCH_CHECK(false, "cclc: cannot reduce tensors of dtype ", T.scalar_type(),
                "; cclc reduces float32, float64, float16, bfloat16, complex, int8, uint8, "
                "int32, int64, uint32, uint64 and bool");
  }
  return {cclcFloat32, 1};
}

cclcRedOp_t redOpOf(const c10d::ReduceOp &Op) {
  using R = c10d::ReduceOp::RedOpType;
  switch (Op.op_) {
  case R::PRODUCT: return cclcProd;
  case R::MIN: return cclcMin;
  case R::MAX: return cclcMax;
  default: return cclcSum; // SUM, and AVG before its division.
  }
}

/// Divides the sum of an AVG by the group's size, as NCCL's average does
/// (integer types truncate).
void averageInPlace(at::Tensor &T, int Size) {
  if (at::isIntegralType(T.scalar_type(), /*includeBool=*/false))
    T.div_(Size, "trunc");
  else
    T.div_(Size);
}

size_t bytesOf(const at::Tensor &T) { return size_t(T.numel()) * T.element_size(); }

/// The elements of Tensors, one after the other, in a new 1-D tensor.
at::Tensor concatenated(const std::vector<at::Tensor> &Tensors) {
  std::vector<at::Tensor> Flats;
  for (const at::Tensor &T : Tensors)
    Flats.push_back(T.flatten());
  return at::cat(Flats);
}

std::vector<at::Tensor> flatList(const std::vector<std::vector<at::Tensor>> &Lists) {
  std::vector<at::Tensor> All;
  for (const std::vector<at::Tensor> &L : Lists)
    All.insert(All.end(), L.begin(), L.end());
  return All;
}

/// Checks that List holds Size tensors shaped like Like.
void requireList(const std::vector<at::Tensor> &List, const at::Tensor &Like, int Size,
                 const char *What) {
  TORCH_CHECK(int(List.size()) == Size, "cclc: ", What, " holds ", List.size(),
              " tensors; pass one per rank of the group (", Size, ")");
  for (const at::Tensor &T : List) {
    requireDense(T, What);
    requireSameDevice(T, Like, What);
    TORCH_CHECK(T.numel() == Like.numel() && T.scalar_type() == Like.scalar_type(), "cclc: ",
                What, " holds a tensor of ", T.numel(), " elements of ", T.scalar_type(),
                " where ", Like.numel(), " of ", Like.scalar_type(), " are expected");
  }
}

/// Checks that Whole (named WholeName) holds Size times the elements of
/// Part (its operation's PartName), of Part's dtype, both dense on one device.
void requireWhole(const at::Tensor &Whole, const char *WholeName, const at::Tensor &Part,
                  const char *PartName, int Size) {
  requireDense(Whole, WholeName);
  requireDense(Part, PartName);
  requireSameDevice(Whole, Part, WholeName);
  TORCH_CHECK(Whole.numel() == Size * Part.numel() && Whole.scalar_type() == Part.scalar_type(),
              "cclc: ", WholeName, " holds ", Whole.numel(), " elements of ", Whole.scalar_type(),
              "; it must hold the group's size (", Size, ") times the ", PartName, "'s ",
              Part.numel(), " elements of ", Part.scalar_type());
}

/// One body that runs One(Outputs[I], Inputs[I])'s for every pair, in
/// order: an operation's coalesced form, named What.
template <class Fn>
std::function<void(cclcStream_t)> forEachPair(std::vector<at::Tensor> &Outputs,
                                              std::vector<at::Tensor> &Inputs, const char *What,
                                              Fn One) {
  TORCH_CHECK(Outputs.size() == Inputs.size(), "cclc: ", What, " takes one output per input");
  std::vector<std::function<void(cclcStream_t)>> Bodies;
  for (size_t I = 0; I < Inputs.size(); ++I) {
    Bodies.push_back(One(Outputs[I], Inputs[I]));
    requireSameDevice(Outputs[I], Outputs[0], What);
  }
  return [Bodies = std::move(Bodies)](cclcStream_t Stream) {
    for (const std::function<void(cclcStream_t)> &Run : Bodies)
      Run(Stream);
  };
}

size_t totalBytes(const std::vector<at::Tensor> &Tensors) {
  size_t Bytes = 0;
  for (const at::Tensor &T : Tensors)
    Bytes += bytesOf(T);
  return Bytes;
}

/// Calls smaller than this run on the calling thread when nothing is
/// queued: handing them to the backend's thread would cost more than they
/// take. CCLC_INLINE_BYTES overrides it (0 sends every call to the thread).
size_t inlineBytes() {
  if (const char *Text = std::getenv("CCLC_INLINE_BYTES")) {
    char *End = nullptr;
    unsigned long long Bytes = std::strtoull(Text, &End, 10);
    TORCH_CHECK(End != Text && *End == '\0', "cclc: CCLC_INLINE_BYTES is '", Text,
                "'; set it to a number of bytes");
    return size_t(Bytes);
  }
  return 64 << 10;
}

/// The single tensor of an operation that takes a list of one.
at::Tensor &single(std::vector<at::Tensor> &Tensors, const char *What) {
  TORCH_CHECK(Tensors.size() == 1, "cclc: ", What, " takes one tensor per call, not ",
              Tensors.size());
  requireDense(Tensors[0], What);
  return Tensors[0];
}

/// The calling thread's current stream on Device.
c10::Stream currentStream(c10::Device Device) {
  return c10::impl::getDeviceGuardImpl(Device.type())->getStream(Device);
}

/// The stream a call on Outputs runs on: the current stream of their CUDA
/// device, or none for host tensors.
std::optional<c10::Stream> streamOf(const std::vector<at::Tensor> &Outputs) {
  if (Outputs.empty() || !Outputs[0].device().is_cuda())
    return std::nullopt;
  return currentStream(Outputs[0].device());
}

} // namespace

//===----------------------------------------------------------------------===//
// CclcWork
//===----------------------------------------------------------------------===//

CclcWork::CclcWork(int Rank, c10d::OpType Type, std::vector<at::Tensor> Outputs,
                   std::optional<c10::Stream> Stream)
    : Work(Rank, Type), Outputs(std::move(Outputs)), Stream(Stream),
      Future(c10::make_intrusive<c10::ivalue::Future>(
          c10::ListType::create(c10::TensorType::get()),
          Stream ? std::vector<c10::Device>{Stream->device()} : std::vector<c10::Device>{})) {}

CclcWork::CclcWork(int Rank, c10d::OpType Type, std::vector<at::Tensor> Outputs,
                   std::shared_ptr<PeerQueue> Queue)
    : CclcWork(Rank, Type, std::move(Outputs)) {
  this->Queue = std::move(Queue);
}

bool CclcWork::isCompleted() {
  std::lock_guard<std::mutex> Guard(Lock);
  return Done && (!Ended || Ended->query());
}

bool CclcWork::isSuccess() const {
  std::lock_guard<std::mutex> Guard(Lock);
  return Done && !Error;
}

std::exception_ptr CclcWork::exception() const {
  std::lock_guard<std::mutex> Guard(Lock);
  return Error;
}

void CclcWork::release() {
  std::shared_ptr<PeerQueue> Held;
  {
    std::lock_guard<std::mutex> Guard(Lock);
    Held = std::move(Queue);
  }
  if (Held)
    Held->flush();
}

bool CclcWork::wait(std::chrono::milliseconds) {
  release();
  std::unique_lock<std::mutex> Guard(Lock);
  Finished.wait(Guard, [&] { return Done; });
  if (Error)
    std::rethrow_exception(Error);
  if (Ended)
    Ended->block(currentStream(Stream->device()));
  return true;
}

std::vector<at::Tensor> CclcWork::result() { return Outputs; }

c10::intrusive_ptr<c10::ivalue::Future> CclcWork::getFuture() {
  release();
  return Future;
}

void CclcWork::finish(std::exception_ptr Failure) {
  {
    std::lock_guard<std::mutex> Guard(Lock);
    Done = true;
    Error = Failure;
    Queue.reset();
    if (Stream && !Failure) {
      Ended.emplace(Stream->device_type());
      Ended->record(*Stream);
    }
  }
  Finished.notify_all();
  // The future's callbacks run here, on the thread that ran the call, and
  // may call back into this Work: no lock is held.
  if (Failure)
    Future->setError(Failure);
  else
    Future->markCompleted(c10::IValue(Outputs));
}

//===----------------------------------------------------------------------===//
// PeerQueue
//===----------------------------------------------------------------------===//

void PeerQueue::post(bool IsSend, const at::Tensor &T, int Peer,
                     c10::intrusive_ptr<CclcWork> Work) {
  at::Tensor Moved = IsSend ? sendable(T) : receivable(T);
  std::lock_guard<std::mutex> Guard(Lock);
  Held.push_back({IsSend, Moved, IsSend ? at::Tensor() : T, Peer, std::move(Work)});
}

void PeerQueue::flush() {
  // Submitting under the lock keeps two flushes' groups in their order.
  std::lock_guard<std::mutex> Guard(Lock);
  if (Held.empty() || !Calls)
    return;
  auto Batch = std::make_shared<std::vector<Pending>>(std::move(Held));
  Held.clear();
  size_t Bytes = 0;
  for (const Pending &P : *Batch)
    Bytes += bytesOf(P.Tensor);
  Calls->submit(Bytes,
                {[Batch, Comm = Comm, Rank = Rank] {
                   cclcResult_t Result = cclcGroupStart();
                   for (const Pending &P : *Batch) {
                     if (Result != cclcSuccess)
                       break;
                     void *Data = P.Tensor.data_ptr();
                     size_t N = bytesOf(P.Tensor);
                     Result = P.IsSend ? cclcSend(Data, N, cclcUint8, P.Peer, Comm, nullptr)
                                       : cclcRecv(Data, N, cclcUint8, P.Peer, Comm, nullptr);
                   }
                   cclcResult_t Ended = cclcGroupEnd();
                   checkResult(Result != cclcSuccess ? Result : Ended,
                               "a group of sends and receives", Rank);
                   for (const Pending &P : *Batch)
                     landed(P.Received, P.Tensor);
                 },
                 [Batch](std::exception_ptr Error) {
                   for (Pending &P : *Batch)
                     P.Work->finish(Error);
                 }});
}

void PeerQueue::abandon() {
  std::vector<Pending> Dropped;
  {
    std::lock_guard<std::mutex> Guard(Lock);
    Calls = nullptr;
    Dropped = std::move(Held);
    Held.clear();
  }
  if (Dropped.empty())
    return;
  auto Error = std::make_exception_ptr(c10::DistBackendError(
      {__func__, __FILE__, uint32_t(__LINE__)},
      "cclc: the process group was destroyed before its sends and receives were waited for"));
  for (Pending &P : Dropped)
    P.Work->finish(Error);
}

//===----------------------------------------------------------------------===//
// ProcessGroupCclc
//===----------------------------------------------------------------------===//

ProcessGroupCclc::ProcessGroupCclc(const c10::intrusive_ptr<c10d::Store> &Store, int Rank,
                                   int Size, std::chrono::milliseconds Timeout,
                                   const std::vector<std::string> &PlanFiles)
    : Backend(Rank, Size) {
  cclcUniqueId Id;
  if (Rank == 0) {
    check(cclcGetUniqueId(&Id), "cclcGetUniqueId");
    std::vector<uint8_t> Bytes(Id.internal, Id.internal + sizeof Id.internal);
    Store->set(UniqueIdKey, Bytes);
  } else {
    Store->wait({UniqueIdKey}, Timeout);
    std::vector<uint8_t> Bytes = Store->get(UniqueIdKey);
    TORCH_CHECK(Bytes.size() == sizeof Id.internal, "cclc: the store holds an id of ",
                Bytes.size(), " bytes under ", UniqueIdKey,
                "; every rank must run the same cclc version");
    std::memcpy(Id.internal, Bytes.data(), Bytes.size());
  }
  check(cclcCommInitRank(&Comm, Size, Id, Rank), "cclcCommInitRank");
  Calls = std::make_unique<CallQueue>(inlineBytes());
  Peers = std::make_shared<PeerQueue>(Comm, Rank, *Calls);
  for (const std::string &Plan : PlanFiles)
    check(cclcCommLoadPlan(Comm, Plan.c_str()), ("cclcCommLoadPlan " + Plan).c_str());
}

ProcessGroupCclc::~ProcessGroupCclc() {
  if (!Comm)
    return;
  // Submitted calls run to their end (each is bounded by the runtime's
  // timeout); held sends and receives never started, so they fail.
  Peers->abandon();
  {
    // The queue's thread may be finishing a future whose Python callbacks
    // need the GIL, which the caller (Python dropping the group) may hold.
    std::optional<pybind11::gil_scoped_release> NoGil;
    if (Py_IsInitialized() && PyGILState_Check())
      NoGil.emplace();
    Calls.reset();
  }
  cclcResult_t Async = cclcSuccess;
  // A communicator that failed cannot wait for its peers; abort it instead.
  // Either call frees it.
  if (cclcCommGetAsyncError(Comm, &Async) == cclcSuccess && Async == cclcSuccess)
    cclcCommDestroy(Comm);
  else
    cclcCommAbort(Comm);
}

void ProcessGroupCclc::check(cclcResult_t Result, const char *What) const {
  checkResult(Result, What, getRank());
}

void ProcessGroupCclc::flushPeers() { Peers->flush(); }

c10::intrusive_ptr<c10d::Work> ProcessGroupCclc::submit(c10d::OpType Type,
                                                        std::vector<at::Tensor> Outputs,
                                                        size_t Bytes, Body Run) {
  flushPeers();
  if (std::optional<c10::Stream> Stream = streamOf(Outputs))
    return enqueue(Type, std::move(Outputs), *Stream, std::move(Run));
  auto Work = c10::make_intrusive<CclcWork>(getRank(), Type, std::move(Outputs));
  Calls->submit(Bytes, {[Run = std::move(Run)] { Run(nullptr); },
                        [Work](std::exception_ptr Error) { Work->finish(Error); }});
  return Work;
}

c10::intrusive_ptr<c10d::Work> ProcessGroupCclc::enqueue(c10d::OpType Type,
                                                         std::vector<at::Tensor> Outputs,
                                                         c10::Stream Stream, Body Run) {
  auto Work = c10::make_intrusive<CclcWork>(getRank(), Type, std::move(Outputs), Stream);
  // Enqueuing takes microseconds, so it runs here when nothing is queued;
  // behind host calls, on the queue's thread with the caller's stream made
  // current there, for the body's own tensor operations (an AVG's division,
  // a coalesced call's copies).
  auto Enqueued = std::make_shared<std::promise<std::exception_ptr>>();
  std::future<std::exception_ptr> Result = Enqueued->get_future();
  Calls->submit(0, {[Run = std::move(Run), Stream] {
                      c10::StreamGuard Current(Stream);
                      Run(static_cast<cclcStream_t>(Stream.native_handle()));
                    },
                    [Enqueued](std::exception_ptr Error) { Enqueued->set_value(Error); }});
  std::exception_ptr Error;
  {
    // The host calls ahead of it may complete futures whose Python
    // callbacks need the GIL.
    std::optional<pybind11::gil_scoped_release> NoGil;
    if (Py_IsInitialized() && PyGILState_Check())
      NoGil.emplace();
    Error = Result.get();
  }
  Work->finish(Error);
  return Work;
}

ProcessGroupCclc::Body ProcessGroupCclc::allreduceInPlace(at::Tensor T, const c10d::ReduceOp &Op) {
  Reduction R = reductionOf(T, Op);
  return [this, T, R, Kind = Op.op_](cclcStream_t Stream) mutable {
    check(cclcAllReduce(T.data_ptr(), T.data_ptr(), size_t(T.numel()) * R.Lanes, R.Type,
                        redOpOf(Kind), Comm, Stream),
          "allreduce");
    if (Kind == c10d::ReduceOp::AVG)
      averageInPlace(T, getSize());
  };
}

ProcessGroupCclc::Body ProcessGroupCclc::allgatherInto(at::Tensor Output, at::Tensor Input) {
  requireWhole(Output, "allgather's output", Input, "input", getSize());
  return [this, Output, Input](cclcStream_t Stream) {
    check(cclcAllGather(Input.data_ptr(), Output.data_ptr(), bytesOf(Input), cclcUint8, Comm,
                        Stream),
          "allgather");
  };
}

ProcessGroupCclc::Body ProcessGroupCclc::reduceScatterInto(at::Tensor Output, at::Tensor Input,
                                                           const c10d::ReduceOp &Op) {
  requireWhole(Input, "reduce_scatter's input", Output, "output", getSize());
  Reduction R = reductionOf(Output, Op);
  return [this, Output, Input, R, Kind = Op.op_](cclcStream_t Stream) mutable {
    check(cclcReduceScatter(Input.data_ptr(), Output.data_ptr(),
                            size_t(Output.numel()) * R.Lanes, R.Type, redOpOf(Kind), Comm,
                            Stream),
          "reduce_scatter");
    if (Kind == c10d::ReduceOp::AVG)
      averageInPlace(Output, getSize());
  };
}

void ProcessGroupCclc::exchange(const std::vector<at::Tensor> &Sends,
                                const std::vector<at::Tensor> &Recvs) {
  std::vector<at::Tensor> Landings;
  for (const at::Tensor &T : Recvs)
    Landings.push_back(receivable(T));
  cclcResult_t Result = cclcGroupStart();
  for (int Peer = 0; Peer < getSize() && Result == cclcSuccess; ++Peer) {
    if (Sends[Peer].defined())
      Result = cclcSend(Sends[Peer].data_ptr(), bytesOf(Sends[Peer]), cclcUint8, Peer, Comm,
                        nullptr);
    if (Result == cclcSuccess && Landings[Peer].defined())
      Result = cclcRecv(Landings[Peer].data_ptr(), bytesOf(Landings[Peer]), cclcUint8, Peer,
                        Comm, nullptr);
  }
  cclcResult_t Ended = cclcGroupEnd();
  check(Result != cclcSuccess ? Result : Ended, "a group of sends and receives");
  for (int Peer = 0; Peer < getSize(); ++Peer)
    landed(Recvs[Peer], Landings[Peer]);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupCclc::broadcast(std::vector<at::Tensor> &Tensors,
                                                           const c10d::BroadcastOptions &Opts) {
  at::Tensor T = single(Tensors, "broadcast");
  int Root = int(Opts.rootRank);
  return submit(c10d::OpType::BROADCAST, Tensors, bytesOf(T),
                [this, T, Root](cclcStream_t Stream) {
                  check(cclcBroadcast(T.data_ptr(), T.data_ptr(), bytesOf(T), cclcUint8, Root,
                                      Comm, Stream),
                        "broadcast");
                });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupCclc::allreduce(std::vector<at::Tensor> &Tensors,
                                                           const c10d::AllreduceOptions &Opts) {
  at::Tensor &T = single(Tensors, "allreduce");
  return submit(c10d::OpType::ALLREDUCE, Tensors, bytesOf(T),
                allreduceInPlace(T, Opts.reduceOp));
}

c10::intrusive_ptr<c10d::Work>
ProcessGroupCclc::allreduce_coalesced(std::vector<at::Tensor> &Tensors,
                                      const c10d::AllreduceCoalescedOptions &Opts) {
  TORCH_CHECK(!Tensors.empty(), "cclc: allreduce_coalesced takes at least one tensor");
  for (const at::Tensor &T : Tensors) {
    requireDense(T, "allreduce_coalesced");
    requireSameDevice(T, Tensors[0], "allreduce_coalesced");
    TORCH_CHECK(T.scalar_type() == Tensors[0].scalar_type(),
                "cclc: allreduce_coalesced takes tensors of one dtype");
  }
  // One call for the lot: the tensors travel in one flat buffer, filled
  // when the call runs, after the calls before it.
  reductionOf(Tensors[0], Opts.reduceOp);
  return submit(c10d::OpType::ALLREDUCE_COALESCED, Tensors, totalBytes(Tensors),
                [this, Tensors, Op = Opts.reduceOp](cclcStream_t Stream) {
                  at::Tensor Flat = concatenated(Tensors);
                  allreduceInPlace(Flat, Op)(Stream);
                  int64_t Offset = 0;
                  for (const at::Tensor &T : Tensors) {
                    T.copy_(Flat.narrow(0, Offset, T.numel()).view(T.sizes()));
                    Offset += T.numel();
                  }
                });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupCclc::reduce(std::vector<at::Tensor> &Tensors,
                                                        const c10d::ReduceOptions &Opts) {
  at::Tensor T = single(Tensors, "reduce");
  Reduction R = reductionOf(T, Opts.reduceOp);
  int Root = int(Opts.rootRank);
  return submit(c10d::OpType::REDUCE, Tensors, bytesOf(T),
                [this, T, R, Root, Kind = Opts.reduceOp.op_](cclcStream_t Stream) mutable {
                  check(cclcReduce(T.data_ptr(), T.data_ptr(), size_t(T.numel()) * R.Lanes,
                                   R.Type, redOpOf(Kind), Root, Comm, Stream),
                        "reduce");
                  if (Kind == c10d::ReduceOp::AVG && getRank() == Root)
                    averageInPlace(T, getSize());
                });
}

c10::intrusive_ptr<c10d::Work>
ProcessGroupCclc::allgather(std::vector<std::vector<at::Tensor>> &Outputs,
                            std::vector<at::Tensor> &Inputs, const c10d::AllgatherOptions &) {
  at::Tensor In = single(Inputs, "allgather");
  TORCH_CHECK(Outputs.size() == 1, "cclc: allgather takes one output list per call");
  requireList(Outputs[0], In, getSize(), "allgather's output list");
  at::Tensor Flat = at::empty({getSize() * In.numel()}, In.options());
  Body Gather = allgatherInto(Flat, In);
  return submit(c10d::OpType::ALLGATHER, Outputs[0], bytesOf(Flat),
                [this, Gather, Flat, In, List = Outputs[0]](cclcStream_t Stream) {
                  Gather(Stream);
                  for (int Rank = 0; Rank < getSize(); ++Rank)
                    List[Rank].copy_(
                        Flat.narrow(0, Rank * In.numel(), In.numel()).view(In.sizes()));
                });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupCclc::_allgather_base(at::Tensor &Output,
                                                                 at::Tensor &Input,
                                                                 const c10d::AllgatherOptions &) {
  return submit(c10d::OpType::_ALLGATHER_BASE, {Output}, bytesOf(Output),
                allgatherInto(Output, Input));
}

c10::intrusive_ptr<c10d::Work> ProcessGroupCclc::allgather_into_tensor_coalesced(
    std::vector<at::Tensor> &Outputs, std::vector<at::Tensor> &Inputs,
    const c10d::AllgatherOptions &) {
  Body All = forEachPair(Outputs, Inputs, "allgather_into_tensor_coalesced",
                         [&](at::Tensor &Out, at::Tensor &In) { return allgatherInto(Out, In); });
  // COALESCED, which every torch release names (the per-operation kinds came later).
  return submit(c10d::OpType::COALESCED, Outputs, totalBytes(Outputs),
                std::move(All));
}

c10::intrusive_ptr<c10d::Work>
ProcessGroupCclc::gather(std::vector<std::vector<at::Tensor>> &Outputs,
                         std::vector<at::Tensor> &Inputs, const c10d::GatherOptions &Opts) {
  at::Tensor In = single(Inputs, "gather");
  int Root = int(Opts.rootRank);
  std::vector<at::Tensor> Sends(getSize()), Recvs(getSize()), Results;
  if (getRank() == Root) {
    TORCH_CHECK(Outputs.size() == 1, "cclc: gather takes one output list on the root");
    requireList(Outputs[0], In, getSize(), "gather's output list");
    Recvs = Results = Outputs[0];
    Recvs[Root] = at::Tensor();
  } else {
    TORCH_CHECK(Outputs.empty() || Outputs[0].empty(),
                "cclc: gather takes an output list on the root only");
    Sends[Root] = sendable(In);
  }
  return submit(c10d::OpType::GATHER, Results, bytesOf(In) * getSize(),
                [this, In, Sends, Recvs, Results, Root](cclcStream_t) {
                  if (!Results.empty())
                    Results[Root].copy_(In);
                  exchange(Sends, Recvs);
                });
}

c10::intrusive_ptr<c10d::Work>
ProcessGroupCclc::scatter(std::vector<at::Tensor> &Outputs,
                          std::vector<std::vector<at::Tensor>> &Inputs,
                          const c10d::ScatterOptions &Opts) {
  at::Tensor Out = single(Outputs, "scatter");
  int Root = int(Opts.rootRank);
  std::vector<at::Tensor> Sends(getSize()), Recvs(getSize());
  at::Tensor Own;
  if (getRank() == Root) {
    TORCH_CHECK(Inputs.size() == 1, "cclc: scatter takes one input list on the root");
    requireList(Inputs[0], Out, getSize(), "scatter's input list");
    std::vector<at::Tensor> Blocks = Inputs[0];
    Own = Blocks[Root];
    Blocks[Root] = at::Tensor();
    Sends = sendable(Blocks);
  } else {
    TORCH_CHECK(Inputs.empty() || Inputs[0].empty(),
                "cclc: scatter takes an input list on the root only");
    Recvs[Root] = Out;
  }
  return submit(c10d::OpType::SCATTER, Outputs, bytesOf(Out) * getSize(),
                [this, Out, Own, Sends, Recvs](cclcStream_t) {
                  if (Own.defined())
                    Out.copy_(Own);
                  exchange(Sends, Recvs);
                });
}

c10::intrusive_ptr<c10d::Work>
ProcessGroupCclc::reduce_scatter(std::vector<at::Tensor> &Outputs,
                                 std::vector<std::vector<at::Tensor>> &Inputs,
                                 const c10d::ReduceScatterOptions &Opts) {
  at::Tensor Out = single(Outputs, "reduce_scatter");
  TORCH_CHECK(Inputs.size() == 1, "cclc: reduce_scatter takes one input list per call");
  requireList(Inputs[0], Out, getSize(), "reduce_scatter's input list");
  reductionOf(Out, Opts.reduceOp);
  // The inputs travel in one flat buffer, filled when the call runs.
  return submit(c10d::OpType::REDUCE_SCATTER, Outputs, totalBytes(Inputs[0]),
                [this, Out, List = Inputs[0], Op = Opts.reduceOp](cclcStream_t Stream) {
                  reduceScatterInto(Out, concatenated(List), Op)(Stream);
                });
}

c10::intrusive_ptr<c10d::Work>
ProcessGroupCclc::_reduce_scatter_base(at::Tensor &Output, at::Tensor &Input,
                                       const c10d::ReduceScatterOptions &Opts) {
  return submit(c10d::OpType::_REDUCE_SCATTER_BASE, {Output}, bytesOf(Input),
                reduceScatterInto(Output, Input, Opts.reduceOp));
}

c10::intrusive_ptr<c10d::Work> ProcessGroupCclc::reduce_scatter_tensor_coalesced(
    std::vector<at::Tensor> &Outputs, std::vector<at::Tensor> &Inputs,
    const c10d::ReduceScatterOptions &Opts) {
  Body All = forEachPair(Outputs, Inputs, "reduce_scatter_tensor_coalesced",
                         [&](at::Tensor &Out, at::Tensor &In) {
                           return reduceScatterInto(Out, In, Opts.reduceOp);
                         });
  return submit(c10d::OpType::COALESCED, Outputs, totalBytes(Inputs),
                std::move(All));
}

c10::intrusive_ptr<c10d::Work>
ProcessGroupCclc::alltoall_base(at::Tensor &Output, at::Tensor &Input,
                                std::vector<int64_t> &OutputSplits,
                                std::vector<int64_t> &InputSplits, const c10d::AllToAllOptions &) {
  requireDense(Input, "all_to_all_single's input");
  requireDense(Output, "all_to_all_single's output");
  requireSameDevice(Output, Input, "all_to_all_single");
  TORCH_CHECK(Output.scalar_type() == Input.scalar_type(),
              "cclc: all_to_all_single's input and output differ in dtype");
  if (OutputSplits.empty() && InputSplits.empty()) {
    TORCH_CHECK(Input.numel() == Output.numel() && Input.numel() % getSize() == 0,
                "cclc: all_to_all_single without split sizes needs input and output of equal "
                "sizes divisible by the group's size (",
                getSize(), "), not ", Input.numel(), " and ", Output.numel());
    return submit(c10d::OpType::ALLTOALL_BASE, {Output}, bytesOf(Input),
                  [this, Output, In = sendable(Input)](cclcStream_t) {
                    at::Tensor Out = receivable(Output);
                    check(cclcAllToAll(In.data_ptr(), Out.data_ptr(), bytesOf(In) / getSize(),
                                       cclcUint8, Comm, nullptr),
                          "all_to_all_single");
                    landed(Output, Out);
                  });
  }
  // Uneven splits count rows of the first dimension.
  auto Slices = [&](at::Tensor &T, std::vector<int64_t> &Splits, const char *What) {
    std::vector<at::Tensor> Parts(getSize());
    int64_t Rows = T.dim() ? T.size(0) : 1;
    if (Splits.empty())
      Splits.assign(getSize(), Rows / getSize());
    TORCH_CHECK(int(Splits.size()) == getSize(), "cclc: all_to_all_single's ", What,
                " split sizes list ", Splits.size(), " entries; pass one per rank (", getSize(),
                ")");
    int64_t Offset = 0;
    for (int Peer = 0; Peer < getSize(); ++Peer) {
      TORCH_CHECK(Splits[Peer] >= 0 && Offset + Splits[Peer] <= Rows, "cclc: all_to_all_single's ",
                  What, " split sizes exceed its ", Rows, " rows");
      Parts[Peer] = T.narrow(0, Offset, Splits[Peer]);
      Offset += Splits[Peer];
    }
    return Parts;
  };
  std::vector<at::Tensor> Sends = sendable(Slices(Input, InputSplits, "input"));
  std::vector<at::Tensor> Recvs = Slices(Output, OutputSplits, "output");
  return submit(c10d::OpType::ALLTOALL_BASE, {Output}, bytesOf(Input),
                [this, Sends, Recvs](cclcStream_t) { exchange(Sends, Recvs); });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupCclc::alltoall(std::vector<at::Tensor> &Outputs,
                                                          std::vector<at::Tensor> &Inputs,
                                                          const c10d::AllToAllOptions &) {
  TORCH_CHECK(int(Outputs.size()) == getSize() && int(Inputs.size()) == getSize(),
              "cclc: all_to_all takes one input and one output tensor per rank of the group (",
              getSize(), ")");
  for (const at::Tensor &T : flatList({Outputs, Inputs})) {
    requireDense(T, "all_to_all's tensors");
    requireSameDevice(T, Outputs[0], "all_to_all");
  }
  return submit(c10d::OpType::ALLTOALL, Outputs, totalBytes(Inputs),
                [this, Sends = sendable(Inputs), Recvs = Outputs](cclcStream_t) {
                  exchange(Sends, Recvs);
                });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupCclc::send(std::vector<at::Tensor> &Tensors,
                                                      int DstRank, int) {
  at::Tensor &T = single(Tensors, "send");
  auto Work = c10::make_intrusive<CclcWork>(getRank(), c10d::OpType::SEND, Tensors, Peers);
  Peers->post(/*IsSend=*/true, T, DstRank, Work);
  return Work;
}

c10::intrusive_ptr<c10d::Work> ProcessGroupCclc::recv(std::vector<at::Tensor> &Tensors,
                                                      int SrcRank, int) {
  at::Tensor &T = single(Tensors, "recv");
  auto Work = c10::make_intrusive<CclcWork>(getRank(), c10d::OpType::RECV, Tensors, Peers);
  Peers->post(/*IsSend=*/false, T, SrcRank, Work);
  return Work;
}

c10::intrusive_ptr<c10d::Work> ProcessGroupCclc::barrier(const c10d::BarrierOptions &) {
  // Queued after every call before it, so it also waits for them.
  return submit(c10d::OpType::BARRIER, {}, 0,
                allreduceInPlace(at::zeros({1}, at::kInt), c10d::ReduceOp::SUM));
}

at::Tensor ProcessGroupCclc::allocateTensor(long Size, at::TensorOptions Options) {
  if (!Options.device().is_cpu())
    return at::empty({Size}, Options);
  return MappedAllocator::mappedTensor(Size, Options);
}

c10::intrusive_ptr<c10d::Backend>
createProcessGroupCclc(const c10::intrusive_ptr<c10d::Store> &Store, int Rank, int Size,
                       std::chrono::milliseconds Timeout, const std::vector<std::string> &PlanFiles) {
  return c10::make_intrusive<ProcessGroupCclc>(Store, Rank, Size, Timeout, PlanFiles);
}

} // namespace cclc::torch
