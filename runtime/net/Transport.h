//===- Transport.h - A rank's connections to its peers ------------*- C++ -*-===//
//
// Connections gives an executor the host::Links it runs kernels on: one
// FIFO per (peer, channel, direction) that the rank's plan uses, and no
// others. Each peer is reached by one transport, chosen from the host
// identities the bootstrap spread: POSIX shared memory on the same host, TCP
// across hosts (CCLC_TRANSPORT=shm|tcp forces one, so that TCP can be tested
// on one host). Either way the executor sees the same Outbox and Inbox.
//
// Setting up is collective: every rank with links constructs its
// Connections in the same order, and each pair of ranks checks that they
// agree on the channels between them, the slot shape and the transport.
//
// Failures never hang. A wait that outlasts the bootstrap's timeout throws
// host::CommError. abort() records a cause and raises the rank's abort flag
// and the abort word of every shared-memory segment it uses; an executor
// that catches CommError should call it, so that its peers stop at once. A
// TCP peer that dies or aborts is noticed by the proxy thread, which aborts
// the same way and closes its sockets, spreading the failure further.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "host/Connection.h"
#include "host/Kernel.h"
#include "runtime/net/Bootstrap.h"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace cclc::net {

class ShmSegment;
class TcpProxy;

enum class TransportKind : uint32_t { Shm, Tcp };

const char *transportName(TransportKind Kind);

/// The transport this rank uses towards Peer: CCLC_TRANSPORT when set, else
/// shared memory when both run on the same host, else TCP.
TransportKind chooseTransport(const Bootstrap &B, int Peer);

/// One direction of one channel to or from one peer.
struct Link {
  int Peer;
  int Channel;
};

/// The shape of every FIFO; it must be the same on every rank.
struct LinkOptions {
  uint32_t NumSlots = 8;
  size_t SlotBytes = size_t(1) << 17;
};

class Connections final : public host::Links {
public:
  /// Connects the FIFOs this rank sends on and receives on.
  Connections(Bootstrap &B, std::span<const Link> Sends, std::span<const Link> Recvs,
              const LinkOptions &Options = {});
  /// Sends what the executors posted (TCP), then disconnects.
  ~Connections() override;
  Connections(const Connections &) = delete;
  Connections &operator=(const Connections &) = delete;

  /// Throws NetError for a link the constructor was not given.
  host::Outbox &out(int Peer, int Channel) override;
  host::Inbox &in(int Peer, int Channel) override;

  TransportKind transport(int Peer) const;
  /// Stops every wait on these connections, here and at the peers.
  void abort(const std::string &Cause);
  /// What stopped the connections: the first cause recorded here, or the
  /// rank that raised a shared abort word; empty while nothing did.
  std::string failure() const;

private:
  struct PeerPlan;

  int Rank;
  std::chrono::milliseconds Timeout;
  std::atomic<uint32_t> LocalAbort{0};
  mutable std::mutex FailureLock;
  std::string Failure;
  std::map<int, TransportKind> Kinds;
  /// One for the TCP links, one per segment; stable addresses.
  std::deque<host::Waiter> Waiters;
  std::vector<std::unique_ptr<ShmSegment>> Segments;
  /// Process memory of the TCP links' FIFOs.
  struct alignas(64) CacheLine {
    std::byte Bytes[64];
  };
  std::vector<std::unique_ptr<CacheLine[]>> LocalFifos;
  std::map<std::pair<int, int>, host::Outbox> Outs;
  std::map<std::pair<int, int>, host::Inbox> Ins;
  std::unique_ptr<TcpProxy> Proxy;

  using Plans = std::map<int, PeerPlan>;

  /// The setup steps, in order.
  void createSegments(Plans &Peers, const LinkOptions &Options);
  void describe(Bootstrap &B, Plans &Peers, uint32_t Sequence, const LinkOptions &Options);
  void attachSegments(Bootstrap &B, Plans &Peers, uint32_t Sequence, const LinkOptions &Options);
  void connectTcp(Bootstrap &B, Plans &Peers, uint32_t Sequence, const LinkOptions &Options);

  const host::Waiter *addWaiter(const std::atomic<uint32_t> &Abort);
  host::Fifo newLocalFifo(const LinkOptions &Options);
};

} // namespace cclc::net
