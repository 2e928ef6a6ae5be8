//===- Transport.cpp - A rank's connections to its peers ------------------===//

#include "runtime/transport/Transport.h"

#include "runtime/transport/shm/ShmTransport.h"
#include "runtime/transport/tcp/TcpTransport.h"

#include <cerrno>
#include <cstdlib>
#include <set>

namespace cclc::net {

namespace {

/// CCLC_SPIN_US: how long a wait polls for its peer before it sleeps until
/// the peer moves. Polling answers fastest, but a rank waiting for a peer
/// that computes, or for one that shares its core, would burn the core
/// the others need; a sleep and its wake-up cost a few microseconds, little
/// against a wait already this long.
std::chrono::microseconds waitPatience() {
  constexpr long long Most = 60'000'000;
  const char *Env = std::getenv("CCLC_SPIN_US");
  if (!Env || !*Env)
    return std::chrono::microseconds(100);
  char *End = nullptr;
  errno = 0;
  long long Us = std::strtoll(Env, &End, 10);
  if (*End || errno || Us < 0 || Us > Most)
    throw NetError(std::string("CCLC_SPIN_US=") + Env + " is not a number of microseconds in [0, " +
                   std::to_string(Most) + "]");
  return std::chrono::microseconds(Us);
}

} // namespace

Connections::Connections(Bootstrap &B, std::span<const Link> Sends, std::span<const Link> Recvs,
                         const LinkOptions &Options, SetupScope Scope)
    : Rank(B.rank()), Timeout(B.timeout()), Patience(waitPatience()) {
  LinkSetup Setup(B, Sends, Recvs, Options, TransportKind::Shm, Scope);
  Kinds = Setup.kinds();
  std::map<int, ShmSegment *> Created;
  createSegments(Setup, Options, Created);
  // The segments this rank was offered and did not map go when the setup
  // fails: the receiver that offered one may have died.
  std::set<int> Mapped;
  try {
    Setup.describe();
    Setup.attach(
        [&](int Peer, PeerLinks &P) {
          attachSegment(Peer, P, Options);
          Mapped.insert(Peer);
        },
        // The receiver's copy of what the sender removed once it mapped it.
        [&](int Peer, PeerLinks &) { Created.at(Peer)->unlink(); });
  } catch (...) {
    for (const auto &[Peer, P] : Setup.peers())
      if (P.Kind == TransportKind::Shm && !Mapped.count(Peer))
        ShmSegment::removeOffered(P.PeerOffer, Peer, Rank);
    throw;
  }
  Proxy = Setup.connectTcp(
      [&](int Peer, int Channel, bool Send) { return newTcpFifo(Peer, Channel, Send, Options); },
      LocalAbort, [this](const std::string &Cause) { abort(Cause); });
}

Connections::~Connections() { Proxy.reset(); }

const host::Waiter *Connections::addWaiter(const std::atomic<uint32_t> &Abort,
                                           std::chrono::microseconds Patience) {
  return &Waiters.emplace_back(host::Waiter{&Abort, Timeout, Patience});
}

void Connections::createSegments(LinkSetup &Setup, const LinkOptions &Options,
                                 std::map<int, ShmSegment *> &Created) {
  for (auto &[Peer, P] : Setup.peers()) {
    if (P.Kind != TransportKind::Shm || P.Recvs.empty())
      continue;
    ShmSegment *Seg = Segments
                          .emplace_back(ShmSegment::create(ShmSegment::uniqueName(Rank, Peer),
                                                           uint32_t(P.Recvs.size()),
                                                           Options.NumSlots, Options.SlotBytes))
                          .get();
    Created[Peer] = Seg;
    P.Offer = Seg->name();
    const host::Waiter *W = addWaiter(Seg->abortWord(), Patience);
    for (uint32_t I = 0; I < P.Recvs.size(); ++I)
      Ins[{Peer, P.Recvs[I]}] = host::Inbox{Seg->fifo(I), Peer, W, &Call};
  }
}

void Connections::attachSegment(int Peer, const PeerLinks &P, const LinkOptions &Options) {
  if (!ShmSegment::isNameFor(P.PeerOffer, Peer, Rank))
    throw NetError(rankName(Peer) + " offered " + rankName(Rank) +
                   " a shared memory segment that no rank of this runtime names; the ranks run "
                   "different builds");
  ShmSegment &Seg = *Segments.emplace_back(ShmSegment::attach(P.PeerOffer, uint32_t(P.Sends.size()),
                                                              Options.NumSlots, Options.SlotBytes));
  // Both sides have mapped the segment: its name is no longer needed.
  ShmSegment::removeOffered(P.PeerOffer, Peer, Rank);
  const host::Waiter *W = addWaiter(Seg.abortWord(), Patience);
  for (uint32_t I = 0; I < P.Sends.size(); ++I)
    Outs[{Peer, P.Sends[I]}] = host::Outbox{Seg.fifo(I), Peer, W, &Call};
}

host::Fifo Connections::newTcpFifo(int Peer, int Channel, bool Send, const LinkOptions &Options) {
  // The proxy thread polls these FIFOs, and sleeps in poll() on its sockets
  // alone once idle, so a rank that slept on them would wake only when the
  // proxy's nap ends: the ends of a TCP link poll.
  if (!TcpWait)
    TcpWait = addWaiter(LocalAbort, std::chrono::microseconds::max());
  size_t Bytes = host::Fifo::bytesFor(Options.NumSlots, Options.SlotBytes);
  auto &Mem = LocalFifos.emplace_back(new CacheLine[(Bytes + 63) / 64]);
  host::Fifo Q = host::Fifo::place(Mem.get(), Options.NumSlots, Options.SlotBytes, /*Init=*/true);
  if (Send)
    Outs[{Peer, Channel}] = host::Outbox{Q, Peer, TcpWait, &Call};
  else
    Ins[{Peer, Channel}] = host::Inbox{Q, Peer, TcpWait, &Call};
  return Q;
}

host::Outbox &Connections::out(int Peer, int Channel) {
  auto It = Outs.find({Peer, Channel});
  if (It == Outs.end())
    throw NetError(rankName(Rank) + " has no link to send to " + rankName(Peer) + " on channel " +
                   std::to_string(Channel) + "; the plan's link list omits it");
  return It->second;
}

host::Inbox &Connections::in(int Peer, int Channel) {
  auto It = Ins.find({Peer, Channel});
  if (It == Ins.end())
    throw NetError(rankName(Rank) + " has no link to receive from " + rankName(Peer) +
                   " on channel " + std::to_string(Channel) + "; the plan's link list omits it");
  return It->second;
}

TransportKind Connections::transport(int Peer) const {
  auto It = Kinds.find(Peer);
  if (It == Kinds.end())
    throw NetError(rankName(Rank) + " has no link with " + rankName(Peer));
  return It->second;
}

void Connections::abort(const std::string &Cause) {
  Failure.record(Cause);
  LocalAbort.store(1, std::memory_order_release);
  for (auto &Seg : Segments) {
    uint32_t Clear = 0;
    Seg->abortWord().compare_exchange_strong(Clear, uint32_t(Rank + 1));
  }
}

std::string Connections::failure() const {
  if (std::string Cause = Failure.get(); !Cause.empty())
    return Cause;
  for (const auto &Seg : Segments)
    if (uint32_t Word = Seg->abortWord().load(std::memory_order_acquire))
      return rankName(int(Word) - 1) + " aborted";
  return {};
}

} // namespace cclc::net
