//===- LinkSetup.h - The steps every transport setup shares -----*- C++ -*-===//
//
// A rank connects to its peers in the same steps whatever memory its FIFOs
// live in (process memory for host executors; device memory, or mapped
// pinned host memory, for GPU kernels): the links are grouped by peer and
// each peer is given one transport; every pair of ranks exchanges a
// description of its links over the bootstrap and checks that both sides
// agree on the channels, the FIFO shape and the transport; a same-host
// transport hands the memory the receiver made (a shared-memory segment's
// name, a CUDA IPC handle) to the sender inside that description, and the
// sender confirms that it mapped it; TCP links open their sockets and give
// them to a proxy thread. LinkSetup is those steps, so that the host and the
// GPU connections differ only in where they put the FIFOs.
//
// A plan's setup is collective: every rank takes part, in the same order.
// Point-to-point connections are made at a pair's first message, with only
// the ranks of the links taking part; SetupScope keeps the tags of the two
// kinds apart.
//
// Every wait goes through the bootstrap and so ends within its timeout.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "host/Connection.h"
#include "runtime/bootstrap/Bootstrap.h"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

namespace cclc::net {

class TcpProxy;

/// How a rank reaches a peer. Shm and CudaIpc are the same-host transports
/// of host memory and of device memory.
enum class TransportKind : uint32_t { Shm, Tcp, CudaIpc };

/// "shm", "tcp" or "cuda-ipc".
const char *transportName(TransportKind Kind);

/// The transport this rank uses towards Peer: SameHost when both run on one
/// host, else TCP. CCLC_TRANSPORT=tcp forces TCP, so that it can be tested
/// on one host; CCLC_TRANSPORT=shm forces the same-host transport.
TransportKind chooseTransport(const Bootstrap &B, int Peer,
                              TransportKind SameHost = TransportKind::Shm);

/// One direction of one channel to or from one peer.
struct Link {
  int Peer;
  int Channel;
};

/// Who takes part in a setup, which decides where its tags come from.
enum class SetupScope {
  /// Every rank of the job, each setting up in the same order (a plan's
  /// links): one number for the setup, Bootstrap::nextSequence().
  Collective,
  /// This rank and the peers of its links only (the connections of
  /// point-to-point calls, made at a pair's first message): a number per
  /// pair, Bootstrap::nextPairSequence(), in a tag space of its own.
  Pairs,
};

/// The shape of every FIFO; it must be the same on every rank.
struct LinkOptions {
  uint32_t NumSlots = 8;
  size_t SlotBytes = size_t(1) << 17;
};

/// "rank 3", as every transport message names ranks.
std::string rankName(int Rank);

/// What a rank and one of its peers use between them.
struct PeerLinks {
  TransportKind Kind = TransportKind::Shm;
  std::vector<int> Sends, Recvs; ///< Channels, sorted.
  /// Bytes telling the peer where this rank receives from it (same-host
  /// transports fill it before describe()), and what the peer told this
  /// rank (filled by describe()).
  std::string Offer, PeerOffer;
  /// The TCP sockets of the pair, as many as the lower rank asked for.
  uint32_t NumSockets = 0;
  /// Keeps the tags of this setup's messages and sockets between the pair
  /// apart from those of the pair's other setups.
  uint32_t Sequence = 0;
};

/// "cclclink" and a version.
constexpr uint32_t DescriptionMagic = 0x6c'6e'6b'01u;

/// What a rank tells each peer about the links between them, as the first
/// message of describe(); the channel lists (int32 each, sends then
/// receives) and the offer follow it in a second message, whose size the
/// receiver checks against its own links before it allocates anything.
struct Description {
  uint32_t Magic = DescriptionMagic;
  TransportKind Kind = TransportKind::Shm;
  uint32_t NumSlots = 0;
  uint32_t NumSockets = 0;
  uint64_t SlotBytes = 0;
  uint32_t NumSends = 0;
  uint32_t NumRecvs = 0;
  uint32_t OfferBytes = 0;
  uint32_t Reserved = 0;
};

/// The first reason a rank's connections stopped: executors and the proxy
/// thread may each report one, and the earliest explains the others.
class FailureCause {
public:
  /// Keeps Cause unless a cause was recorded before.
  void record(const std::string &Cause);
  /// The recorded cause; empty while none.
  std::string get() const;

private:
  mutable std::mutex Lock;
  std::string Cause;
};

class LinkSetup {
public:
  /// Groups Sends and Recvs by peer, rejecting links no job of B's size has,
  /// gives each peer chooseTransport(B, Peer, SameHost), and draws the
  /// setup's tags as Scope says.
  LinkSetup(Bootstrap &B, std::span<const Link> Sends, std::span<const Link> Recvs,
            const LinkOptions &Options, TransportKind SameHost,
            SetupScope Scope = SetupScope::Collective);

  std::map<int, PeerLinks> &peers() { return Peers; }
  std::map<int, TransportKind> kinds() const;
  /// One past the highest channel of any link; 0 without links.
  int numChannels() const;

  /// Tells every peer this rank's links and Offer, receives theirs into
  /// PeerOffer, and checks that both sides agree.
  void describe();

  /// What a same-host transport does for one peer at a step of attach().
  using PeerStep = std::function<void(int Peer, PeerLinks &P)>;
  /// For each same-host peer this rank sends to, Map(Peer, P) maps the
  /// memory P.PeerOffer names and the peer is told so; then, for each
  /// same-host peer it receives from, waits for that word and calls
  /// Mapped(Peer, P) (when given), which may drop what only the mapping
  /// needed.
  void attach(const PeerStep &Map, const PeerStep &Mapped = {});

  /// A FIFO of the shape of the setup's options for one TCP link, in memory
  /// the proxy thread reaches, counters initialised.
  using FifoMaker = std::function<host::Fifo(int Peer, int Channel, bool Send)>;
  /// Makes the FIFOs of every TCP link with NewFifo, opens the sockets of
  /// every TCP peer and starts a proxy thread carrying them, which stops
  /// when Abort is raised, telling the peers Cause() when given, reports a
  /// failure through Fail, and never sleeps while Busy (when given) is
  /// nonzero. Null when no peer uses TCP.
  std::unique_ptr<TcpProxy> connectTcp(const FifoMaker &NewFifo, const std::atomic<uint32_t> &Abort,
                                       std::function<void(const std::string &)> Fail,
                                       const std::atomic<uint32_t> *Busy = nullptr,
                                       std::function<std::string()> Cause = {});

private:
  Bootstrap &B;
  int Rank;
  LinkOptions Options;
  SetupScope Scope;
  std::map<int, PeerLinks> Peers;
};

} // namespace cclc::net
