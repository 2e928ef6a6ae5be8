//===- Comm.h - One rank's communicator -------------------------*- C++ -*-===//
//
// What cclcComm_t points to: the rank's bootstrap, the algorithms loaded into
// it with the transports they run on, what calls reuse (channel threads,
// scratch memory), and, from its first GPU call on, its GPU context. The C
// API (Api.cpp) checks arguments and turns exceptions into status codes;
// everything here throws.
//
// A communicator serves one call at a time, like an NCCL communicator on one
// stream; only abort() may come from another thread, to stop a call that
// waits. After a collective or a point-to-point call fails, every later call
// is refused: the peers are mid-call or gone, so the communicator can only
// be destroyed. A GPU collective fails after it returned; the communicator
// learns of it at its next call, or when asked (asyncError()), and is then
// as unusable.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/api/Algorithms.h"
#include "runtime/api/ChannelPool.h"
#include "runtime/api/Gpu.h"
#include "runtime/api/LinkSets.h"
#include "runtime/api/Workspace.h"
#include "runtime/api/cclc.h"

#include "plan/PlanJson.h"
#include "plan/SourceManager.h"
#include "runtime/bootstrap/Bootstrap.h"
#include "runtime/exec/PointToPoint.h"

#include <cstddef>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace cclc::runtime {

/// One point-to-point call: a send to Peer, a receive from Peer, or an
/// alltoall, of Count elements of Type (per rank, for an alltoall).
struct PeerOp {
  enum class Kind { Send, Recv, AllToAll };
  Kind What = Kind::Send;
  /// Of a send or a receive.
  int Peer = 0;
  /// Of a send or an alltoall.
  const void *Send = nullptr;
  /// Of a receive or an alltoall.
  void *Recv = nullptr;
  size_t Count = 0;
  host::DType Type = host::DType::F32;
};

class Communicator {
public:
  explicit Communicator(std::unique_ptr<net::Bootstrap> Boot);
  ~Communicator();
  Communicator(const Communicator &) = delete;
  Communicator &operator=(const Communicator &) = delete;

  int rank() const { return Rank; }
  int size() const { return NRanks; }

  // Loading (Loading.cpp). Collective: every rank loads the same plans and
  // registers the same kernels in the same order, since connecting the
  // transports an algorithm needs takes every rank.

  /// Loads the plan in file Path.
  void loadPlan(const std::string &Path);
  /// Loads a plan held in memory; Name stands for its file in messages.
  void loadPlanText(std::string Text, const std::string &Name);
  void registerKernels(const host::KernelInfo *Infos, size_t Count);
  /// Registers a table of cclc::cuda::KernelInfo.
  void registerCudaKernels(const void *Infos, size_t Count);

  /// Runs one collective (Launch.cpp): Send and Recv are the caller's
  /// buffers, either of which may be null where NCCL allows it. It runs on
  /// the GPU, enqueued on Stream, when Stream is not null or the buffers are
  /// device memory, and on the host otherwise (R.Where is ignored).
  void collective(const Request &R, const void *Send, void *Recv, void *Stream);
  /// Whether a loaded plan or registered kernel runs R on the host buffers
  /// Send and Recv: an alltoall runs as a collective then, and over
  /// point-to-point messages otherwise. Every rank loads alike, so every
  /// rank decides alike.
  bool runsLoadedOnHost(Request R, const void *Send, const void *Recv);
  /// Sets the kind of call R is on Send and Recv (Request::InPlace,
  /// Request::Mapped), which algorithms may be chosen for.
  void setCallKind(Request &R, const void *Send, const void *Recv);

  // Point-to-point (PointToPoint.cpp). Not collective: only the ranks a
  // call names take part, connecting at a pair's first message.

  /// Refuses Op, issued with Stream, unless it names a rank of the
  /// communicator, has buffers for its count, and runs on the host. Called
  /// as Op is issued, inside a group or not.
  void checkPeerOp(const PeerOp &Op, const void *Stream) const;
  /// Runs Ops, checked calls of one group (or one call alone), together:
  /// the messages a rank sends to itself are copied, then every other moves
  /// at once; returns when all are done.
  void pointToPoint(std::span<const PeerOp> Ops);

  /// Gathers BytesPerRank bytes from every rank into Buf, in rank order,
  /// through the bootstrap rather than a collective: for tools (cclc-perf)
  /// that must agree on something apart from the algorithms they measure, so
  /// that no algorithm is chosen, no transport connected and no fallback
  /// announced for it. Collective: every rank calls it in the same order.
  void allGatherOutOfBand(void *Buf, size_t BytesPerRank);

  /// Whether GPU calls no loaded algorithm serves run the library's ring
  /// (cclcCommSetGpuFallback).
  void setGpuFallback(bool Enabled) { GpuFallback = Enabled; }

  /// The status of the communicator's failure, with its message, or none
  /// while it works; learns of GPU failures without waiting for kernels.
  std::optional<Classified> asyncError();

  /// Waits for the GPU work, then until every rank has reached its destroy;
  /// the wait for the ranks is skipped after a failure, which it reports.
  void finish();
  /// Stops every wait on this communicator's bootstrap and transports, here
  /// and at the peers, then waits for the call in progress to return.
  void abort(const std::string &Cause);

private:
  /// Refuses calls after a failure, including one the GPU work met since
  /// the last call.
  void checkUsable();
  /// Learns of a failure of the GPU work, which then fails the communicator.
  void pollGpu();
  /// Records Cause as the communicator's failure, of status Result, and
  /// stops every transport and kernel, here and at the peers.
  void recordFailure(cclcResult_t Result, const std::string &Cause);
  /// Reads plan file FileId of SM, verifies it and loads it.
  void loadPlanFile(SourceManager &SM, uint32_t FileId, const std::string &Name);
  /// Checks, groups and adds a kernel table of kind Kind; Flag is the
  /// cclc compile option that generates such tables, for messages.
  void registerTable(std::span<const KernelEntry> Entries, Algorithm::Executor Kind,
                     const char *Flag);
  /// Refuses A where the FIFOs it needs between this rank and one peer
  /// would take more than the runtime allows.
  void requireFifoBudget(const Algorithm &A) const;
  /// An interpreter algorithm for P, connected on the host when ConnectHost.
  Algorithm interpreted(plan::Plan P, std::string Origin, bool ConnectHost);
  /// Connects A's links on the host, with FIFOs shaped for its window
  /// (hostLinkOptions). Collective, as connecting is.
  void connectHost(Algorithm &A);
  /// Where waits yield, connects the small slots of A's small calls
  /// (Algorithm::SmallNet), if it has a rank that only sends and its own
  /// slots are shaped for large calls. For algorithms loaded, not for
  /// fallbacks: a fallback is connected inside the call that first needs
  /// it, and ranks that disagree on that call (another root) would connect
  /// different links and wait out the timeout, where connections that
  /// already cover their links let the call board name both calls.
  void connectSmallCalls(Algorithm &A);
  /// The library's ring for R's collective and root (Fallback.h), connected
  /// on the host for host calls.
  Algorithm fallback(const Request &R);
  /// The GPU context, made for call R when there is none yet.
  GpuContext &gpu(const Request &R);
  /// Runs R's channels on the host with Args; each channel's error, valid
  /// until the next call.
  /// With Replay, the trace of this very call, which runs in its stead.
  const std::vector<std::exception_ptr> &runOnHost(const Request &R, const Algorithm &A,
                                                   const kern::CallArgs &Args,
                                                   const host::Trace *Replay = nullptr);
  /// What A's host executors take for call R of Args: its small-call
  /// connections where it has them and R fits them, else its own.
  static host::KernelArgs hostArgs(const Request &R, const Algorithm &A,
                                   const kern::CallArgs &Args);
  /// "rank 1 called allreduce of 8 KiB (f32, sum) with ring_allreduce#1a2b3c4d
  /// as its call 3 where rank 0 called ...": a message from Peer of the call
  /// Sent where this rank made Expected.
  std::string describeMismatch(int Peer, const kern::CallStamp &Sent,
                               const kern::CallStamp &Expected) const;
  /// Records that Call ("allreduce of 4 KiB with ring_allreduce") failed
  /// and throws the cause of Errors, the errors of its channels (or its
  /// one error), with its context.
  [[noreturn]] void fail(const std::string &Call, const std::vector<std::exception_ptr> &Errors);
  /// Fills Messages with what Ops send and receive, each alltoall's blocks
  /// from the next rank on, copying the input of an in-place alltoall aside.
  void expandPeerOps(std::span<const PeerOp> Ops);
  /// Copies the messages this rank sends to itself into the receives they
  /// match, after checking that they match.
  void copyToSelf();
  /// Connects this rank with the peers of Messages it has no connections
  /// with yet.
  void connectPeers();

  std::unique_ptr<net::Bootstrap> Boot;
  int Rank;
  int NRanks;
  bool GpuFallback = true;
  LinkSets Links;
  /// Whether waits yield at some rank of the job (net::waitsYieldAnywhere),
  /// as where ranks share cores: then a rank that only sends runs ahead as
  /// far as its FIFOs let it while its receiver waits for the core, and
  /// algorithms whose slots are shaped for large calls also connect small
  /// slots for their small calls (connectSmallCalls).
  bool WaitsYield;
  AlgorithmTable Table;
  Workspace Space;
  ChannelPool Pool;
  /// Why the communicator failed, and the status it failed with; empty
  /// while it works.
  std::string Failure;
  cclcResult_t FailureResult = cclcSuccess;
  /// Collective calls that passed their argument checks so far: each call's
  /// number in its stamp, so that a rank that skipped a call fails at the
  /// next.
  uint64_t Calls = 0;
  /// Held by every call, so that abort() knows when none is running.
  std::mutex CallLock;
  /// The buffers of the last call that asked whether its buffers were
  /// mapped, and the answer, while cclcMemAlloc has neither allocated nor
  /// freed since (SharedBuffers::changes()): a stream of calls on the same
  /// buffers takes the buffers' lock once, not per call.
  struct MappedMemo {
    const void *Send = nullptr;
    const void *Recv = nullptr;
    size_t Count = 0;
    host::DType Type = host::DType::F32;
    plan::CollectiveKind Collective = plan::CollectiveKind::AllReduce;
    int32_t Root = 0;
    uint64_t Changes = ~uint64_t(0);
    bool Mapped = false;
  };
  MappedMemo LastBuffers;
  /// Whether every buffer R uses on this rank, Send and Recv, lies in
  /// cclcMemAlloc's memory, which the ranks of the host map.
  bool mappedCall(const Request &R, const void *Send, const void *Recv);
  /// The last host collective as it ran: the call asked, its buffers, the
  /// algorithm chosen and the buffers placed for it. A program makes the
  /// same call over and over, and checking, choosing and placing it again
  /// took a seventh of a small call's time; a call equal to this one, on the
  /// same buffers, with nothing loaded and no cclcMemAlloc buffer allocated
  /// or freed since, runs the same placement at once. Kept only for a call
  /// that copied no input aside (the copy would be due again), and only
  /// until the next call that is not such a repeat.
  struct HostReplay {
    Request Asked;
    const void *Send = nullptr;
    const void *Recv = nullptr;
    /// SharedBuffers::changes() and the number of loaded algorithms then.
    uint64_t Changes = 0;
    size_t Loaded = 0;
    /// Whether the buffers were cclcMemAlloc's, which no GPU owns; other
    /// buffers are asked about again (anyDeviceMemory), as on every call.
    bool Mapped = false;
    /// The request as chosen for (R.Where, R.InPlace, R.Mapped set).
    Request R;
    const Algorithm *A = nullptr;
    kern::CallArgs Args;
    /// The call's steps with their slices and connections resolved
    /// (Algorithm::trace), recorded at its first repeat, so that a program
    /// alternating between calls records nothing; null until then, or where
    /// the call is not traced.
    std::unique_ptr<host::Trace> Trace;
    /// Whether the trace was asked for, so that a call that is not traced
    /// is not asked about again on every repeat.
    bool Recorded = false;
  };
  HostReplay LastHostCall;
  /// Whether a call of Asked on Send and Recv, with no stream, repeats
  /// LastHostCall.
  bool repeatsLastHostCall(const Request &Asked, const void *Send, const void *Recv);
  /// Throws, through fail(), the first of Errors, the errors of R's call of
  /// A (null where none was chosen); returns when there is none.
  void reportErrors(const Request &R, const Algorithm *A,
                    const std::vector<std::exception_ptr> &Errors);
  /// Guards Gpu's creation against abort() from another thread.
  std::mutex GpuLock;
  /// A send (of From) or receive (into To) of a point-to-point call.
  struct Message {
    int Peer;
    bool Send;
    const std::byte *From;
    std::byte *To;
    size_t Bytes;
  };
  /// What the point-to-point call in progress moves; kept between calls,
  /// so that calls allocate nothing once their sizes have been seen.
  std::vector<Message> Messages;
  std::vector<exec::Transfer> Transfers;
  /// The last transfer on each peer's outbox (2 * peer) and inbox (2 * peer
  /// + 1) while Transfers is made.
  std::vector<int32_t> LastOnFifo;
  /// Made at the first GPU call; destroyed first (it waits for the kernels
  /// that use the memory and connections of everything else).
  std::unique_ptr<GpuContext> Gpu;
};

} // namespace cclc::runtime

/// The C API's handle.
struct cclcComm : cclc::runtime::Communicator {
  using Communicator::Communicator;
};
