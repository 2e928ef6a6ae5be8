//===- Transport.cpp - A rank's connections to its peers ------------------===//

#include "runtime/transport/Transport.h"

#include "runtime/transport/shm/SharedBuffers.h"
#include "runtime/transport/shm/ShmTransport.h"
#include "runtime/transport/tcp/TcpTransport.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <sched.h>
#include <set>
#include <string_view>
#include <thread>
#include <vector>

namespace cclc::net {

namespace {

/// The value of the environment variable Name, a number of Unit in [0,
/// Most]; Default when it is unset or empty. Throws NetError naming it when
/// it is malformed.
long long numberFromEnvironment(const char *Name, long long Default, long long Most,
                                const char *Unit) {
  const char *Env = std::getenv(Name);
  if (!Env || !*Env)
    return Default;
  char *End = nullptr;
  errno = 0;
  long long N = std::strtoll(Env, &End, 10);
  if (*End || errno || N < 0 || N > Most)
    throw NetError(std::string(Name) + "=" + Env + " is not a number of " + Unit + " in [0, " +
                   std::to_string(Most) + "]");
  return N;
}

/// CCLC_SPIN_US: how long a wait polls for its peer before it sleeps until
/// the peer moves. Polling answers fastest, but a rank waiting for a peer
/// that computes, or for one that shares its core, would burn the core
/// the others need; a sleep and its wake-up cost a few microseconds, little
/// against a wait already this long.
std::chrono::microseconds waitPatience() {
  return std::chrono::microseconds(
      numberFromEnvironment("CCLC_SPIN_US", 100, 60'000'000, "microseconds"));
}

/// CCLC_SINGLE_COPY: the smallest message a shared-memory link moves with
/// one copy, the sender writing it straight into the receiver's buffer,
/// rather than two through the FIFO's slot; 0 for never. A system call per
/// message costs more than it saves below a few tens of KiB.
size_t singleCopyMin() {
  return size_t(numberFromEnvironment("CCLC_SINGLE_COPY", 64 << 10, 1ll << 40, "bytes"));
}

} // namespace

bool waitsYield(const Bootstrap &B) {
  if (const char *Env = std::getenv("CCLC_WAIT_YIELD"); Env && *Env) {
    if (std::string_view(Env) != "0" && std::string_view(Env) != "1")
      throw NetError(std::string("CCLC_WAIT_YIELD=") + Env + " is neither 0 nor 1");
    return *Env == '1';
  }
  int Local = 0;
  for (int R = 0; R < B.size(); ++R)
    Local += B.hostId(R) == B.hostId(B.rank());
  cpu_set_t Cores;
  CPU_ZERO(&Cores);
  int NCores = ::sched_getaffinity(0, sizeof Cores, &Cores) == 0
                   ? CPU_COUNT(&Cores)
                   : int(std::thread::hardware_concurrency());
  return NCores <= 0 || Local > NCores;
}

bool waitsYieldAnywhere(Bootstrap &B) {
  std::vector<uint8_t> Yields(size_t(B.size()));
  Yields[size_t(B.rank())] = waitsYield(B);
  B.allgather(Yields.data(), 1);
  return std::find(Yields.begin(), Yields.end(), 1) != Yields.end();
}

Connections::Connections(Bootstrap &B, std::span<const Link> Sends, std::span<const Link> Recvs,
                         const LinkOptions &Options, SetupScope Scope, SharedBoards *Shared)
    : Rank(B.rank()), Timeout(B.timeout()), Patience(waitPatience()), Yields(waitsYield(B)),
      SingleCopyMin(singleCopyMin()) {
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
      LocalAbort, [this](const std::string &Cause) { abort(Cause); }, nullptr,
      [this] { return failure(); });
  // Last, so that Shared never keeps a board of connections that failed.
  shareBoards(Shared);
}

Connections::~Connections() { Proxy.reset(); }

void Connections::shareBoards(SharedBoards *Shared) {
  for (size_t I = 0; I < Ends.size(); ++I) {
    const SegmentEnd &E = Ends[I];
    const bool BothWays = std::count_if(Ends.begin(), Ends.end(), [&](const SegmentEnd &O) {
                            return O.Peer == E.Peer;
                          }) == 2;
    if (!Shared || (!Shared->find(E.Peer) && (!BothWays || E.Made == (Rank < E.Peer)))) {
      Published.push_back(&Boards[I]);
      if (Shared)
        Shared->add(E.Peer, &Boards[I]);
    }
  }
  for (size_t I = 0; I < Ends.size(); ++I)
    Ends[I].Wait->Stall = Shared ? Shared->find(Ends[I].Peer) : &Boards[I];
}

const host::Waiter *Connections::addWaiter(const std::atomic<uint32_t> &Abort,
                                           std::chrono::microseconds Patience,
                                           const host::StallCheck *Stall) {
  return &Waiters.emplace_back(host::Waiter{&Abort, Timeout, Patience, Stall, Yields});
}

const host::Waiter *Connections::addSegmentEnd(int Peer, int Side) {
  Boards.emplace_back(Segments.back()->boardMemory(), Side, &Call);
  addWaiter(Segments.back()->abortWord(), Patience);
  Ends.push_back({Peer, /*Made=*/Side == 0, &Waiters.back()});
  return &Waiters.back();
}

void Connections::beginCall(const kern::CallStamp &Stamp) {
  Call = Stamp;
  for (CallBoard *Board : Published)
    Board->publish(Stamp);
}

void Connections::createSegments(LinkSetup &Setup, const LinkOptions &Options,
                                 std::map<int, ShmSegment *> &Created) {
  for (auto &[Peer, P] : Setup.peers()) {
    if (P.Kind != TransportKind::Shm || P.Recvs.empty())
      continue;
    ShmSegment *Seg = Segments
                          .emplace_back(ShmSegment::create(ShmSegment::uniqueName(Rank, Peer),
                                                           uint32_t(P.Recvs.size()),
                                                           Options.NumSlots, Options.SlotBytes,
                                                           SingleCopyMin))
                          .get();
    Created[Peer] = Seg;
    P.Offer = Seg->name();
    const host::Waiter *W = addSegmentEnd(Peer, /*Side=*/0);
    SenderBuffers *Reads =
        (SenderMemory[Peer] = std::make_unique<SenderBuffers>([Seg] { return Seg->senderProcess(); }))
            .get();
    for (uint32_t I = 0; I < P.Recvs.size(); ++I) {
      host::Inbox &In = Ins[{Peer, P.Recvs[I]}] = host::Inbox{Seg->fifo(I), Peer, W, &Call};
      In.DirectMin = SingleCopyMin;
      In.Shared = &SharedBuffers::process();
      In.SenderMemory = Reads;
    }
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
  const host::Waiter *W = addSegmentEnd(Peer, /*Side=*/1);
  Seg.introduceSender();
  auto [Pid, WhyNot] = Seg.receiverProcess();
  PeerBuffers *Mapped = nullptr;
  if (Pid) {
    Mapped = (PeerMemory[Peer] = std::make_unique<PeerBuffers>(Pid, Seg.receiverProbe())).get();
    SingleCopy[Peer] = "messages of " + std::to_string(Seg.singleCopyMin()) +
                       " bytes and more go in one copy: " +
                       (Mapped->whyNot().empty()
                            ? "read by it from this rank's buffers from cclcMemAlloc, which it "
                              "maps, where they stay put until the call ends, or written into "
                              "its buffers with memcpy where they come from cclcMemAlloc (this "
                              "process maps them), else with process_vm_writev"
                            : "written into its buffers with process_vm_writev (its buffers "
                              "from cclcMemAlloc cannot be mapped: " +
                                  Mapped->whyNot() + ")");
  } else {
    SingleCopy[Peer] = "every message goes through the FIFO's slots: " + WhyNot;
  }
  for (uint32_t I = 0; I < P.Sends.size(); ++I) {
    host::Outbox &Out = Outs[{Peer, P.Sends[I]}] = host::Outbox{Seg.fifo(I), Peer, W, &Call};
    Out.DirectPid = Pid;
    Out.DirectMin = Seg.singleCopyMin();
    Out.Mapped = Mapped;
    Out.Own = &SharedBuffers::process();
  }
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
  // The cause goes first, so that a peer that sees the word finds it.
  std::string First = Failure.get();
  for (size_t I = 0; I < Segments.size(); ++I) {
    Boards[I].recordCause(First);
    uint32_t Clear = 0;
    Segments[I]->abortWord().compare_exchange_strong(Clear, uint32_t(Rank + 1));
  }
}

std::string Connections::failure() const {
  if (std::string Cause = Failure.get(); !Cause.empty())
    return Cause;
  for (size_t I = 0; I < Segments.size(); ++I)
    if (uint32_t Word = Segments[I]->abortWord().load(std::memory_order_acquire)) {
      // Raised by the segment's other rank: this rank would have recorded a
      // cause of its own.
      std::string Told = Boards[I].peerCause();
      return Told.empty() ? rankName(int(Word) - 1) + " aborted" : Told;
    }
  return {};
}

} // namespace cclc::net
