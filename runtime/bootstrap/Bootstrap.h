//===- Bootstrap.h - How the ranks of a job find each other -------*- C++ -*-===//
//
// NCCL's bootstrap. One process creates a Root: a thread listening on a port
// that serves one job. Its UniqueId (the root's address and a random secret)
// reaches every rank by whatever means the application has (MPI_Bcast, a
// file, fork). Each rank listens on a port of its own, registers that address
// with the root presenting the secret, and learns from the root the address
// of its successor; a ring allgather over the ranks' own sockets then spreads
// every rank's address and host identity. From then on the root is not
// needed: ranks exchange messages directly, on connections opened on demand
// that present the secret too.
//
// Every call that waits takes the bootstrap's timeout and throws NetError
// instead of hanging; abort() stops the waits of other threads early.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/net/Socket.h"

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

namespace cclc::net {

/// The most ranks a job may have. Every rank keeps an address and a host
/// name per rank, and the root a connection per rank: a larger count is
/// refused where it enters (the C API, a registration) rather than
/// allocated.
constexpr int MaxRanks = 1 << 16;

/// What every rank needs to join a job: the root's address and the job's
/// secret. Plain bytes of a fixed size, like ncclUniqueId, so that an
/// application can pass it through any channel it has.
struct UniqueId {
  std::byte Bytes[128];
};

/// The id of a job whose root listens at Root and whose ranks present Secret.
UniqueId makeUniqueId(const SocketAddress &Root, uint64_t Secret);

/// 64 bits from the operating system's random source.
uint64_t randomSecret();

/// The thread that introduces the ranks of one job to each other.
class Root {
public:
  /// Listens on Bind and serves the job of the ranks that present Secret.
  /// Advertise is the address the id tells ranks to connect to; a port of 0
  /// there means the port Bind obtained. The root gives up Timeout after the
  /// first rank registered, telling the ranks that came which did not.
  Root(const SocketAddress &Bind, const SocketAddress &Advertise, uint64_t Secret,
       std::chrono::milliseconds Timeout);
  /// Stops waiting for ranks (a job that completed its registration is
  /// answered first) and joins the thread.
  ~Root();
  Root(const Root &) = delete;
  Root &operator=(const Root &) = delete;

  const UniqueId &id() const { return Id; }
  /// True once the root has answered its job (or given up on it): it
  /// serves nothing more, and destroying it does not wait.
  bool finished() const { return Done.load(std::memory_order_acquire); }

private:
  Listener Listen;
  UniqueId Id;
  uint64_t Secret;
  std::chrono::milliseconds Timeout;
  std::atomic<uint32_t> Stop{0};
  std::atomic<bool> Done{false};
  std::thread Thread;

  void serve();
};

/// A root on this host's interface (findInterface), on a free port, with a
/// random secret.
std::unique_ptr<Root> createRoot(std::chrono::milliseconds Timeout);

/// One rank's view of the job: every rank's address and host, and the
/// connections to its ring neighbours and to the peers it has messaged. Not
/// thread-safe, except abort().
class Bootstrap {
public:
  /// Joins the job of Id as Rank of NRanks (at most MaxRanks); returns once
  /// every rank has joined. Throws NetError when that does not happen
  /// within Timeout.
  static std::unique_ptr<Bootstrap> init(const UniqueId &Id, int Rank, int NRanks,
                                         std::chrono::milliseconds Timeout);
  Bootstrap(const Bootstrap &) = delete;
  Bootstrap &operator=(const Bootstrap &) = delete;

  int rank() const { return Rank; }
  int size() const { return NRanks; }
  std::chrono::milliseconds timeout() const { return Timeout; }
  /// "hostname/boot id": equal for ranks that can share memory.
  const std::string &hostId(int R) const { return Hosts.at(size_t(R)); }

  /// Buf holds BytesPerRank bytes per rank; fills every rank's part with the
  /// one that rank passed in.
  void allgather(void *Buf, size_t BytesPerRank);
  void barrier();

  /// A message to Peer; Tag keeps independent streams to one peer apart.
  /// Tags with the top bit set are the runtime's own.
  void send(int Peer, uint32_t Tag, const void *Data, size_t Bytes);
  /// Receives the next message from Peer with Tag, which must be Bytes long.
  void recv(int Peer, uint32_t Tag, void *Data, size_t Bytes);

  /// For transports: a fresh connection to Peer, or from Peer, that presented
  /// the secret; Tag tells apart the connections a setup opens.
  Socket connectTo(int Peer, uint32_t Tag);
  Socket acceptFrom(int Peer, uint32_t Tag);
  /// A number every rank draws in the same order, so that successive
  /// transport setups keep their tags apart.
  uint32_t nextSequence() { return Sequence++; }
  /// A number this rank and Peer draw in the same order, for setups that
  /// only the two of them (and other such pairs) take part in: the
  /// connections of point-to-point calls, made at a pair's first message.
  /// The other ranks neither take part nor count, so these numbers must not
  /// advance nextSequence().
  uint32_t nextPairSequence(int Peer);

  /// Makes every wait of this bootstrap, in any thread, fail promptly.
  void abort() { Aborted.store(1, std::memory_order_relaxed); }

private:
  Bootstrap(const UniqueId &Id, int Rank, int NRanks, std::chrono::milliseconds Timeout);

  int Rank;
  int NRanks;
  uint64_t Secret = 0;
  std::chrono::milliseconds Timeout;
  std::atomic<uint32_t> Aborted{0};
  Listener Listen;
  Socket Next, Prev;
  std::vector<SocketAddress> Addresses;
  std::vector<std::string> Hosts;
  std::map<std::pair<int, uint32_t>, Socket> Outgoing, Incoming;
  /// Connections that arrived before this rank asked for them.
  std::map<std::tuple<HelloKind, int, uint32_t>, Socket> Early;
  uint32_t Sequence = 0;
  /// By peer.
  std::map<int, uint32_t> PairSequences;

  Deadline deadline() const { return Deadline(Timeout, &Aborted); }
  void checkPeer(int Peer) const;
  /// The connection of Kind from Peer with Tag, accepting (and setting
  /// aside) others until it arrives.
  Socket accept(HelloKind Kind, int Peer, uint32_t Tag, const Deadline &D, const std::string &What);
};

} // namespace cclc::net
