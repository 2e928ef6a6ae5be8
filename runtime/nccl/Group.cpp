//===- Group.cpp - ncclGroupStart/ncclGroupEnd: deferred calls -----------===//
//
// NCCL defers every call between ncclGroupStart and the outermost
// ncclGroupEnd and launches them together. cclc's own groups hold sends,
// receives and alltoalls of one communicator, so the shim defers calls
// itself and runs them per communicator at the end: inits, then
// collectives in issue order, then the sends and receives as one cclc group.
// A group that spans several communicators (one thread driving several
// ranks, as after ncclCommInitAll) runs each communicator's calls on a
// thread of its own, since each waits for its peers.
//
//===----------------------------------------------------------------------===//

#include "Shim.h"

#include <algorithm>
#include <thread>

namespace cclc::nccl {

namespace {

struct Deferred {
  ncclComm *Comm;
  Phase When;
  std::function<ncclResult_t()> Call;
};

/// The calling thread's open groups: their depth and what they hold.
struct GroupState {
  int Depth = 0;
  std::vector<Deferred> Held;
};

GroupState &group() {
  thread_local GroupState State;
  return State;
}

/// Runs one communicator's share of a group, in phase order.
ncclResult_t runShare(ncclComm *Comm, const std::vector<const Deferred *> &Share) {
  InFlight Counted(Comm);
  ncclResult_t First = ncclSuccess;
  auto keep = [&](ncclResult_t R) {
    if (First == ncclSuccess)
      First = R;
  };
  for (Phase When : {Phase::Init, Phase::Collective})
    for (const Deferred *D : Share)
      if (D->When == When)
        keep(D->Call());
  bool AnyPeer = std::any_of(Share.begin(), Share.end(),
                             [](const Deferred *D) { return D->When == Phase::PointToPoint; });
  if (!AnyPeer || First != ncclSuccess)
    return First;
  keep(fromCclc(cclcGroupStart(), Comm->Comm));
  for (const Deferred *D : Share)
    if (D->When == Phase::PointToPoint && First == ncclSuccess)
      keep(D->Call());
  // Ending the group runs what it holds, or drops it after a refusal.
  ncclResult_t Ended = fromCclc(cclcGroupEnd(), Comm->Comm);
  keep(Ended);
  return First;
}

ncclResult_t runGroup(std::vector<Deferred> Held) {
  std::vector<ncclComm *> Comms;
  for (const Deferred &D : Held)
    if (std::find(Comms.begin(), Comms.end(), D.Comm) == Comms.end())
      Comms.push_back(D.Comm);
  std::vector<std::vector<const Deferred *>> Shares(Comms.size());
  for (const Deferred &D : Held)
    Shares[std::find(Comms.begin(), Comms.end(), D.Comm) - Comms.begin()].push_back(&D);
  if (Comms.size() == 1)
    return runShare(Comms[0], Shares[0]);
  std::vector<ncclResult_t> Results(Comms.size(), ncclSuccess);
  std::vector<std::string> Errors(Comms.size());
  std::vector<std::thread> Threads;
  for (size_t I = 0; I < Comms.size(); ++I)
    Threads.emplace_back([&, I] {
      Results[I] = runShare(Comms[I], Shares[I]);
      if (Results[I] != ncclSuccess)
        Errors[I] = ncclGetLastError(Comms[I]);
    });
  for (std::thread &T : Threads)
    T.join();
  for (size_t I = 0; I < Comms.size(); ++I)
    if (Results[I] != ncclSuccess)
      return fail(Results[I], Errors[I]);
  return ncclSuccess;
}

} // namespace

ncclResult_t submit(ncclComm *Comm, Phase When, std::function<ncclResult_t()> Call) {
  GroupState &G = group();
  if (G.Depth > 0) {
    G.Held.push_back({Comm, When, std::move(Call)});
    return ncclSuccess;
  }
  std::vector<Deferred> One;
  One.push_back({Comm, When, std::move(Call)});
  return runGroup(std::move(One));
}

} // namespace cclc::nccl

using namespace cclc::nccl;

extern "C" ncclResult_t ncclGroupStart() {
  ++group().Depth;
  return ncclSuccess;
}

extern "C" ncclResult_t ncclGroupEnd() {
  GroupState &G = group();
  if (G.Depth == 0)
    return fail(ncclInvalidUsage, "ncclGroupEnd without an open ncclGroupStart");
  if (--G.Depth > 0)
    return ncclSuccess;
  std::vector<Deferred> Held = std::move(G.Held);
  G.Held.clear();
  if (Held.empty())
    return ncclSuccess;
  return guarded([&] { return runGroup(std::move(Held)); });
}
