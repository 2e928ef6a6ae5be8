//===- ProcessGroupCclc.cpp - torch.distributed's "cclc" backend ----------===//

#include "ProcessGroupCclc.h"

#include <ATen/Functions.h>
#include <ATen/core/ivalue.h>
#include <c10/util/Exception.h>

#include <cstring>
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

/// Refuses tensors the runtime cannot read in place.
void requireHostDense(const at::Tensor &T, const char *What) {
  TORCH_CHECK(T.device().is_cpu(), "cclc: ", What, " is on ", T.device().str(),
              "; the cclc backend takes CPU tensors (use the nccl backend for CUDA tensors, or "
              "a group with backend \"cpu:cclc,cuda:nccl\")");
  TORCH_CHECK(T.is_contiguous(), "cclc: ", What,
              " is not contiguous; pass a contiguous tensor (tensor.contiguous())");
  TORCH_CHECK(!T.is_sparse(), "cclc: ", What, " is sparse; the cclc backend takes dense tensors");
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
    requireHostDense(T, What);
    TORCH_CHECK(T.numel() == Like.numel() && T.scalar_type() == Like.scalar_type(), "cclc: ",
                What, " holds a tensor of ", T.numel(), " elements of ", T.scalar_type(),
                " where ", Like.numel(), " of ", Like.scalar_type(), " are expected");
  }
}

/// Checks that Whole (named WholeName) holds Size times the elements of
/// Part (its operation's PartName), of Part's dtype, both dense on the host.
void requireWhole(const at::Tensor &Whole, const char *WholeName, const at::Tensor &Part,
                  const char *PartName, int Size) {
  requireHostDense(Whole, WholeName);
  requireHostDense(Part, PartName);
  TORCH_CHECK(Whole.numel() == Size * Part.numel() && Whole.scalar_type() == Part.scalar_type(),
              "cclc: ", WholeName, " holds ", Whole.numel(), " elements of ", Whole.scalar_type(),
              "; it must hold the group's size (", Size, ") times the ", PartName, "'s ",
              Part.numel(), " elements of ", Part.scalar_type());
}

/// Runs One(Outputs[I], Inputs[I]) for every pair: an operation's
/// coalesced form, named What.
template <class Fn>
void forEachPair(std::vector<at::Tensor> &Outputs, std::vector<at::Tensor> &Inputs,
                 const char *What, Fn One) {
  TORCH_CHECK(Outputs.size() == Inputs.size(), "cclc: ", What, " takes one output per input");
  for (size_t I = 0; I < Inputs.size(); ++I)
    One(Outputs[I], Inputs[I]);
}

/// The single tensor of an operation that takes a list of one.
at::Tensor &single(std::vector<at::Tensor> &Tensors, const char *What) {
  TORCH_CHECK(Tensors.size() == 1, "cclc: ", What, " takes one tensor per call, not ",
              Tensors.size());
  requireHostDense(Tensors[0], What);
  return Tensors[0];
}

} // namespace

//===----------------------------------------------------------------------===//
// CclcWork
//===----------------------------------------------------------------------===//

CclcWork::CclcWork(int Rank, c10d::OpType Type, std::vector<at::Tensor> Outputs)
    : Work(Rank, Type), Done(true), Outputs(std::move(Outputs)) {}

CclcWork::CclcWork(int Rank, c10d::OpType Type, std::vector<at::Tensor> Outputs,
                   std::shared_ptr<PeerQueue> Queue)
    : Work(Rank, Type), Outputs(std::move(Outputs)), Queue(std::move(Queue)) {}

bool CclcWork::isCompleted() {
  std::lock_guard<std::mutex> Guard(Lock);
  return Done;
}

bool CclcWork::isSuccess() const {
  std::lock_guard<std::mutex> Guard(Lock);
  return Done && !Error;
}

std::exception_ptr CclcWork::exception() const {
  std::lock_guard<std::mutex> Guard(Lock);
  return Error;
}

bool CclcWork::wait(std::chrono::milliseconds) {
  // The runtime bounds every wait by its own timeout, so a queued operation
  // needs no second one here.
  std::shared_ptr<PeerQueue> Pending;
  {
    std::lock_guard<std::mutex> Guard(Lock);
    if (!Done)
      Pending = Queue;
  }
  if (Pending)
    Pending->flush();
  std::lock_guard<std::mutex> Guard(Lock);
  if (Error)
    std::rethrow_exception(Error);
  return true;
}

std::vector<at::Tensor> CclcWork::result() {
  std::lock_guard<std::mutex> Guard(Lock);
  return Outputs;
}

c10::intrusive_ptr<c10::ivalue::Future> CclcWork::getFuture() {
  wait(std::chrono::milliseconds(0));
  std::lock_guard<std::mutex> Guard(Lock);
  if (!Future) {
    Future = c10::make_intrusive<c10::ivalue::Future>(
        c10::ListType::create(c10::TensorType::get()));
    Future->markCompleted(c10::IValue(Outputs));
  }
  return Future;
}

void CclcWork::finish(std::exception_ptr Failure) {
  std::lock_guard<std::mutex> Guard(Lock);
  Done = true;
  Error = std::move(Failure);
  Queue.reset();
}

//===----------------------------------------------------------------------===//
// PeerQueue
//===----------------------------------------------------------------------===//

void PeerQueue::post(bool IsSend, const at::Tensor &T, int Peer,
                     c10::intrusive_ptr<CclcWork> Work) {
  std::lock_guard<std::recursive_mutex> Guard(Lock);
  Queued.push_back({IsSend, T, Peer, std::move(Work)});
}

void PeerQueue::flush() {
  std::lock_guard<std::recursive_mutex> Guard(Lock);
  if (Queued.empty())
    return;
  std::vector<Pending> Batch = std::move(Queued);
  Queued.clear();
  cclcResult_t Result = cclcGroupStart();
  for (const Pending &P : Batch) {
    if (Result != cclcSuccess)
      break;
    Result = P.IsSend ? cclcSend(P.Tensor.data_ptr(), bytesOf(P.Tensor), cclcUint8, P.Peer, Comm,
                                 nullptr)
                      : cclcRecv(P.Tensor.data_ptr(), bytesOf(P.Tensor), cclcUint8, P.Peer, Comm,
                                 nullptr);
  }
  cclcResult_t Ended = cclcGroupEnd();
  if (Result == cclcSuccess)
    Result = Ended;
  std::exception_ptr Error;
  try {
    checkResult(Result, "a group of sends and receives", Rank);
  } catch (...) {
    Error = std::current_exception();
  }
  for (Pending &P : Batch)
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
  Peers = std::make_shared<PeerQueue>(Comm, Rank);
  for (const std::string &Plan : PlanFiles)
    check(cclcCommLoadPlan(Comm, Plan.c_str()), ("cclcCommLoadPlan " + Plan).c_str());
}

ProcessGroupCclc::~ProcessGroupCclc() {
  if (!Comm)
    return;
  cclcResult_t Async = cclcSuccess;
  // A communicator that failed cannot wait for its peers; abort it instead.
  if (cclcCommGetAsyncError(Comm, &Async) != cclcSuccess || Async != cclcSuccess ||
      cclcCommDestroy(Comm) != cclcSuccess)
    cclcCommAbort(Comm);
}

void ProcessGroupCclc::check(cclcResult_t Result, const char *What) const {
  checkResult(Result, What, getRank());
}

void ProcessGroupCclc::flushPeers() { Peers->flush(); }

c10::intrusive_ptr<c10d::Work> ProcessGroupCclc::done(c10d::OpType Type,
                                                      std::vector<at::Tensor> Outputs) {
  return c10::make_intrusive<CclcWork>(getRank(), Type, std::move(Outputs));
}

void ProcessGroupCclc::allreduceInPlace(at::Tensor &T, const c10d::ReduceOp &Op) {
  Reduction R = reductionOf(T, Op);
  check(cclcAllReduce(T.data_ptr(), T.data_ptr(), size_t(T.numel()) * R.Lanes, R.Type,
                      redOpOf(Op), Comm, nullptr),
        "allreduce");
  if (Op.op_ == c10d::ReduceOp::AVG)
    averageInPlace(T, getSize());
}

void ProcessGroupCclc::exchange(const std::vector<at::Tensor> &Sends,
                                const std::vector<at::Tensor> &Recvs) {
  flushPeers();
  cclcResult_t Result = cclcGroupStart();
  for (int Peer = 0; Peer < getSize() && Result == cclcSuccess; ++Peer) {
    if (Sends[Peer].defined())
      Result = cclcSend(Sends[Peer].data_ptr(), bytesOf(Sends[Peer]), cclcUint8, Peer, Comm,
                        nullptr);
    if (Result == cclcSuccess && Recvs[Peer].defined())
      Result = cclcRecv(Recvs[Peer].data_ptr(), bytesOf(Recvs[Peer]), cclcUint8, Peer, Comm,
                        nullptr);
  }
  cclcResult_t Ended = cclcGroupEnd();
  check(Result != cclcSuccess ? Result : Ended, "a group of sends and receives");
}

c10::intrusive_ptr<c10d::Work> ProcessGroupCclc::broadcast(std::vector<at::Tensor> &Tensors,
                                                           const c10d::BroadcastOptions &Opts) {
  at::Tensor &T = single(Tensors, "broadcast");
  flushPeers();
  check(cclcBroadcast(T.data_ptr(), T.data_ptr(), bytesOf(T), cclcUint8, int(Opts.rootRank),
                      Comm, nullptr),
        "broadcast");
  return done(c10d::OpType::BROADCAST, Tensors);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupCclc::allreduce(std::vector<at::Tensor> &Tensors,
                                                           const c10d::AllreduceOptions &Opts) {
  at::Tensor &T = single(Tensors, "allreduce");
  flushPeers();
  allreduceInPlace(T, Opts.reduceOp);
  return done(c10d::OpType::ALLREDUCE, Tensors);
}

c10::intrusive_ptr<c10d::Work>
ProcessGroupCclc::allreduce_coalesced(std::vector<at::Tensor> &Tensors,
                                      const c10d::AllreduceCoalescedOptions &Opts) {
  TORCH_CHECK(!Tensors.empty(), "cclc: allreduce_coalesced takes at least one tensor");
  for (const at::Tensor &T : Tensors) {
    requireHostDense(T, "allreduce_coalesced");
    TORCH_CHECK(T.scalar_type() == Tensors[0].scalar_type(),
                "cclc: allreduce_coalesced takes tensors of one dtype");
  }
  flushPeers();
  // One call for the lot: the tensors travel in one flat buffer.
  at::Tensor Flat = concatenated(Tensors);
  allreduceInPlace(Flat, Opts.reduceOp);
  int64_t Offset = 0;
  for (at::Tensor &T : Tensors) {
    T.copy_(Flat.narrow(0, Offset, T.numel()).view(T.sizes()));
    Offset += T.numel();
  }
  return done(c10d::OpType::ALLREDUCE_COALESCED, Tensors);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupCclc::reduce(std::vector<at::Tensor> &Tensors,
                                                        const c10d::ReduceOptions &Opts) {
  at::Tensor &T = single(Tensors, "reduce");
  Reduction R = reductionOf(T, Opts.reduceOp);
  flushPeers();
  check(cclcReduce(T.data_ptr(), T.data_ptr(), size_t(T.numel()) * R.Lanes, R.Type,
                   redOpOf(Opts.reduceOp), int(Opts.rootRank), Comm, nullptr),
        "reduce");
  if (Opts.reduceOp == c10d::ReduceOp::AVG && getRank() == Opts.rootRank)
    averageInPlace(T, getSize());
  return done(c10d::OpType::REDUCE, Tensors);
}

c10::intrusive_ptr<c10d::Work>
ProcessGroupCclc::allgather(std::vector<std::vector<at::Tensor>> &Outputs,
                            std::vector<at::Tensor> &Inputs, const c10d::AllgatherOptions &Opts) {
  at::Tensor &In = single(Inputs, "allgather");
  TORCH_CHECK(Outputs.size() == 1, "cclc: allgather takes one output list per call");
  requireList(Outputs[0], In, getSize(), "allgather's output list");
  at::Tensor Flat = at::empty({getSize() * In.numel()}, In.options());
  _allgather_base(Flat, In, Opts);
  for (int Rank = 0; Rank < getSize(); ++Rank)
    Outputs[0][Rank].copy_(Flat.narrow(0, Rank * In.numel(), In.numel()).view(In.sizes()));
  return done(c10d::OpType::ALLGATHER, Outputs[0]);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupCclc::_allgather_base(at::Tensor &Output,
                                                                 at::Tensor &Input,
                                                                 const c10d::AllgatherOptions &) {
  requireWhole(Output, "allgather's output", Input, "input", getSize());
  flushPeers();
  check(cclcAllGather(Input.data_ptr(), Output.data_ptr(), bytesOf(Input), cclcUint8, Comm,
                      nullptr),
        "allgather");
  return done(c10d::OpType::_ALLGATHER_BASE, {Output});
}

c10::intrusive_ptr<c10d::Work> ProcessGroupCclc::allgather_into_tensor_coalesced(
    std::vector<at::Tensor> &Outputs, std::vector<at::Tensor> &Inputs,
    const c10d::AllgatherOptions &Opts) {
  forEachPair(Outputs, Inputs, "allgather_into_tensor_coalesced",
              [&](at::Tensor &Out, at::Tensor &In) { _allgather_base(Out, In, Opts); });
  return done(c10d::OpType::ALLGATHER_INTO_TENSOR_COALESCED, Outputs);
}

c10::intrusive_ptr<c10d::Work>
ProcessGroupCclc::gather(std::vector<std::vector<at::Tensor>> &Outputs,
                         std::vector<at::Tensor> &Inputs, const c10d::GatherOptions &Opts) {
  at::Tensor &In = single(Inputs, "gather");
  int Root = int(Opts.rootRank);
  std::vector<at::Tensor> Sends(getSize()), Recvs(getSize());
  if (getRank() == Root) {
    TORCH_CHECK(Outputs.size() == 1, "cclc: gather takes one output list on the root");
    requireList(Outputs[0], In, getSize(), "gather's output list");
    Recvs = Outputs[0];
    Recvs[Root] = at::Tensor();
    Outputs[0][Root].copy_(In);
  } else {
    TORCH_CHECK(Outputs.empty() || Outputs[0].empty(),
                "cclc: gather takes an output list on the root only");
    Sends[Root] = In;
  }
  exchange(Sends, Recvs);
  return done(c10d::OpType::GATHER, getRank() == Root ? Outputs[0] : std::vector<at::Tensor>{});
}

c10::intrusive_ptr<c10d::Work>
ProcessGroupCclc::scatter(std::vector<at::Tensor> &Outputs,
                          std::vector<std::vector<at::Tensor>> &Inputs,
                          const c10d::ScatterOptions &Opts) {
  at::Tensor &Out = single(Outputs, "scatter");
  int Root = int(Opts.rootRank);
  std::vector<at::Tensor> Sends(getSize()), Recvs(getSize());
  if (getRank() == Root) {
    TORCH_CHECK(Inputs.size() == 1, "cclc: scatter takes one input list on the root");
    requireList(Inputs[0], Out, getSize(), "scatter's input list");
    Sends = Inputs[0];
    Sends[Root] = at::Tensor();
    Out.copy_(Inputs[0][Root]);
  } else {
    TORCH_CHECK(Inputs.empty() || Inputs[0].empty(),
                "cclc: scatter takes an input list on the root only");
    Recvs[Root] = Out;
  }
  exchange(Sends, Recvs);
  return done(c10d::OpType::SCATTER, Outputs);
}

c10::intrusive_ptr<c10d::Work>
ProcessGroupCclc::reduce_scatter(std::vector<at::Tensor> &Outputs,
                                 std::vector<std::vector<at::Tensor>> &Inputs,
                                 const c10d::ReduceScatterOptions &Opts) {
  at::Tensor &Out = single(Outputs, "reduce_scatter");
  TORCH_CHECK(Inputs.size() == 1, "cclc: reduce_scatter takes one input list per call");
  requireList(Inputs[0], Out, getSize(), "reduce_scatter's input list");
  at::Tensor Flat = concatenated(Inputs[0]);
  _reduce_scatter_base(Out, Flat, Opts);
  return done(c10d::OpType::REDUCE_SCATTER, Outputs);
}

c10::intrusive_ptr<c10d::Work>
ProcessGroupCclc::_reduce_scatter_base(at::Tensor &Output, at::Tensor &Input,
                                       const c10d::ReduceScatterOptions &Opts) {
  requireWhole(Input, "reduce_scatter's input", Output, "output", getSize());
  Reduction R = reductionOf(Output, Opts.reduceOp);
  flushPeers();
  check(cclcReduceScatter(Input.data_ptr(), Output.data_ptr(), size_t(Output.numel()) * R.Lanes,
                          R.Type, redOpOf(Opts.reduceOp), Comm, nullptr),
        "reduce_scatter");
  if (Opts.reduceOp == c10d::ReduceOp::AVG)
    averageInPlace(Output, getSize());
  return done(c10d::OpType::_REDUCE_SCATTER_BASE, {Output});
}

c10::intrusive_ptr<c10d::Work> ProcessGroupCclc::reduce_scatter_tensor_coalesced(
    std::vector<at::Tensor> &Outputs, std::vector<at::Tensor> &Inputs,
    const c10d::ReduceScatterOptions &Opts) {
  forEachPair(Outputs, Inputs, "reduce_scatter_tensor_coalesced",
              [&](at::Tensor &Out, at::Tensor &In) { _reduce_scatter_base(Out, In, Opts); });
  return done(c10d::OpType::REDUCE_SCATTER_TENSOR_COALESCED, Outputs);
}

c10::intrusive_ptr<c10d::Work>
ProcessGroupCclc::alltoall_base(at::Tensor &Output, at::Tensor &Input,
                                std::vector<int64_t> &OutputSplits,
                                std::vector<int64_t> &InputSplits, const c10d::AllToAllOptions &) {
  requireHostDense(Input, "all_to_all_single's input");
  requireHostDense(Output, "all_to_all_single's output");
  TORCH_CHECK(Output.scalar_type() == Input.scalar_type(),
              "cclc: all_to_all_single's input and output differ in dtype");
  if (OutputSplits.empty() && InputSplits.empty()) {
    TORCH_CHECK(Input.numel() == Output.numel() && Input.numel() % getSize() == 0,
                "cclc: all_to_all_single without split sizes needs input and output of equal "
                "sizes divisible by the group's size (",
                getSize(), "), not ", Input.numel(), " and ", Output.numel());
    flushPeers();
    check(cclcAllToAll(Input.data_ptr(), Output.data_ptr(), bytesOf(Input) / getSize(),
                       cclcUint8, Comm, nullptr),
          "all_to_all_single");
    return done(c10d::OpType::ALLTOALL_BASE, {Output});
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
  std::vector<at::Tensor> Sends = Slices(Input, InputSplits, "input");
  std::vector<at::Tensor> Recvs = Slices(Output, OutputSplits, "output");
  exchange(Sends, Recvs);
  return done(c10d::OpType::ALLTOALL_BASE, {Output});
}

c10::intrusive_ptr<c10d::Work> ProcessGroupCclc::alltoall(std::vector<at::Tensor> &Outputs,
                                                          std::vector<at::Tensor> &Inputs,
                                                          const c10d::AllToAllOptions &) {
  TORCH_CHECK(int(Outputs.size()) == getSize() && int(Inputs.size()) == getSize(),
              "cclc: all_to_all takes one input and one output tensor per rank of the group (",
              getSize(), ")");
  for (const at::Tensor &T : flatList({Outputs, Inputs}))
    requireHostDense(T, "all_to_all's tensors");
  exchange(Inputs, Outputs);
  return done(c10d::OpType::ALLTOALL, Outputs);
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
  flushPeers();
  at::Tensor Token = at::zeros({1}, at::kInt);
  allreduceInPlace(Token, c10d::ReduceOp::SUM);
  return done(c10d::OpType::BARRIER, {});
}

c10::intrusive_ptr<c10d::Backend>
createProcessGroupCclc(const c10::intrusive_ptr<c10d::Store> &Store, int Rank, int Size,
                       std::chrono::milliseconds Timeout, const std::vector<std::string> &PlanFiles) {
  return c10::make_intrusive<ProcessGroupCclc>(Store, Rank, Size, Timeout, PlanFiles);
}

} // namespace cclc::torch
