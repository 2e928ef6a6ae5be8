//===- Shim.h - NCCL's API over cclc's: what its parts share -----*- C++ -*-===//
//
// libcclc-nccl.so implements the host API of NCCL's nccl.h over cclc's C API,
// so that programs written against NCCL run cclc's algorithms unchanged. An
// ncclComm_t is a cclc communicator plus what NCCL promises and cclc's API
// does not keep: the device it was made for, the operators made with
// ncclRedOpCreatePreMulSum, a count of calls in flight, so that
// ncclCommAbort from another thread frees it only once they have returned,
// and the real NCCL's communicator where calls are forwarded there.
//
// Calls issued between ncclGroupStart and ncclGroupEnd are deferred
// (Group.cpp); every entry point reports failures through ncclGetLastError.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Forward.h"

#include <cclc.h>
#include <nccl.h>

#include <atomic>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

/// NCCL's opaque communicator, defined here.
struct ncclComm {
  cclcComm_t Comm = nullptr;
  int Rank = -1;
  int Size = 0;
  /// The CUDA device current at init, as ncclCommCuDevice reports it.
  int Device = 0;
  /// The job's id, which the communicators of one job in this process share.
  ncclUniqueId Job{};
  /// ncclCommDestroy was called; it is freed with its job's last one here.
  bool Destroyed = false;
  /// Calls of this communicator running now, on any thread.
  std::atomic<int> InFlight{0};
  std::mutex Lock;
  /// The scalar of each operator ncclRedOpCreatePreMulSum made, by
  /// operator - ncclNumOps; a destroyed one is null.
  struct PreMulSum {
    std::vector<unsigned char> Value; ///< One element, when read at creation.
    const void *Where = nullptr;      ///< Where to read it at each call, else.
    ncclDataType_t Type = ncclFloat32;
    bool Live = false;
    /// The same operator on the real communicator, where C forwards.
    ncclRedOp_t RealOp = ncclSum;
  };
  std::vector<PreMulSum> Operators;
  /// The real NCCL and its communicator (a handle of that library, never
  /// read here), where this one forwards to it (Forward.h).
  const cclc::nccl::RealNccl *Forward = nullptr;
  ncclComm_t Real = nullptr;
};

namespace cclc::nccl {

/// Records Message as this thread's last error and returns Result.
ncclResult_t fail(ncclResult_t Result, const std::string &Message);
/// Refuses a null communicator, or one whose init failed.
ncclResult_t requireComm(const ncclComm *C);
/// NCCL's status for a cclc status; a failure also records cclc's message.
ncclResult_t fromCclc(cclcResult_t Result, cclcComm_t Comm);

/// Runs Body (returning an ncclResult_t) with exceptions turned into
/// statuses: nothing thrown may cross the C API.
template <class Fn> ncclResult_t guarded(Fn &&Body) {
  try {
    return Body();
  } catch (const std::bad_alloc &) {
    return fail(ncclSystemError, "out of memory");
  } catch (const std::exception &E) {
    return fail(ncclInternalError, E.what());
  }
}

/// Counts a call on Comm in flight while it lives.
class InFlight {
public:
  explicit InFlight(ncclComm *Comm) : Comm(Comm) { Comm->InFlight.fetch_add(1); }
  ~InFlight() { Comm->InFlight.fetch_sub(1); }
  InFlight(const InFlight &) = delete;
  InFlight &operator=(const InFlight &) = delete;

private:
  ncclComm *Comm;
};

/// What a deferred call does to the group it is part of: inits run first,
/// then collectives in issue order, then every send and receive of the
/// communicator together, as one cclc group, so that they cannot deadlock.
enum class Phase { Init, Collective, PointToPoint };

/// Runs Call now, outside a group, or at the outermost ncclGroupEnd. The
/// result of a deferred call is ncclGroupEnd's.
ncclResult_t submit(ncclComm *Comm, Phase When, std::function<ncclResult_t()> Call);

/// Whether Pointer is memory of a CUDA device (false on machines without
/// one), so that the host-only parts of the API can refuse device buffers.
bool isDeviceMemory(const void *Pointer);

} // namespace cclc::nccl
