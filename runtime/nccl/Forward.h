//===- Forward.h - The real NCCL, for the calls cclc cannot serve -*- C++ -*-===//
//
// With CCLC_NCCL_FORWARD naming the real NCCL's libnccl.so.2 (or "auto", for
// the one beside the CUDA toolkit the shim was built with), every
// communicator has a real NCCL communicator alongside, made at init, and the
// calls cclc has no way to serve run there: reductions of the 8-bit floats,
// ncclAvg and pre-multiplied sums on device buffers, and collectives on
// device buffers that no loaded plan serves (the runtime's GPU fallback ring
// is switched off then, since the real NCCL's algorithms are the better
// fallback). The library is loaded with RTLD_LOCAL, so that its symbols never
// displace the shim's.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <nccl.h>

#include <functional>
#include <string>

struct ncclComm;

namespace cclc::nccl {

/// The entry points of the real NCCL that forwarding uses.
struct RealNccl {
  std::string Path;
  decltype(&ncclGetUniqueId) GetUniqueId;
  decltype(&ncclCommInitRank) CommInitRank;
  decltype(&ncclCommFinalize) CommFinalize;
  decltype(&ncclCommDestroy) CommDestroy;
  decltype(&ncclCommAbort) CommAbort;
  decltype(&ncclCommGetAsyncError) CommGetAsyncError;
  decltype(&ncclGetErrorString) GetErrorString;
  decltype(&ncclGetLastError) GetLastError;
  decltype(&ncclAllReduce) AllReduce;
  decltype(&ncclReduce) Reduce;
  decltype(&ncclReduceScatter) ReduceScatter;
  decltype(&ncclBroadcast) Broadcast;
  decltype(&ncclAllGather) AllGather;
  decltype(&ncclRedOpCreatePreMulSum) RedOpCreatePreMulSum;
  decltype(&ncclRedOpDestroy) RedOpDestroy;
};

/// Makes C's real communicator where forwarding is asked for: every rank
/// loads the library, rank 0's real unique id reaches the others over cclc,
/// and the ranks agree that every one of them succeeded (so that none is left
/// forwarding alone). With a path in CCLC_NCCL_FORWARD a failure fails the
/// init with the cause; with "auto" it leaves the communicator on cclc alone.
/// Collective over C's cclc communicator.
ncclResult_t startForwarding(ncclComm *C);

/// A call of the real NCCL on C's real communicator.
using RealCall = std::function<ncclResult_t(const RealNccl &, ncclComm_t Real)>;

/// Runs Call, the call Kind ("allreduce of float8e4m3"), on the real NCCL
/// because of Why, saying so once per kind at INFO; a failure records the
/// real NCCL's message.
ncclResult_t forward(ncclComm *C, const std::string &Kind, const char *Why, const RealCall &Call);

/// Whether C forwards to the real NCCL.
bool forwards(const ncclComm *C);

/// What ncclCommFinalize, ncclCommDestroy and ncclCommAbort do to the real
/// communicator.
enum class RealEnd { Finalize, Destroy, Abort };

/// Finalizes, destroys or aborts C's real communicator (if it has one); the
/// real NCCL's status.
ncclResult_t endForwarding(ncclComm *C, RealEnd How);

/// The real communicator's asynchronous error (ncclSuccess without one).
ncclResult_t forwardedAsyncError(ncclComm *C, ncclResult_t *Async);

} // namespace cclc::nccl
