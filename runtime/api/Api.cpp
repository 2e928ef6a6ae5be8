//===- Api.cpp - The C API's entry points ---------------------------------===//
//
// Each entry point checks its handle and pointers, converts the C enums, and
// runs the communicator's method under guarded(), which turns whatever it
// throws into a status and keeps the message for cclcGetLastError.
//
// Groups are the calling thread's, as NCCL's are: between cclcGroupStart and
// the matching cclcGroupEnd (they nest), point-to-point calls are checked
// and queued, and the outermost cclcGroupEnd runs them together. A call
// refused inside a group drops the whole group, which then runs nothing.
//
//===----------------------------------------------------------------------===//

#include "runtime/api/Comm.h"
#include "runtime/api/Environment.h"
#include "runtime/api/Log.h"
#include "runtime/api/Roots.h"
#include "runtime/api/Status.h"
#include "runtime/api/Types.h"

#include "runtime/bootstrap/Launcher.h"
#include "runtime/transport/shm/SharedBuffers.h"

#include <cstring>
#include <optional>
#include <vector>

using namespace cclc::runtime;
using cclc::plan::CollectiveKind;

namespace {

static_assert(sizeof(cclcUniqueId) == sizeof(cclc::net::UniqueId));

void requireComm(const cclcComm *Comm) {
  require(Comm, "comm is null; pass a communicator that cclcCommInitRank created");
}

/// The group this thread has open.
struct Group {
  /// Starts not yet ended; the group is open while positive.
  int Depth = 0;
  /// The communicator of the queued calls.
  cclcComm *Comm = nullptr;
  std::vector<PeerOp> Ops;
  /// The status and message of the first call refused in the group, which
  /// drops it; cclcSuccess while none was.
  cclcResult_t Refused = cclcSuccess;
  std::string RefusedWhy;
};
thread_local Group Open;

/// Throws ApiError(cclcInvalidUsage) when a group is open: Call cannot join it.
void refuseInGroup(const char *Call) {
  if (Open.Depth)
    throw ApiError(cclcInvalidUsage,
                   std::string(Call) +
                       " inside a group: groups hold cclcSend, cclcRecv and cclcAllToAll; call "
                       "it after cclcGroupEnd");
}

/// Records that the open group was refused with Result, for Why; throws
/// nothing (out of memory, the reason is left out), since the C entry
/// points call it outside guarded().
void refuseGroup(cclcResult_t Result, const char *Why) noexcept {
  Open.Refused = Result;
  try {
    Open.RefusedWhy = Why;
  } catch (...) {
    Open.RefusedWhy.clear();
  }
}

/// Drops the open group's calls on Comm, which is going away: the group's
/// end then refuses them rather than run them on a freed communicator.
void dropGroupOf(const cclcComm *Comm) noexcept {
  if (!Comm || Open.Comm != Comm)
    return;
  Open.Comm = nullptr;
  Open.Ops.clear();
  if (Open.Refused == cclcSuccess)
    refuseGroup(cclcInvalidUsage, "its communicator was destroyed before cclcGroupEnd");
}

/// Result, the status of a call: a refusal drops the open group.
cclcResult_t noteInGroup(cclcResult_t Result) noexcept {
  if (Result != cclcSuccess && Open.Depth && Open.Refused == cclcSuccess)
    refuseGroup(Result, lastError());
  return Result;
}

/// Runs Op on Comm, or queues it in the open group.
cclcResult_t issue(cclcComm_t Comm, cclcStream_t Stream, PeerOp::Kind What, int Peer,
                   const void *Send, void *Recv, size_t Count, cclcDataType_t Type) {
  return noteInGroup(guarded([&] {
    requireComm(Comm);
    PeerOp Op{What, Peer, Send, Recv, Count, hostType(Type)};
    Comm->checkPeerOp(Op, Stream);
    if (!Open.Depth) {
      // An alltoall that a loaded plan or registered kernel serves runs it.
      if (What == PeerOp::Kind::AllToAll) {
        Request R;
        R.Collective = CollectiveKind::AllToAll;
        R.Count = Count;
        R.Type = Op.Type;
        if (Comm->runsLoadedOnHost(R, Send, Recv))
          return Comm->collective(R, Send, Recv, Stream);
      }
      return Comm->pointToPoint({&Op, 1});
    }
    if (Open.Comm && Open.Comm != Comm)
      throw ApiError(cclcInvalidUsage,
                     "a group holds the calls of one communicator; end the group before calling "
                     "on another");
    Open.Comm = Comm;
    Open.Ops.push_back(Op);
  }));
}

cclcResult_t launch(const char *Call, cclcComm_t Comm, cclcStream_t Stream,
                    CollectiveKind Collective, int Root, size_t Count, cclcDataType_t Type,
                    cclcRedOp_t Op, const void *Send, void *Recv) {
  return noteInGroup(guarded([&] {
    requireComm(Comm);
    refuseInGroup(Call);
    Request R;
    R.Collective = Collective;
    R.Root = Root;
    R.Count = Count;
    R.Type = hostType(Type);
    R.Op = hostOp(Op);
    Comm->collective(R, Send, Recv, Stream);
  }));
}

} // namespace

extern "C" {

const char *cclcGetErrorString(cclcResult_t Result) { return resultString(Result); }

const char *cclcGetLastError(cclcComm_t) { return lastError(); }

cclcResult_t cclcMemAlloc(void **Ptr, size_t Size) {
  return guarded([&] {
    require(Ptr, "ptr is null; pass the address of a pointer");
    try {
      *Ptr = cclc::net::SharedBuffers::process().allocate(Size);
    } catch (const cclc::net::NetError &E) {
      // The system refused this process memory (no peer is involved).
      throw ApiError(cclcSystemError, E.what());
    }
  });
}

cclcResult_t cclcMemFree(void *Ptr) {
  return guarded([&] {
    require(!Ptr || cclc::net::SharedBuffers::process().release(Ptr),
            "ptr is not memory from cclcMemAlloc, or was freed already");
  });
}

cclcResult_t cclcGetUniqueId(cclcUniqueId *UniqueId) {
  return guarded([&] {
    require(UniqueId, "uniqueId is null; pass the address of a cclcUniqueId");
    cclc::net::UniqueId Id = startRoot(timeoutFromEnvironment());
    std::memcpy(UniqueId->internal, Id.Bytes, sizeof Id.Bytes);
  });
}

cclcResult_t cclcCommInitRank(cclcComm_t *Comm, int NRanks, cclcUniqueId CommId, int Rank) {
  return guarded([&] {
    require(Comm, "comm is null; pass the address of a cclcComm_t");
    *Comm = nullptr;
    require(NRanks >= 1 && NRanks <= cclc::net::MaxRanks,
            "nranks is " + std::to_string(NRanks) + "; a job has 1 to " +
                std::to_string(cclc::net::MaxRanks) + " ranks");
    require(Rank >= 0 && Rank < NRanks, "rank " + std::to_string(Rank) +
                                            " is not in [0, nranks) with nranks " +
                                            std::to_string(NRanks));
    cclc::net::UniqueId Id;
    std::memcpy(Id.Bytes, CommId.internal, sizeof Id.Bytes);
    auto Boot = cclc::net::Bootstrap::init(Id, Rank, NRanks, timeoutFromEnvironment());
    // Every rank has registered: a root this process serves is done.
    releaseRoot(Id);
    *Comm = new cclcComm(std::move(Boot));
  });
}

cclcResult_t cclcCommInitFromEnvironment(cclcComm_t *Comm) {
  return guarded([&] {
    require(Comm, "comm is null; pass the address of a cclcComm_t");
    *Comm = nullptr;
    cclc::net::Rendezvous R;
    try {
      R = cclc::net::rendezvousFromEnvironment();
    } catch (const cclc::net::NetError &E) {
      // Nothing was waited for: the environment lacks or garbles a setting.
      throw ApiError(cclcInvalidUsage, E.what());
    }
    *Comm = new cclcComm(cclc::net::bootstrapFromRendezvous(R, timeoutFromEnvironment()));
  });
}

cclcResult_t cclcCommDestroy(cclcComm_t Comm) {
  dropGroupOf(Comm);
  cclcResult_t Result = guarded([&] {
    requireComm(Comm);
    Comm->finish();
  });
  if (Comm) {
    cclcResult_t Freed = guarded([&] { delete Comm; });
    if (Result == cclcSuccess)
      Result = Freed;
  }
  return Result;
}

cclcResult_t cclcCommAbort(cclcComm_t Comm) {
  dropGroupOf(Comm);
  return guarded([&] {
    requireComm(Comm);
    Comm->abort("rank " + std::to_string(Comm->rank()) + " called cclcCommAbort");
    delete Comm;
  });
}

cclcResult_t cclcCommCount(const cclcComm_t Comm, int *Count) {
  return guarded([&] {
    requireComm(Comm);
    require(Count, "count is null; pass the address of an int");
    *Count = Comm->size();
  });
}

cclcResult_t cclcCommUserRank(const cclcComm_t Comm, int *Rank) {
  return guarded([&] {
    requireComm(Comm);
    require(Rank, "rank is null; pass the address of an int");
    *Rank = Comm->rank();
  });
}

cclcResult_t cclcCommLoadPlan(cclcComm_t Comm, const char *Path) {
  return guarded([&] {
    requireComm(Comm);
    require(Path, "path is null; pass the path of a plan file");
    Comm->loadPlan(Path);
  });
}

cclcResult_t cclcCommLoadPlanText(cclcComm_t Comm, const char *Json, size_t Bytes) {
  return guarded([&] {
    requireComm(Comm);
    require(Json || Bytes == 0, "json is null; pass the text of a plan");
    Comm->loadPlanText(std::string(Json ? Json : "", Bytes), "<plan text>");
  });
}

cclcResult_t cclcCommRegisterKernels(cclcComm_t Comm, const void *KernelInfos, size_t Count) {
  return guarded([&] {
    requireComm(Comm);
    Comm->registerKernels(static_cast<const cclc::host::KernelInfo *>(KernelInfos), Count);
  });
}

cclcResult_t cclcCommRegisterCudaKernels(cclcComm_t Comm, const void *KernelInfos, size_t Count) {
  return guarded([&] {
    requireComm(Comm);
    Comm->registerCudaKernels(KernelInfos, Count);
  });
}

cclcResult_t cclcCommSetGpuFallback(cclcComm_t Comm, int Enabled) {
  return guarded([&] {
    requireComm(Comm);
    Comm->setGpuFallback(Enabled != 0);
  });
}

cclcResult_t cclcCommGetAsyncError(cclcComm_t Comm, cclcResult_t *AsyncError) {
  return guarded([&] {
    requireComm(Comm);
    require(AsyncError, "asyncError is null; pass the address of a cclcResult_t");
    std::optional<Classified> Failure = Comm->asyncError();
    *AsyncError = Failure ? Failure->Result : cclcSuccess;
    if (Failure)
      setLastError(std::move(Failure->Message));
  });
}

cclcResult_t cclcAllReduce(const void *Send, void *Recv, size_t Count, cclcDataType_t Type,
                           cclcRedOp_t Op, cclcComm_t Comm, cclcStream_t Stream) {
  return launch("cclcAllReduce", Comm, Stream, CollectiveKind::AllReduce, 0, Count, Type, Op, Send,
                Recv);
}

cclcResult_t cclcAllGather(const void *Send, void *Recv, size_t SendCount, cclcDataType_t Type,
                           cclcComm_t Comm, cclcStream_t Stream) {
  return launch("cclcAllGather", Comm, Stream, CollectiveKind::AllGather, 0, SendCount, Type,
                cclcSum, Send, Recv);
}

cclcResult_t cclcReduceScatter(const void *Send, void *Recv, size_t RecvCount, cclcDataType_t Type,
                               cclcRedOp_t Op, cclcComm_t Comm, cclcStream_t Stream) {
  return launch("cclcReduceScatter", Comm, Stream, CollectiveKind::ReduceScatter, 0, RecvCount,
                Type, Op, Send, Recv);
}

cclcResult_t cclcBroadcast(const void *Send, void *Recv, size_t Count, cclcDataType_t Type,
                           int Root, cclcComm_t Comm, cclcStream_t Stream) {
  return launch("cclcBroadcast", Comm, Stream, CollectiveKind::Broadcast, Root, Count, Type,
                cclcSum, Send, Recv);
}

cclcResult_t cclcReduce(const void *Send, void *Recv, size_t Count, cclcDataType_t Type,
                        cclcRedOp_t Op, int Root, cclcComm_t Comm, cclcStream_t Stream) {
  return launch("cclcReduce", Comm, Stream, CollectiveKind::Reduce, Root, Count, Type, Op, Send,
                Recv);
}

cclcResult_t cclcSend(const void *Send, size_t Count, cclcDataType_t Type, int Peer,
                      cclcComm_t Comm, cclcStream_t Stream) {
  return issue(Comm, Stream, PeerOp::Kind::Send, Peer, Send, nullptr, Count, Type);
}

cclcResult_t cclcRecv(void *Recv, size_t Count, cclcDataType_t Type, int Peer, cclcComm_t Comm,
                      cclcStream_t Stream) {
  return issue(Comm, Stream, PeerOp::Kind::Recv, Peer, nullptr, Recv, Count, Type);
}

cclcResult_t cclcAllToAll(const void *Send, void *Recv, size_t Count, cclcDataType_t Type,
                          cclcComm_t Comm, cclcStream_t Stream) {
  return issue(Comm, Stream, PeerOp::Kind::AllToAll, 0, Send, Recv, Count, Type);
}

cclcResult_t cclcGroupStart(void) {
  ++Open.Depth;
  return cclcSuccess;
}

cclcResult_t cclcGroupEnd(void) {
  return guarded([&] {
    if (!Open.Depth)
      throw ApiError(cclcInvalidUsage,
                     "cclcGroupEnd without cclcGroupStart; call cclcGroupStart first, once for "
                     "each cclcGroupEnd");
    if (--Open.Depth)
      return;
    // The group ends here, run or not; its vector keeps its memory for the next.
    struct Close {
      ~Close() {
        Open.Comm = nullptr;
        Open.Ops.clear();
        Open.Refused = cclcSuccess;
        Open.RefusedWhy.clear();
      }
    } Closing;
    if (Open.Refused != cclcSuccess)
      throw ApiError(Open.Refused, "the group was dropped, and none of its calls ran, since one "
                                   "was refused: " +
                                       Open.RefusedWhy);
    if (Open.Comm)
      Open.Comm->pointToPoint(Open.Ops);
  });
}

cclcResult_t cclcSetLogHandler(cclcLogHandler_t Handler) {
  setLogHandler(Handler);
  return cclcSuccess;
}

} // extern "C"
