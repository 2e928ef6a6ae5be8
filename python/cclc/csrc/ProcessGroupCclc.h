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
// reducer and comm hooks chain on while the backward pass goes on. Sends and
// receives are held back instead, and all the held ones run together, as one
// group of the C API, when any of their Work objects is waited for (or its
// future asked for) or before the next collective: a rank may post isend and
// irecv to the same peer in either order, as with other backends, without
// the first blocking the second.
//
// Failures (a peer that died or timed out, a mismatch the runtime detects)
// raise torch.distributed.DistBackendError with the runtime's message;
// misuse (an unsupported dtype or operator, a non-contiguous or CUDA tensor)
// raises a RuntimeError saying what to pass.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "CallQueue.h"

#include <cclc.h>

#include <torch/csrc/distributed/c10d/Backend.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>
#include <torch/csrc/distributed/c10d/Work.hpp>

#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace cclc::torch {

class PeerQueue;

/// One operation's Work: done when its call has run, on whichever thread ran
/// it; a send or receive runs once its peer queue is flushed.
class CclcWork : public c10d::Work {
public:
  /// An operation whose results are Outputs, submitted to a CallQueue.
  CclcWork(int Rank, c10d::OpType Type, std::vector<at::Tensor> Outputs);
  /// A send or receive held in Queue.
  CclcWork(int Rank, c10d::OpType Type, std::vector<at::Tensor> Outputs,
           std::shared_ptr<PeerQueue> Queue);

  bool isCompleted() override;
  bool isSuccess() const override;
  std::exception_ptr exception() const override;
  /// Waits until the call has run and rethrows its failure. The runtime
  /// bounds every wait of the call by its own timeout, so this needs none.
  bool wait(std::chrono::milliseconds Timeout) override;
  std::vector<at::Tensor> result() override;
  c10::intrusive_ptr<c10::ivalue::Future> getFuture() override;

  /// The operation ended, with Error if it failed: wakes its waiters and
  /// completes its future.
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
    at::Tensor Tensor;
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

private:
  /// A call's body: runs on the queue's thread or the caller's.
  using Body = std::function<void()>;

  /// Throws DistBackendError with the runtime's message unless Result is
  /// success; What names the call.
  void check(cclcResult_t Result, const char *What) const;
  /// Submits the held sends and receives; every collective starts with it,
  /// so that they run in the order they were issued.
  void flushPeers();
  /// Submits Run, which moves Bytes and leaves its results in Outputs, after
  /// the calls before it; the Work finishes when it has run.
  c10::intrusive_ptr<c10d::Work> submit(c10d::OpType Type, std::vector<at::Tensor> Outputs,
                                        size_t Bytes, Body Run);
  /// Allreduce of T in place with torch's operator Op (AVG divides the sum);
  /// checks the arguments now.
  Body allreduceInPlace(at::Tensor T, const c10d::ReduceOp &Op);
  Body allgatherInto(at::Tensor Output, at::Tensor Input);
  Body reduceScatterInto(at::Tensor Output, at::Tensor Input, const c10d::ReduceOp &Op);
  /// Sends Sends[i] to rank i and receives Recvs[i] from rank i, as one
  /// group; an undefined tensor skips that peer.
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
