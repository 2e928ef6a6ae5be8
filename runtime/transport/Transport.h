//===- Transport.h - A rank's connections to its peers ------------*- C++ -*-===//
//
// Connections gives an executor the host::Links it runs kernels on: one
// FIFO per (peer, channel, direction) that the rank's plan uses, and no
// others. Each peer is reached by one transport, chosen from the host
// identities the bootstrap spread: POSIX shared memory on the same host, TCP
// across hosts (CCLC_TRANSPORT=shm|tcp forces one, so that TCP can be tested
// on one host). Either way the executor sees the same Outbox and Inbox.
//
// Setting up a plan's connections is collective: every rank with links
// constructs its Connections in the same order. Point-to-point connections
// are set up by the ranks of their links alone (SetupScope::Pairs). Either
// way each pair of ranks checks that they agree on the channels between
// them, the slot shape and the transport.
// Those steps are LinkSetup's, which the GPU connections take too; this
// class adds where host FIFOs live.
//
// Failures never hang. A wait that outlasts the bootstrap's timeout throws
// host::CommError. abort() records a cause and raises the rank's abort flag
// and the abort word of every shared-memory segment it uses; an executor
// that catches CommError should call it, so that its peers stop at once. A
// TCP peer that dies or aborts is noticed by the proxy thread, which aborts
// the same way and closes its sockets, spreading the failure further.
//
// A call's first message on each FIFO carries the call's stamp
// (beginCall(), host/Connection.h), so that ranks that make different calls
// on the same connections fail instead of mixing their data.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "host/Connection.h"
#include "host/Kernel.h"
#include "runtime/bootstrap/Bootstrap.h"
#include "runtime/transport/LinkSetup.h"
#include "runtime/transport/shm/CallBoard.h"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace cclc::net {

class PeerBuffers;
class SenderBuffers;
class ShmSegment;
class TcpProxy;

/// Whether waits on shared-memory FIFOs yield their core between polls
/// (host::Waiter::Yields): CCLC_WAIT_YIELD (0 or 1) where set, else whether
/// the ranks of B's job on this host outnumber the cores this process may
/// run on, so that a waiting rank lets the one that shares its core run.
/// With a core per rank a yield only delays the discovery of a message.
/// Throws NetError on a malformed CCLC_WAIT_YIELD.
bool waitsYield(const Bootstrap &B);

/// Whether waits yield at some rank of B's job (waitsYield), the same
/// answer at every rank: what the ranks connect may depend on it, and they
/// must connect alike. Collective (an allgather over the bootstrap).
bool waitsYieldAnywhere(Bootstrap &B);

/// The call boards that the connection sets of one communicator share: for
/// each shared-memory peer, the board of one segment of the first set that
/// connects the two ranks (every rank makes the sets in the same order), so
/// that a call is published once per peer however many sets there are, and
/// a wait on any set reads the peer's call there.
class SharedBoards {
public:
  /// Peer's board; null before a set gave it one.
  CallBoard *find(int Peer) const {
    auto It = ByPeer.find(Peer);
    return It == ByPeer.end() ? nullptr : It->second;
  }
  void add(int Peer, CallBoard *Board) { ByPeer.emplace(Peer, Board); }

private:
  std::map<int, CallBoard *> ByPeer;
};

class Connections final : public host::Links {
public:
  /// Connects the FIFOs this rank sends on and receives on, in a setup of
  /// Scope. With Shared, its waits check stalls on the peers' shared boards,
  /// and it publishes calls on those of its boards that it adds there;
  /// without, on every board of its own. Shared outlives the connections.
  Connections(Bootstrap &B, std::span<const Link> Sends, std::span<const Link> Recvs,
              const LinkOptions &Options = {}, SetupScope Scope = SetupScope::Collective,
              SharedBoards *Shared = nullptr);
  /// Sends what the executors posted (TCP), then disconnects.
  ~Connections() override;
  Connections(const Connections &) = delete;
  Connections &operator=(const Connections &) = delete;

  /// Throws NetError for a link the constructor was not given.
  host::Outbox &out(int Peer, int Channel) override;
  host::Inbox &in(int Peer, int Channel) override;

  /// Makes the next call's first message sent on each FIFO carry Stamp, and
  /// the first received on each carry it too or fail with
  /// host::CallMismatch. The runtime stamps each collective call before it
  /// runs.
  /// The stamp is also published to the call boards these connections
  /// publish on (one per shared-memory peer of the communicator, or each
  /// segment's), so that peers stalled on this rank can tell whether it
  /// makes their call (CallBoard.h); the runtime begins each call on every
  /// connection set, whichever the call runs on.
  void beginCall(const kern::CallStamp &Stamp);

  TransportKind transport(int Peer) const;
  /// For each shared-memory peer this rank sends to, how its large messages
  /// travel (single copy, or why not), for CCLC_DEBUG=INFO.
  const std::map<int, std::string> &singleCopy() const { return SingleCopy; }
  /// Stops every wait on these connections, here and at the peers, telling
  /// the shared-memory peers the cause, which should say where it arose
  /// (the peers report it as it is).
  void abort(const std::string &Cause);
  /// What stopped the connections: the first cause recorded here, else the
  /// cause a shared-memory peer that aborted recorded, or at least who it
  /// is; empty while nothing did.
  std::string failure() const;

private:
  int Rank;
  std::chrono::milliseconds Timeout;
  /// How long the waits of shared-memory links poll before they sleep
  /// (CCLC_SPIN_US).
  std::chrono::microseconds Patience;
  /// Whether waits yield their core while they poll (host::Waiter::Yields):
  /// where this host's ranks outnumber the cores (CCLC_WAIT_YIELD).
  bool Yields;
  /// The smallest message sent with a single copy (CCLC_SINGLE_COPY).
  size_t SingleCopyMin;
  std::map<int, std::string> SingleCopy;
  std::atomic<uint32_t> LocalAbort{0};
  FailureCause Failure;
  std::map<int, TransportKind> Kinds;
  /// One for the TCP links, one per segment; stable addresses.
  std::deque<host::Waiter> Waiters;
  const host::Waiter *TcpWait = nullptr;
  std::vector<std::unique_ptr<ShmSegment>> Segments;
  /// For each shared-memory peer this rank writes into, its buffers from
  /// cclcMemAlloc as this process maps them.
  std::map<int, std::unique_ptr<PeerBuffers>> PeerMemory;
  /// For each shared-memory peer this rank receives from, its buffers, for
  /// the messages it leaves there.
  std::map<int, std::unique_ptr<SenderBuffers>> SenderMemory;
  /// Each segment's call board, as this rank's side sees it; stable
  /// addresses, since waiters check stalls with boards. Abort causes go on
  /// every board, calls on those of Published.
  std::deque<CallBoard> Boards;
  std::vector<CallBoard *> Published;
  /// Each segment's peer, whether this rank made it, and its waiter.
  struct SegmentEnd {
    int Peer;
    bool Made;
    host::Waiter *Wait;
  };
  std::vector<SegmentEnd> Ends;
  /// Process memory of the TCP links' FIFOs.
  struct alignas(64) CacheLine {
    std::byte Bytes[64];
  };
  std::vector<std::unique_ptr<CacheLine[]>> LocalFifos;
  /// The call in progress, which every end points to.
  kern::CallStamp Call;
  std::map<std::pair<int, int>, host::Outbox> Outs;
  std::map<std::pair<int, int>, host::Inbox> Ins;
  std::unique_ptr<TcpProxy> Proxy;

  /// The receiver's side of each shared-memory link: a segment per peer,
  /// whose name becomes the offer to the sender.
  void createSegments(LinkSetup &Setup, const LinkOptions &Options,
                      std::map<int, ShmSegment *> &Created);
  /// The sender's side: maps the segment Peer offered.
  void attachSegment(int Peer, const PeerLinks &P, const LinkOptions &Options);
  /// A FIFO of a TCP link, in process memory.
  host::Fifo newTcpFifo(int Peer, int Channel, bool Send, const LinkOptions &Options);
  /// A waiter stopped by Abort that sleeps after Patience, checking its
  /// peer's progress with Stall (may be null) as it sleeps.
  const host::Waiter *addWaiter(const std::atomic<uint32_t> &Abort,
                                std::chrono::microseconds Patience,
                                const host::StallCheck *Stall = nullptr);
  /// A waiter for the segment just added to Segments, shared with Peer,
  /// and its board, this rank on Side; the waiter checks stalls once
  /// shareBoards has chosen the board.
  const host::Waiter *addSegmentEnd(int Peer, int Side);
  /// Chooses, for each segment's waiter, the board it checks stalls on and
  /// the boards calls are published on (see the constructor), adding to
  /// Shared the boards of peers it has none for: where the two ranks send
  /// both ways, the board of the segment the lower rank made.
  void shareBoards(SharedBoards *Shared);
};

} // namespace cclc::net
