//===- Comm.h - One rank's communicator -------------------------*- C++ -*-===//
//
// What cclcComm_t points to: the rank's bootstrap, the algorithms loaded into
// it with the transports they run on, and what calls reuse (channel threads,
// scratch memory). The C API (Api.cpp) checks arguments and turns exceptions
// into status codes; everything here throws.
//
// A communicator serves one call at a time, like an NCCL communicator on one
// stream; only abort() may come from another thread, to stop a call that
// waits. After a collective fails, every later call is refused: the peers
// are mid-collective or gone, so the communicator can only be destroyed.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/api/Algorithms.h"
#include "runtime/api/ChannelPool.h"
#include "runtime/api/LinkSets.h"
#include "runtime/api/Workspace.h"
#include "runtime/api/cclc.h"

#include "compiler/emit/PlanJson.h"
#include "dsl/SourceManager.h"
#include "runtime/net/Bootstrap.h"

#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace cclc::runtime {

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

  /// Runs one collective (Launch.cpp): Send and Recv are the caller's
  /// buffers, either of which may be null where NCCL allows it.
  void collective(const Request &R, const void *Send, void *Recv);

  /// Waits until every rank has reached its destroy; skipped after a failure.
  void finish();
  /// Stops every wait on this communicator's bootstrap and transports, here
  /// and at the peers, then waits for the call in progress to return.
  void abort(const std::string &Cause);

private:
  /// Refuses calls after a failure.
  void checkUsable() const;
  /// Reads plan file FileId of SM, verifies it and loads it.
  void loadPlanFile(SourceManager &SM, uint32_t FileId, const std::string &Name);
  /// An interpreter algorithm for S, connected.
  Algorithm interpreted(sched::Schedule S, std::string Origin, const emit::PlanInfo &Info);
  /// The library's ring for R's collective and root (Fallback.h).
  Algorithm fallback(const Request &R);
  /// Records that call R failed (running A, unless choosing failed) and
  /// throws the cause of Errors, the channels' errors, with its context.
  [[noreturn]] void fail(const Request &R, const Algorithm *A,
                         const std::vector<std::exception_ptr> &Errors);

  std::unique_ptr<net::Bootstrap> Boot;
  int Rank;
  int NRanks;
  LinkSets Links;
  AlgorithmTable Table;
  Workspace Space;
  ChannelPool Pool;
  /// Why the communicator failed; empty while it works.
  std::string Failure;
  /// Held by every call, so that abort() knows when none is running.
  std::mutex CallLock;
};

} // namespace cclc::runtime

/// The C API's handle.
struct cclcComm : cclc::runtime::Communicator {
  using Communicator::Communicator;
};
