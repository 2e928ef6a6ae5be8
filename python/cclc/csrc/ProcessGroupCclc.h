//===- ProcessGroupCclc.h - torch.distributed's "cclc" backend ---*- C++ -*-===//
//
// A c10d::Backend over the C API of libcclc.so. One backend is one cclc
// communicator: rank 0 of the group starts the job's root and publishes its
// id in the group's store, every rank joins with it and loads the plans the
// Python side hands over (compiled for the group's size, or the user's), so
// that each call runs the loaded algorithm whose size window holds it.
//
// Calls are checked on the calling thread (misuse raises there) and run in
// order through a CallQueue: small ones on the calling thread, the rest on
// the backend's own thread, so that an asynchronous call returns at once and
// its Work's future completes when the call is done, which is what DDP's
// reducer and comm hooks chain on while the backward pass goes on.
//
// A collective on CUDA tensors runs as ProcessGroupNCCL's do from the
// caller's view: on the current stream of the tensors' device. The call
// returns once the runtime has enqueued it there (after the calls queued
// before it), and its Work's future is a CUDA future whose value is ready
// for work ordered after that stream. Sends, receives and the operations
// made of them run on the host, through host copies of CUDA tensors. Sends and
// receives are held back instead, and all the held ones run together, as one
// group of the C API, when any of their Work objects is waited for (or its
// future asked for) or before the next collective: a rank may post isend and
// irecv to the same peer in either order, as with other backends, without
// the first blocking the second.
//
// Failures (a peer that died or timed out, a mismatch the runtime detects)
// raise torch.distributed.DistBackendError with the runtime's message;
// misuse (an unsupported dtype or operator, a non-contiguous tensor, one
// call's tensors on different devices) raises a RuntimeError saying what to
// pass.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "CallQueue.h"

#include <cclc.h>

#include <c10/core/Event.h>
#include <c10/core/Stream.h>
#include <torch/csrc/distributed/c10d/Backend.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>
#include <torch/csrc/distributed/c10d/Work.hpp>

#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace cclc::torch {

class PeerQueue;

/// One operation's Work: done when its call has run, on whichever thread ran
/// it; a send or receive runs once its peer queue is flushed. A call on a
/// CUDA stream is done once enqueued; it is completed once the GPU has run it.
class CclcWork : public c10d::Work {
public:
  /// An operation whose results are Outputs, submitted to a CallQueue; with
  /// Stream, enqueued on that CUDA stream.
  CclcWork(int Rank, c10d::OpType Type, std::vector<at::Tensor> Outputs,
           std::optional<c10::Stream> Stream = std::nullopt);
  /// A send or receive held in Queue.
  CclcWork(int Rank, c10d::OpType Type, std::vector<at::Tensor> Outputs,
           std::shared_ptr<PeerQueue> Queue);

  /// The call has run; on a stream, the GPU has also reached its end.
  bool isCompleted() override;
  bool isSuccess() const override;
  std::exception_ptr exception() const override;
  /// Waits until the call has run and rethrows its failure; a call on a
  /// stream makes the caller's current stream wait for it instead, as
  /// ProcessGroupNCCL's Work does. The runtime bounds every wait of the call
  /// by its own timeout, so this needs none.
  bool wait(std::chrono::milliseconds Timeout) override;
  std::vector<at::Tensor> result() override;
  c10::intrusive_ptr<c10::ivalue::Future> getFuture() override;

  /// The operation ended (was enqueued, on a stream), with Error if it
  /// failed: wakes its waiters and completes its future. A call on a stream
  /// finishes on the caller's thread, where that stream is current, so that
  /// the future's CUDA events follow the call.
  void finish(std::exception_ptr Error);

private:
  /// Flushes the peer queue that holds this operation, if it is held.
  void release();

  mutable std::mutex Lock;
  std::condition_variable Finished;
  bool Done = false;
  std::exception_ptr Error;
  const std::vector<at::Tensor> Outputs;
  std::shared_ptr<PeerQueue> Queue;
  const std::optional<c10::Stream> Stream;
  /// Recorded on Stream once the call is enqueued.
  std::optional<c10::Event> Ended;
  const c10::intrusive_ptr<c10::ivalue::Future> Future;
};

/// The sends and receives posted and not yet run. Shared by the backend and
/// the Work objects of the held operations, which may outlive the backend.
class PeerQueue {
public:
  PeerQueue(cclcComm_t Comm, int Rank, CallQueue &Calls) : Comm(Comm), Rank(Rank), Calls(&Calls) {}

  /// Holds a send of T to Peer (or a receive into T from Peer).
  void post(bool IsSend, const at::Tensor &T, int Peer, c10::intrusive_ptr<CclcWork> Work);
  /// Submits every held operation as one group; their Work objects finish
  /// when it has run.
  void flush();
  /// Fails every held operation and refuses later flushes: the backend and
  /// its communicator are going away.
  void abandon();

private:
  struct Pending {
    bool IsSend;
    /// What is sent or received: in host memory, a copy of a CUDA tensor's.
    at::Tensor Tensor;
    /// The CUDA tensor a receive's Tensor is copied into once it arrived.
    at::Tensor Received;
    int Peer;
    c10::intrusive_ptr<CclcWork> Work;
  };
  cclcComm_t Comm;
  int Rank;
  std::mutex Lock;
  /// Null once abandoned.
  CallQueue *Calls;
  std::vector<Pending> Held;
};

class ProcessGroupCclc : public c10d::Backend {
public:
  /// Joins the group of Size ranks through Store and loads PlanFiles, in
  /// order, on every rank alike. Timeout bounds the wait for the root's id;
  /// the runtime's own waits follow CCLC_TIMEOUT_MS, which the Python side
  /// sets from the group's timeout.
  ProcessGroupCclc(const c10::intrusive_ptr<c10d::Store> &Store, int Rank, int Size,
                   std::chrono::milliseconds Timeout, const std::vector<std::string> &PlanFiles);
  ~ProcessGroupCclc() override;

  const std::string getBackendName() const override { return "cclc"; }

  c10::intrusive_ptr<c10d::Work> broadcast(std::vector<at::Tensor> &Tensors,
                                           const c10d::BroadcastOptions &Opts) override;
  c10::intrusive_ptr<c10d::Work> allreduce(std::vector<at::Tensor> &Tensors,
                                           const c10d::AllreduceOptions &Opts) override;
  c10::intrusive_ptr<c10d::Work>
  allreduce_coalesced(std::vector<at::Tensor> &Tensors,
                      const c10d::AllreduceCoalescedOptions &Opts) override;
  c10::intrusive_ptr<c10d::Work> reduce(std::vector<at::Tensor> &Tensors,
                                        const c10d::ReduceOptions &Opts) override;
  c10::intrusive_ptr<c10d::Work> allgather(std::vector<std::vector<at::Tensor>> &Outputs,
                                           std::vector<at::Tensor> &Inputs,
                                           const c10d::AllgatherOptions &Opts) override;
  c10::intrusive_ptr<c10d::Work> _allgather_base(at::Tensor &Output, at::Tensor &Input,
                                                 const c10d::AllgatherOptions &Opts) override;
  c10::intrusive_ptr<c10d::Work>
  allgather_into_tensor_coalesced(std::vector<at::Tensor> &Outputs, std::vector<at::Tensor> &Inputs,
                                  const c10d::AllgatherOptions &Opts) override;
  c10::intrusive_ptr<c10d::Work> gather(std::vector<std::vector<at::Tensor>> &Outputs,
                                        std::vector<at::Tensor> &Inputs,
                                        const c10d::GatherOptions &Opts) override;
  c10::intrusive_ptr<c10d::Work> scatter(std::vector<at::Tensor> &Outputs,
                                         std::vector<std::vector<at::Tensor>> &Inputs,
                                         const c10d::ScatterOptions &Opts) override;
  c10::intrusive_ptr<c10d::Work> reduce_scatter(std::vector<at::Tensor> &Outputs,
                                                std::vector<std::vector<at::Tensor>> &Inputs,
                                                const c10d::ReduceScatterOptions &Opts) override;
  c10::intrusive_ptr<c10d::Work>
  _reduce_scatter_base(at::Tensor &Output, at::Tensor &Input,
                       const c10d::ReduceScatterOptions &Opts) override;
  c10::intrusive_ptr<c10d::Work>
  reduce_scatter_tensor_coalesced(std::vector<at::Tensor> &Outputs, std::vector<at::Tensor> &Inputs,
                                  const c10d::ReduceScatterOptions &Opts) override;
  c10::intrusive_ptr<c10d::Work> alltoall_base(at::Tensor &Output, at::Tensor &Input,
                                               std::vector<int64_t> &OutputSplits,
                                               std::vector<int64_t> &InputSplits,
                                               const c10d::AllToAllOptions &Opts) override;
  c10::intrusive_ptr<c10d::Work> alltoall(std::vector<at::Tensor> &Outputs,
                                          std::vector<at::Tensor> &Inputs,
                                          const c10d::AllToAllOptions &Opts) override;
  c10::intrusive_ptr<c10d::Work> send(std::vector<at::Tensor> &Tensors, int DstRank,
                                      int Tag) override;
  c10::intrusive_ptr<c10d::Work> recv(std::vector<at::Tensor> &Tensors, int SrcRank,
                                      int Tag) override;
  c10::intrusive_ptr<c10d::Work> barrier(const c10d::BarrierOptions &Opts) override;

  /// Host memory the ranks of the host map serves the tensors torch asks the
  /// backend for (DistributedDataParallel's gradient buckets): a collective
  /// on them moves each large message in one memcpy and reduces straight
  /// from the peer's tensor. CUDA devices (an index of 0 or more) allocate
  /// as usual.
  bool supportsTensorAlloc(c10::DeviceIndex DeviceIdx) override { return DeviceIdx < 0; }
  at::Tensor allocateTensor(long Size, at::TensorOptions Options = {}) override;

private:
  /// A call's body: runs on the queue's thread or the caller's, given the
  /// CUDA stream to enqueue on (null for host tensors), which is then also
  /// the thread's current stream.
  using Body = std::function<void(cclcStream_t)>;

  /// Throws DistBackendError with the runtime's message unless Result is
  /// success; What names the call.
  void check(cclcResult_t Result, const char *What) const;
  /// Submits the held sends and receives; every collective starts with it,
  /// so that they run in the order they were issued.
  void flushPeers();
  /// Submits Run, which moves Bytes and leaves its results in Outputs, after
  /// the calls before it; the Work finishes when it has run. Where Outputs
  /// are CUDA tensors, Run enqueues on their device's current stream and
  /// this returns once it has.
  c10::intrusive_ptr<c10d::Work> submit(c10d::OpType Type, std::vector<at::Tensor> Outputs,
                                        size_t Bytes, Body Run);
  /// Runs Run on Stream after the calls before it, waiting for it here.
  c10::intrusive_ptr<c10d::Work> enqueue(c10d::OpType Type, std::vector<at::Tensor> Outputs,
                                         c10::Stream Stream, Body Run);
  /// Allreduce of T in place with torch's operator Op (AVG divides the sum);
  /// checks the arguments now.
  Body allreduceInPlace(at::Tensor T, const c10d::ReduceOp &Op);
  Body allgatherInto(at::Tensor Output, at::Tensor Input);
  Body reduceScatterInto(at::Tensor Output, at::Tensor Input, const c10d::ReduceOp &Op);
  /// Sends Sends[i] (host tensors) to rank i and receives Recvs[i] from
  /// rank i, as one group; an undefined tensor skips that peer, and CUDA
  /// tensors receive through host memory.
  void exchange(const std::vector<at::Tensor> &Sends, const std::vector<at::Tensor> &Recvs);

  cclcComm_t Comm = nullptr;
  std::unique_ptr<CallQueue> Calls;
  std::shared_ptr<PeerQueue> Peers;
};

/// The function torch.distributed calls for init_process_group("cclc") and
/// new_group(backend="cclc").
c10::intrusive_ptr<c10d::Backend>
createProcessGroupCclc(const c10::intrusive_ptr<c10d::Store> &Store, int Rank, int Size,
                       std::chrono::milliseconds Timeout, const std::vector<std::string> &PlanFiles);

} // namespace cclc::torch
