//===- ProcessGroupCclc.h - torch.distributed's "cclc" backend ---*- C++ -*-===//
//
// A c10d::Backend over the C API of libcclc.so. One backend is one cclc
// communicator: rank 0 of the group starts the job's root and publishes its
// id in the group's store, every rank joins with it and loads the plans the
// Python side hands over (compiled for the group's size, or the user's), so
// that each call runs the loaded algorithm whose size window holds it.
//
// Collectives run on the calling thread and are complete when the call
// returns; their Work objects are done already and carry a completed future,
// which is what DDP's reducer and comm hooks chain on. Sends and receives are
// queued instead, and all the queued ones run together, as one group of the
// C API, when any of their Work objects is waited for or before the next
// collective: a rank may post isend and irecv to the same peer in either
// order, as with other backends, without the first blocking the second.
//
// Failures (a peer that died or timed out, a mismatch the runtime detects)
// raise torch.distributed.DistBackendError with the runtime's message;
// misuse (an unsupported dtype or operator, a non-contiguous or CUDA tensor)
// raises a RuntimeError saying what to pass.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cclc.h>

#include <torch/csrc/distributed/c10d/Backend.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>
#include <torch/csrc/distributed/c10d/Work.hpp>

#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace cclc::torch {

class PeerQueue;

/// One operation's Work: done at once for collectives, done at the next
/// flush of the peer queue for sends and receives.
class CclcWork : public c10d::Work {
public:
  /// A finished operation whose results are Outputs.
  CclcWork(int Rank, c10d::OpType Type, std::vector<at::Tensor> Outputs);
  /// A send or receive waiting in Queue.
  CclcWork(int Rank, c10d::OpType Type, std::vector<at::Tensor> Outputs,
           std::shared_ptr<PeerQueue> Queue);

  bool isCompleted() override;
  bool isSuccess() const override;
  std::exception_ptr exception() const override;
  bool wait(std::chrono::milliseconds Timeout) override;
  std::vector<at::Tensor> result() override;
  c10::intrusive_ptr<c10::ivalue::Future> getFuture() override;

  /// Called by the queue's flush: the operation ended, with Error if it failed.
  void finish(std::exception_ptr Error);

private:
  mutable std::mutex Lock;
  bool Done = false;
  std::exception_ptr Error;
  std::vector<at::Tensor> Outputs;
  std::shared_ptr<PeerQueue> Queue;
  c10::intrusive_ptr<c10::ivalue::Future> Future;
};

/// The sends and receives posted and not yet run, and the communicator
/// they run on. Shared by the backend and the Work objects of the queued
/// operations, which may outlive the backend's calls.
class PeerQueue {
public:
  PeerQueue(cclcComm_t Comm, int Rank) : Comm(Comm), Rank(Rank) {}

  /// Queues a send of T to Peer (or a receive into T from Peer).
  void post(bool IsSend, const at::Tensor &T, int Peer, c10::intrusive_ptr<CclcWork> Work);
  /// Runs every queued operation as one group and finishes their Work objects.
  void flush();

private:
  struct Pending {
    bool IsSend;
    at::Tensor Tensor;
    int Peer;
    c10::intrusive_ptr<CclcWork> Work;
  };
  cclcComm_t Comm;
  int Rank;
  /// Guards Queued; also held while a flush runs, so that flushes do not mix.
  std::recursive_mutex Lock;
  std::vector<Pending> Queued;
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
  /// Throws DistBackendError with the runtime's message unless Result is
  /// success; What names the call.
  void check(cclcResult_t Result, const char *What) const;
  /// Runs the queued sends and receives; every collective starts with it.
  void flushPeers();
  /// Allreduce of T in place with torch's operator Op (AVG divides the sum).
  void allreduceInPlace(at::Tensor &T, const c10d::ReduceOp &Op);
  /// Sends Sends[i] to rank i and receives Recvs[i] from rank i, as one
  /// group; an undefined tensor skips that peer.
  void exchange(const std::vector<at::Tensor> &Sends, const std::vector<at::Tensor> &Recvs);
  c10::intrusive_ptr<c10d::Work> done(c10d::OpType Type, std::vector<at::Tensor> Outputs);

  cclcComm_t Comm = nullptr;
  std::shared_ptr<PeerQueue> Peers;
};

/// The function torch.distributed calls for init_process_group("cclc") and
/// new_group(backend="cclc").
c10::intrusive_ptr<c10d::Backend>
createProcessGroupCclc(const c10::intrusive_ptr<c10d::Store> &Store, int Rank, int Size,
                       std::chrono::milliseconds Timeout, const std::vector<std::string> &PlanFiles);

} // namespace cclc::torch
