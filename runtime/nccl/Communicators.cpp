//===- Communicators.cpp - NCCL's communicator calls over cclc's ---------===//
//
// Unique ids are cclc's (both are 128 bytes); a communicator is a cclc
// communicator that loads the plans of CCLC_PLAN_DIR, if set (from its
// subdirectory n<N> for N ranks when there is one, so that one directory
// serves communicators of several sizes). ncclCommSplit is built from the
// parent's own calls: an allgather of every rank's (color, key), then the
// first rank of each color starts the new job and sends its id to the rest.
//
// cclc's destroy waits for every rank of the job, where NCCL's is local. A
// process that holds several ranks of one job (ncclCommInitAll) destroys
// them one after the other from one thread, so a destroy here only marks
// its communicator until the job's last one in this process is destroyed,
// and then destroys them all at once, each on a thread.
//
//===----------------------------------------------------------------------===//

#include "Shim.h"

#include "Debug.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <cstring>
#include <filesystem>
#include <thread>

namespace cclc::nccl {

namespace {

thread_local std::string LastError;

/// The plans a communicator of Size ranks loads, in name order.
std::vector<std::filesystem::path> planFiles(int Size) {
  std::vector<std::filesystem::path> Files;
  const char *Dir = std::getenv("CCLC_PLAN_DIR");
  if (!Dir || !*Dir)
    return Files;
  std::filesystem::path Root(Dir);
  std::error_code Ec;
  if (std::filesystem::is_directory(Root / ("n" + std::to_string(Size)), Ec))
    Root /= "n" + std::to_string(Size);
  for (const auto &Entry : std::filesystem::directory_iterator(Root, Ec))
    if (Entry.path().extension() == ".json")
      Files.push_back(Entry.path());
  std::sort(Files.begin(), Files.end());
  return Files;
}

/// The communicators of each job that live in this process, by job id.
std::mutex JobsLock;
std::map<std::string, std::vector<ncclComm *>> Jobs;

std::string jobKey(const ncclComm *C) { return std::string(C->Job.internal, sizeof C->Job.internal); }

/// Joins the job Id names as Rank of Size, loads the plans and makes the
/// real NCCL's communicator where calls are forwarded there.
ncclResult_t initRank(ncclComm *C, int Size, const ncclUniqueId &Id, int Rank) {
  setUpLogging();
  static_assert(sizeof(cclcUniqueId) == sizeof(ncclUniqueId));
  cclcUniqueId Cclc;
  std::memcpy(Cclc.internal, Id.internal, sizeof Cclc.internal);
  if (cudaGetDevice(&C->Device) != cudaSuccess)
    C->Device = 0;
  if (ncclResult_t R = fromCclc(cclcCommInitRank(&C->Comm, Size, Cclc, Rank), nullptr))
    return R;
  C->Rank = Rank;
  C->Size = Size;
  C->Job = Id;
  {
    std::lock_guard<std::mutex> Guard(JobsLock);
    Jobs[jobKey(C)].push_back(C);
  }
  for (const std::filesystem::path &Plan : planFiles(Size))
    if (ncclResult_t R = fromCclc(cclcCommLoadPlan(C->Comm, Plan.c_str()), C->Comm))
      return fail(R, "loading " + Plan.string() + ": " + LastError);
  if (ncclResult_t R = startForwarding(C))
    return R;
  if (std::getenv("NCCL_TOPO_FILE") && !std::getenv("CCLC_PLAN_DIR"))
    infoOnce(C->Device, "NCCL_TOPO_FILE",
             "cclc: NCCL_TOPO_FILE is for the compiler (cclc compile), which plans for that "
             "machine; set CCLC_PLAN_DIR to the plans to run them");
  // NCCL's own words, which tools reading its logs look for.
  info(C->Device, "comm " + address(C) + " rank " + std::to_string(Rank) + " nranks " +
                      std::to_string(Size) + " cudaDev " + std::to_string(C->Device) +
                      " - Init COMPLETE");
  return ncclSuccess;
}

/// Stores Value in *Out (the argument Name) for a query about Comm.
ncclResult_t answer(const ncclComm *Comm, int *Out, const char *Name, int Value) {
  if (ncclResult_t R = requireComm(Comm))
    return R;
  if (!Out)
    return fail(ncclInvalidArgument, std::string(Name) + " is null");
  *Out = Value;
  return ncclSuccess;
}

/// Frees the shim's half of C once no other thread is inside a call on it.
void release(ncclComm *C) {
  while (C->InFlight.load() > 0)
    std::this_thread::yield();
  delete C;
}

/// Takes C out of its job's list; returns the job's communicators that are
/// now all destroyed (C's whole job, once it is the last), else none.
std::vector<ncclComm *> leaveJob(ncclComm *C) {
  std::lock_guard<std::mutex> Guard(JobsLock);
  auto It = Jobs.find(jobKey(C));
  if (It == Jobs.end())
    return {C};
  std::vector<ncclComm *> &Members = It->second;
  if (C->Destroyed) {
    if (!std::all_of(Members.begin(), Members.end(), [](ncclComm *M) { return M->Destroyed; }))
      return {};
    std::vector<ncclComm *> All = std::move(Members);
    Jobs.erase(It);
    return All;
  }
  Members.erase(std::remove(Members.begin(), Members.end(), C), Members.end());
  if (Members.empty())
    Jobs.erase(It);
  return {C};
}

/// Destroys C's cclc communicator, or aborts it where it failed (it cannot
/// wait for its peers then), and frees C.
ncclResult_t finish(ncclComm *C) {
  cclcResult_t Async = cclcSuccess;
  bool Healthy = cclcCommGetAsyncError(C->Comm, &Async) == cclcSuccess && Async == cclcSuccess;
  ncclResult_t Result = endForwarding(C, Healthy ? RealEnd::Destroy : RealEnd::Abort);
  // Either call frees the cclc communicator.
  if (Healthy) {
    if (ncclResult_t Destroyed = fromCclc(cclcCommDestroy(C->Comm), nullptr))
      Result = Destroyed;
  } else {
    cclcCommAbort(C->Comm);
  }
  release(C);
  return Result;
}

/// The config's fields NCCL_CONFIG_INITIALIZER sets, checked as NCCL does.
ncclResult_t checkConfig(const ncclConfig_t *Config) {
  if (!Config)
    return ncclSuccess;
  if (Config->magic != 0xcafebeef || Config->size < sizeof(size_t) * 3)
    return fail(ncclInvalidArgument,
                "the ncclConfig_t was not set up with NCCL_CONFIG_INITIALIZER");
  return ncclSuccess;
}

} // namespace

ncclResult_t requireComm(const ncclComm *C) {
  if (!C || !C->Comm)
    return fail(ncclInvalidArgument, "the communicator is null or was never initialized");
  return ncclSuccess;
}

ncclResult_t fail(ncclResult_t Result, const std::string &Message) {
  LastError = Message;
  return Result;
}

ncclResult_t fromCclc(cclcResult_t Result, cclcComm_t Comm) {
  switch (Result) {
  case cclcSuccess: return ncclSuccess;
  case cclcSystemError: return fail(ncclSystemError, cclcGetLastError(Comm));
  case cclcInvalidArgument: return fail(ncclInvalidArgument, cclcGetLastError(Comm));
  case cclcInvalidUsage:
  case cclcNoAlgorithm: return fail(ncclInvalidUsage, cclcGetLastError(Comm));
  case cclcRemoteError:
  case cclcTimeout: return fail(ncclRemoteError, cclcGetLastError(Comm));
  default: return fail(ncclInternalError, cclcGetLastError(Comm));
  }
}

bool isDeviceMemory(const void *Pointer) {
  cudaPointerAttributes Attributes;
  if (!Pointer || cudaPointerGetAttributes(&Attributes, Pointer) != cudaSuccess) {
    cudaGetLastError(); // Not CUDA's memory, or no usable device: the host's.
    return false;
  }
  return Attributes.type == cudaMemoryTypeDevice || Attributes.type == cudaMemoryTypeManaged;
}

} // namespace cclc::nccl

using namespace cclc::nccl;

extern "C" {

ncclResult_t ncclGetVersion(int *Version) {
  if (!Version)
    return fail(ncclInvalidArgument, "version is null");
  *Version = NCCL_VERSION_CODE;
  return ncclSuccess;
}

const char *ncclGetErrorString(ncclResult_t Result) {
  switch (Result) {
  case ncclSuccess: return "no error";
  case ncclUnhandledCudaError: return "unhandled cuda error (run with NCCL_DEBUG=INFO for details)";
  case ncclSystemError: return "unhandled system error (run with NCCL_DEBUG=INFO for details)";
  case ncclInternalError: return "internal error - please report this issue to the cclc developers";
  case ncclInvalidArgument: return "invalid argument (run with NCCL_DEBUG=WARN for details)";
  case ncclInvalidUsage: return "invalid usage (run with NCCL_DEBUG=WARN for details)";
  case ncclRemoteError: return "remote process exited or there was a network error";
  case ncclInProgress: return "NCCL operation in progress";
  default: return "unknown result code";
  }
}

const char *ncclGetLastError(ncclComm_t) { return LastError.c_str(); }

ncclResult_t ncclGetUniqueId(ncclUniqueId *Id) {
  if (!Id)
    return fail(ncclInvalidArgument, "uniqueId is null");
  cclcUniqueId Cclc;
  if (ncclResult_t R = fromCclc(cclcGetUniqueId(&Cclc), nullptr))
    return R;
  std::memcpy(Id->internal, Cclc.internal, sizeof Id->internal);
  return ncclSuccess;
}

ncclResult_t ncclCommInitRankConfig(ncclComm_t *Comm, int NRanks, ncclUniqueId Id, int Rank,
                                    ncclConfig_t *Config) {
  return guarded([&]() -> ncclResult_t {
    if (!Comm)
      return fail(ncclInvalidArgument, "comm is null");
    if (NRanks < 1 || Rank < 0 || Rank >= NRanks)
      return fail(ncclInvalidArgument, "rank " + std::to_string(Rank) + " of " +
                                           std::to_string(NRanks) + " ranks is out of range");
    if (ncclResult_t R = checkConfig(Config))
      return R;
    // Non-blocking communicators (config->blocking = 0) finish their init
    // here too; ncclCommGetAsyncError then reports success at once.
    auto *C = new ncclComm;
    *Comm = C;
    return submit(C, Phase::Init, [C, NRanks, Id, Rank] { return initRank(C, NRanks, Id, Rank); });
  });
}

ncclResult_t ncclCommInitRank(ncclComm_t *Comm, int NRanks, ncclUniqueId Id, int Rank) {
  return ncclCommInitRankConfig(Comm, NRanks, Id, Rank, nullptr);
}

ncclResult_t ncclCommInitAll(ncclComm_t *Comms, int NDev, const int *DevList) {
  return guarded([&]() -> ncclResult_t {
    if (!Comms || NDev < 1)
      return fail(ncclInvalidArgument, "ncclCommInitAll needs an array of ndev >= 1 comms");
    ncclUniqueId Id;
    if (ncclResult_t R = ncclGetUniqueId(&Id))
      return R;
    if (ncclResult_t R = ncclGroupStart())
      return R;
    for (int I = 0; I < NDev; ++I)
      ncclCommInitRank(&Comms[I], NDev, Id, I);
    ncclResult_t R = ncclGroupEnd();
    for (int I = 0; I < NDev && DevList; ++I)
      Comms[I]->Device = DevList[I];
    return R;
  });
}

ncclResult_t ncclCommSplit(ncclComm_t Comm, int Color, int Key, ncclComm_t *NewComm,
                           ncclConfig_t *Config) {
  return guarded([&]() -> ncclResult_t {
    if (ncclResult_t R = requireComm(Comm))
      return R;
    if (!NewComm)
      return fail(ncclInvalidArgument, "newcomm is null");
    if (Color < 0 && Color != NCCL_SPLIT_NOCOLOR)
      return fail(ncclInvalidArgument, "color " + std::to_string(Color) +
                                           " is negative; use NCCL_SPLIT_NOCOLOR to opt out");
    if (ncclResult_t R = checkConfig(Config))
      return R;
    InFlight Counted(Comm);
    // Every rank's (color, key, rank), gathered on every rank.
    int Mine[3] = {Color, Key, Comm->Rank};
    std::vector<int> All(size_t(3) * Comm->Size);
    if (ncclResult_t R = fromCclc(
            cclcAllGather(Mine, All.data(), 3, cclcInt32, Comm->Comm, nullptr), Comm->Comm))
      return R;
    *NewComm = nullptr;
    if (Color == NCCL_SPLIT_NOCOLOR)
      return ncclSuccess;
    std::vector<std::pair<int, int>> Members; // (key, parent rank) of my color
    for (int R = 0; R < Comm->Size; ++R)
      if (All[3 * R] == Color)
        Members.emplace_back(All[3 * R + 1], All[3 * R + 2]);
    std::sort(Members.begin(), Members.end());
    int NewRank =
        int(std::find(Members.begin(), Members.end(), std::make_pair(Key, Comm->Rank)) -
            Members.begin());
    // The color's first rank starts its job and tells the others.
    ncclUniqueId Id;
    int Leader = Members[0].second;
    if (NewRank == 0 && ncclGetUniqueId(&Id) != ncclSuccess)
      return ncclSystemError;
    cclcResult_t Sent = cclcGroupStart();
    for (size_t M = 1; M < Members.size() && Sent == cclcSuccess; ++M)
      if (NewRank == 0)
        Sent = cclcSend(Id.internal, sizeof Id.internal, cclcUint8, Members[M].second,
                        Comm->Comm, nullptr);
    if (NewRank != 0 && Sent == cclcSuccess)
      Sent = cclcRecv(Id.internal, sizeof Id.internal, cclcUint8, Leader, Comm->Comm, nullptr);
    cclcResult_t Ended = cclcGroupEnd();
    if (ncclResult_t R = fromCclc(Sent != cclcSuccess ? Sent : Ended, Comm->Comm))
      return R;
    auto *C = new ncclComm;
    if (ncclResult_t R = initRank(C, int(Members.size()), Id, NewRank)) {
      delete C;
      return R;
    }
    *NewComm = C;
    return ncclSuccess;
  });
}

ncclResult_t ncclCommFinalize(ncclComm_t Comm) {
  // Every call of cclc's has finished when it returns (or at its
  // ncclGroupEnd), so only the forwarded ones may have work left to flush.
  if (ncclResult_t R = requireComm(Comm))
    return R;
  return guarded([&] { return endForwarding(Comm, RealEnd::Finalize); });
}

ncclResult_t ncclCommDestroy(ncclComm_t Comm) {
  if (!Comm)
    return ncclSuccess;
  return guarded([&]() -> ncclResult_t {
    if (!Comm->Comm) { // Its init failed.
      release(Comm);
      return ncclSuccess;
    }
    Comm->Destroyed = true;
    std::vector<ncclComm *> Done = leaveJob(Comm);
    if (Done.size() <= 1)
      return Done.empty() ? ncclSuccess : finish(Done[0]);
    std::vector<ncclResult_t> Results(Done.size());
    std::vector<std::thread> Threads;
    for (size_t I = 0; I < Done.size(); ++I)
      Threads.emplace_back([&, I] { Results[I] = finish(Done[I]); });
    for (std::thread &T : Threads)
      T.join();
    for (ncclResult_t R : Results)
      if (R != ncclSuccess)
        return R;
    return ncclSuccess;
  });
}

ncclResult_t ncclCommAbort(ncclComm_t Comm) {
  if (!Comm)
    return ncclSuccess;
  return guarded([&]() -> ncclResult_t {
    // Stops calls stuck on other threads; they return before it frees.
    if (Comm->Comm) {
      leaveJob(Comm);
      endForwarding(Comm, RealEnd::Abort);
      cclcCommAbort(Comm->Comm);
    }
    release(Comm);
    return ncclSuccess;
  });
}

ncclResult_t ncclCommGetAsyncError(ncclComm_t Comm, ncclResult_t *AsyncError) {
  if (ncclResult_t R = requireComm(Comm))
    return R;
  if (!AsyncError)
    return fail(ncclInvalidArgument, "asyncError is null");
  cclcResult_t Async = cclcSuccess;
  if (ncclResult_t R = fromCclc(cclcCommGetAsyncError(Comm->Comm, &Async), Comm->Comm))
    return R;
  *AsyncError = fromCclc(Async, Comm->Comm);
  return *AsyncError == ncclSuccess ? forwardedAsyncError(Comm, AsyncError) : ncclSuccess;
}

ncclResult_t ncclCommCount(const ncclComm_t Comm, int *Count) {
  return answer(Comm, Count, "count", Comm ? Comm->Size : 0);
}

ncclResult_t ncclCommCuDevice(const ncclComm_t Comm, int *Device) {
  return answer(Comm, Device, "device", Comm ? Comm->Device : 0);
}

ncclResult_t ncclCommUserRank(const ncclComm_t Comm, int *Rank) {
  return answer(Comm, Rank, "rank", Comm ? Comm->Rank : 0);
}

ncclResult_t ncclMemAlloc(void **Pointer, size_t Size) {
  if (!Pointer)
    return fail(ncclInvalidArgument, "ptr is null");
  // On a machine with a usable device, device memory as NCCL gives; else
  // host memory that the ranks of the host map, which every call of this
  // library takes and its single copies write into with memcpy.
  int Devices = 0;
  if (cudaGetDeviceCount(&Devices) == cudaSuccess && Devices > 0)
    return cudaMalloc(Pointer, Size) == cudaSuccess
               ? ncclSuccess
               : fail(ncclUnhandledCudaError, "cudaMalloc of " + std::to_string(Size) +
                                                  " bytes failed");
  cudaGetLastError();
  return cclcMemAlloc(Pointer, Size) == cclcSuccess
             ? ncclSuccess
             : fail(ncclSystemError, std::string("cclcMemAlloc: ") + cclcGetLastError(nullptr));
}

ncclResult_t ncclMemFree(void *Pointer) {
  if (isDeviceMemory(Pointer))
    return cudaFree(Pointer) == cudaSuccess ? ncclSuccess
                                            : fail(ncclUnhandledCudaError, "cudaFree failed");
  return cclcMemFree(Pointer) == cclcSuccess
             ? ncclSuccess
             : fail(ncclInvalidArgument, std::string("cclcMemFree: ") + cclcGetLastError(nullptr));
}

/// A registration: cclc copies through its own buffers, so it only checks
/// the arguments and hands back a handle to deregister.
struct Registration {
  void *Buffer;
  size_t Size;
};

ncclResult_t ncclCommRegister(const ncclComm_t Comm, void *Buffer, size_t Size, void **Handle) {
  if (ncclResult_t R = requireComm(Comm))
    return R;
  if (!Buffer || !Handle)
    return fail(ncclInvalidArgument, "buff and handle must not be null");
  *Handle = new Registration{Buffer, Size};
  return ncclSuccess;
}

ncclResult_t ncclCommDeregister(const ncclComm_t Comm, void *Handle) {
  if (ncclResult_t R = requireComm(Comm))
    return R;
  if (!Handle)
    return fail(ncclInvalidArgument, "handle is null");
  delete static_cast<Registration *>(Handle);
  return ncclSuccess;
}

} // extern "C"
