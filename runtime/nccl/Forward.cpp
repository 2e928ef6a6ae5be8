//===- Forward.cpp - The real NCCL, for the calls cclc cannot serve -------===//
//
// The library is loaded once per process, when the first communicator is
// made. Its unique id travels over cclc's own communicator at init rather
// than inside cclc's id: both are 128 bytes, and the real root then lives in
// the process of rank 0, which also survives programs that fork their ranks
// after ncclGetUniqueId.
//
//===----------------------------------------------------------------------===//

#include "Forward.h"

#include "Debug.h"
#include "Shim.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <type_traits>

namespace cclc::nccl {

namespace {

/// What CCLC_NCCL_FORWARD asked for and what loading it gave.
struct Library {
  bool Asked = false;
  /// A path was named: failing to forward fails the init. "auto" only
  /// forwards where it can.
  bool Required = false;
  std::optional<RealNccl> Real;
  std::string Error;
};

Library load() {
  Library L;
  const char *Value = std::getenv("CCLC_NCCL_FORWARD");
  if (!Value || !*Value)
    return L;
  L.Asked = true;
  std::string Path = Value;
  L.Required = Path != "auto";
  if (!L.Required)
    Path = std::string(CCLC_CUDA_LIBRARY_DIR) + "/libnccl.so.2";
  // RTLD_DEEPBIND: the real NCCL's calls of its own API bind to itself,
  // never to the shim's functions of the same names.
  void *Handle = dlopen(Path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
  if (!Handle) {
    L.Error = "cannot load " + Path + ": " + dlerror();
    return L;
  }
  RealNccl R;
  R.Path = Path;
  std::string Missing;
  auto bind = [&](auto &Slot, const char *Name) {
    dlerror();
    void *Symbol = dlsym(Handle, Name);
    if (!Symbol && Missing.empty())
      Missing = std::string(Name) + " (" + dlerror() + ")";
    Slot = reinterpret_cast<std::remove_reference_t<decltype(Slot)>>(Symbol);
  };
  bind(R.GetUniqueId, "ncclGetUniqueId");
  bind(R.CommInitRank, "ncclCommInitRank");
  bind(R.CommFinalize, "ncclCommFinalize");
  bind(R.CommDestroy, "ncclCommDestroy");
  bind(R.CommAbort, "ncclCommAbort");
  bind(R.CommGetAsyncError, "ncclCommGetAsyncError");
  bind(R.GetErrorString, "ncclGetErrorString");
  bind(R.GetLastError, "ncclGetLastError");
  bind(R.AllReduce, "ncclAllReduce");
  bind(R.Reduce, "ncclReduce");
  bind(R.ReduceScatter, "ncclReduceScatter");
  bind(R.Broadcast, "ncclBroadcast");
  bind(R.AllGather, "ncclAllGather");
  bind(R.RedOpCreatePreMulSum, "ncclRedOpCreatePreMulSum");
  bind(R.RedOpDestroy, "ncclRedOpDestroy");
  if (!Missing.empty()) {
    L.Error = Path + " is not NCCL's library: it lacks " + Missing;
    dlclose(Handle);
    return L;
  }
  if (reinterpret_cast<void *>(R.AllReduce) == reinterpret_cast<void *>(&ncclAllReduce)) {
    L.Error = Path + " is cclc's own NCCL library; name the real NCCL's libnccl.so.2";
    dlclose(Handle);
    return L;
  }
  L.Real = std::move(R);
  return L;
}

const Library &library() {
  static const Library L = load();
  return L;
}

/// "the real NCCL's Call failed: its status: its last error".
std::string realError(const RealNccl &L, ncclComm_t Real, const std::string &Call,
                      ncclResult_t Result) {
  return "the real NCCL (" + L.Path + ")'s " + Call + " failed: " + L.GetErrorString(Result) +
         ": " + L.GetLastError(Real);
}

} // namespace

ncclResult_t startForwarding(ncclComm *C) {
  const Library &L = library();
  if (!L.Asked)
    return ncclSuccess;
  // Every rank says whether it is ready; rank 0 adds the real unique id.
  struct Offer {
    int32_t Ready;
    ncclUniqueId Id;
  } Mine{};
  static_assert(sizeof(Offer) == 4 + NCCL_UNIQUE_ID_BYTES);
  std::string Why = L.Error;
  ncclResult_t Status = ncclSystemError;
  if (L.Real && C->Rank == 0)
    if (ncclResult_t R = L.Real->GetUniqueId(&Mine.Id))
      Why = realError(*L.Real, nullptr, "ncclGetUniqueId", Status = R);
  Mine.Ready = Why.empty();
  std::vector<Offer> All(size_t(C->Size));
  if (ncclResult_t R = fromCclc(cclcAllGather(&Mine, All.data(), sizeof Mine, cclcUint8, C->Comm,
                                              nullptr),
                                C->Comm))
    return R;
  auto Unready = std::find_if(All.begin(), All.end(), [](const Offer &O) { return !O.Ready; });
  if (Why.empty() && Unready != All.end())
    Why = "rank " + std::to_string(Unready - All.begin()) +
          " could not load or start the real NCCL";
  if (Why.empty()) {
    if (ncclResult_t R = L.Real->CommInitRank(&C->Real, C->Size, All[0].Id, C->Rank)) {
      Why = realError(*L.Real, nullptr, "ncclCommInitRank", Status = R);
      C->Real = nullptr;
    }
    int32_t Made = Why.empty(), AllMade = 0;
    if (ncclResult_t R = fromCclc(
            cclcAllReduce(&Made, &AllMade, 1, cclcInt32, cclcMin, C->Comm, nullptr), C->Comm))
      return R;
    if (Why.empty() && !AllMade)
      Why = "another rank's real NCCL communicator failed";
  }
  if (!Why.empty()) {
    if (C->Real)
      L.Real->CommAbort(C->Real);
    C->Real = nullptr;
    if (L.Required)
      return fail(Status, "CCLC_NCCL_FORWARD: " + Why);
    info(C->Device, "cclc: forwarding nothing (CCLC_NCCL_FORWARD=auto): " + Why);
    return ncclSuccess;
  }
  C->Forward = &*L.Real;
  if (ncclResult_t R = fromCclc(cclcCommSetGpuFallback(C->Comm, 0), C->Comm))
    return R;
  info(C->Device, "cclc: comm " + address(C) + " rank " + std::to_string(C->Rank) +
                      " forwards the calls cclc cannot serve to " + L.Real->Path);
  return ncclSuccess;
}

bool forwards(const ncclComm *C) { return C->Forward != nullptr; }

ncclResult_t forward(ncclComm *C, const std::string &Kind, const char *Why, const RealCall &Call) {
  const RealNccl &L = *C->Forward;
  infoOnce(C->Device, Kind + " on the real NCCL",
           "cclc: " + Kind + " runs on the real NCCL (" + L.Path + "): " + Why);
  ncclResult_t R = Call(L, C->Real);
  return R == ncclSuccess ? R : fail(R, realError(L, C->Real, Kind, R));
}

ncclResult_t endForwarding(ncclComm *C, RealEnd How) {
  if (!C->Real)
    return ncclSuccess;
  const RealNccl &L = *C->Forward;
  ncclComm_t Real = C->Real;
  if (How != RealEnd::Finalize)
    C->Real = nullptr;
  const char *Call = How == RealEnd::Finalize  ? "ncclCommFinalize"
                     : How == RealEnd::Destroy ? "ncclCommDestroy"
                                               : "ncclCommAbort";
  ncclResult_t R = How == RealEnd::Finalize  ? L.CommFinalize(Real)
                   : How == RealEnd::Destroy ? L.CommDestroy(Real)
                                             : L.CommAbort(Real);
  return R == ncclSuccess ? R : fail(R, realError(L, nullptr, Call, R));
}

ncclResult_t forwardedAsyncError(ncclComm *C, ncclResult_t *Async) {
  *Async = ncclSuccess;
  if (!C->Real)
    return ncclSuccess;
  const RealNccl &L = *C->Forward;
  if (ncclResult_t R = L.CommGetAsyncError(C->Real, Async))
    return fail(R, realError(L, C->Real, "ncclCommGetAsyncError", R));
  if (*Async != ncclSuccess && *Async != ncclInProgress)
    fail(*Async, realError(L, C->Real, "communicator", *Async));
  return ncclSuccess;
}

} // namespace cclc::nccl
