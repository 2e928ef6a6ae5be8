//===- LinkSets.h - Transports shared by algorithms -------------*- C++ -*-===//
//
// Every algorithm runs on connections to the peers it exchanges messages
// with, on the channels it uses, and no others. Connecting is collective, so
// every rank must decide alike whether an algorithm needs new connections:
// the decision looks at the links of the whole schedule (every rank's), which
// all ranks hold, never at one rank's own. An algorithm whose links are all
// among an existing set's, with FIFOs at least as large, shares that set;
// any other gets a set of its own.
//
// The host's connections (net::Connections) and the GPU's are kept apart,
// since their FIFOs live in different memory, but are shared by the same
// rule; ConnectionSets is that rule for either kind.
//
// Point-to-point calls are not collective: a pair of ranks connects at its
// first message, on channel 0 both ways, and the other ranks take no part.
// Those connections are the host's too, kept beside the sets and stopped
// with them.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/transport/Transport.h"

#include "plan/Program.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <tuple>
#include <vector>

namespace cclc::runtime {

using plan::LinkSet;
using plan::linksOf;
/// Every pair of distinct ranks among NRanks, both ways, on channels below
/// NChannels: for kernels whose schedule the runtime does not have.
LinkSet allLinks(int NRanks, int NChannels);

/// The FIFO shape an algorithm of Grid needs: the transports' default, with
/// at least the BufferSlots its schedule was verified with and slots that
/// hold its largest message of any element type.
net::LinkOptions linkOptionsFor(const kern::GridShape &Grid, int32_t BufferSlots);

/// The shape of the host FIFOs of an algorithm of Shape whose FIFOs need
/// Options and whose size window ends at MaxBytes: where the window bounds
/// its messages below Options' slot, the same memory in more, smaller
/// slots that hold its largest message and trailer, at most
/// plan::MaxBufferSlots. A rank that only sends on a link (a reduce's
/// leaves, a broadcast's root) then runs that many calls ahead of its
/// receiver before it waits, so that where ranks outnumber cores a receiver
/// given the core takes many calls at once (4 ranks on 2 cores: a stream of
/// 4-byte broadcasts took 1.1-1.3 us a call with 8 slots, 0.9-1.2 with 16,
/// 0.5-0.7 with 64). The memory stays: it is reserved when a FIFO is made.
/// GPU FIFOs keep Options, since a kernel's sender is not descheduled.
net::LinkOptions hostLinkOptions(const net::LinkOptions &Options,
                                 const kern::ProgramShape &Shape,
                                 std::optional<uint64_t> MaxBytes);

/// Whether some rank sends on a link of Links and receives on none: it
/// finishes calls without waiting for anyone (a broadcast's root, a
/// reduce's leaves), so it runs as many calls ahead of its receivers as its
/// FIFOs have slots; in an exchange every rank waits for a peer each call.
bool someRankOnlySends(const LinkSet &Links);

/// The largest call that, where waits yield (net::waitsYieldAnywhere: the
/// ranks share cores), runs on FIFOs shaped for calls of at most this size
/// (hostLinkOptions) even when its algorithm's window holds larger ones (a
/// binomial broadcast serves up to 256 KiB at 4 ranks, so its own FIFOs
/// keep 8 slots of 128 KiB). A stream of 4-byte broadcasts at 4 ranks on 2
/// cores took 1.0-1.6 us a call on 8 slots and 0.5-0.8 on 64; with a core
/// per rank the slots made no difference, and a second connection set
/// costs its setup and a publication of every call's stamp, so ranks whose
/// waits do not yield connect none, nor do algorithms in which no rank
/// only sends (someRankOnlySends).
constexpr uint64_t SmallCallBytes = 4096;

/// True when connections made for Have with HaveOptions carry every link of
/// Need with FIFOs of at least NeedOptions' shape.
bool covers(const LinkSet &Have, const net::LinkOptions &HaveOptions, const LinkSet &Need,
            const net::LinkOptions &NeedOptions);

/// Rank's part of Links: the links it sends on and those it receives on.
struct RankLinks {
  std::vector<net::Link> Sends, Recvs;
};
RankLinks rankLinks(const LinkSet &Links, int Rank);

/// The connection sets of one kind. Conn has abort(Cause) and failure().
template <class Conn> class ConnectionSets {
public:
  /// One set of connections and the FIFO shape they have.
  struct Set {
    LinkSet Links;
    net::LinkOptions Options;
    std::unique_ptr<Conn> Net;
  };
  /// Connects this rank's part of a set (collective, may wait for the peers).
  using Connect = std::function<std::unique_ptr<Conn>(const RankLinks &Mine,
                                                      const net::LinkOptions &Options)>;

  ConnectionSets(int Rank, Connect Make) : Rank(Rank), Make(std::move(Make)) {}

  /// A set that carries every link of Links with FIFOs of at least Options'
  /// shape, connecting a new one when none does. Collective: every rank
  /// calls it with the same arguments in the same order.
  const Set &connect(const LinkSet &Links, const net::LinkOptions &Options) {
    std::unique_lock<std::mutex> Guard(Lock);
    for (Set &S : Sets)
      if (covers(S.Links, S.Options, Links, Options))
        return S;
    // Connecting waits for the peers; abort() reaches it through the
    // bootstrap, so it must not wait for this lock.
    Guard.unlock();
    std::unique_ptr<Conn> Net = Make(rankLinks(Links, Rank), Options);
    Guard.lock();
    return Sets.emplace_back(Set{Links, Options, std::move(Net)});
  }

  /// Keeps Net, connections made outside the sets, so that abort() and
  /// failure() cover them too.
  Conn &keep(std::unique_ptr<Conn> Net) {
    std::lock_guard<std::mutex> Guard(Lock);
    return *Kept.emplace_back(std::move(Net));
  }

  /// Stops every wait on every set and kept connection, here and at the
  /// peers, recording Cause. Safe from any thread.
  void abort(const std::string &Cause) {
    forEach([&](Conn &Net) { Net.abort(Cause); });
  }

  /// Calls Fn(Conn &) on every set's and kept connection, under the lock.
  template <class F> void forEach(F &&Fn) {
    std::lock_guard<std::mutex> Guard(Lock);
    for (Set &S : Sets)
      Fn(*S.Net);
    for (std::unique_ptr<Conn> &Net : Kept)
      Fn(*Net);
  }

  /// Calls Fn(Conn &) on every set's connection (not the kept ones), under
  /// the lock.
  template <class F> void forEachSet(F &&Fn) {
    std::lock_guard<std::mutex> Guard(Lock);
    for (Set &S : Sets)
      Fn(*S.Net);
  }

  /// The first failure any set or kept connection recorded or heard of;
  /// empty when none did.
  std::string failure() const {
    std::lock_guard<std::mutex> Guard(Lock);
    for (const Set &S : Sets)
      if (std::string Cause = S.Net->failure(); !Cause.empty())
        return Cause;
    for (const std::unique_ptr<Conn> &Net : Kept)
      if (std::string Cause = Net->failure(); !Cause.empty())
        return Cause;
    return {};
  }

private:
  int Rank;
  Connect Make;
  /// Guards Sets and Kept against abort() from another thread.
  mutable std::mutex Lock;
  /// Stable addresses: connect() hands out references.
  std::deque<Set> Sets;
  std::vector<std::unique_ptr<Conn>> Kept;
};

/// The host's connection sets, and its point-to-point connections.
class LinkSets : public ConnectionSets<net::Connections> {
public:
  explicit LinkSets(net::Bootstrap &Boot);

  /// Connects this rank with every rank of Peers (other ranks it has no
  /// point-to-point connections with yet), in one setup in which only those
  /// peers take part, each in a setup of its own that names this rank. One
  /// setup for all: connecting pair after pair, in each rank's own order,
  /// could wait in a cycle (a for b, b for c, c for a).
  void connectPairs(std::span<const int> Peers);
  /// Begins a collective call on every set, so that a peer stalled on this
  /// rank on any of them sees which call this rank makes (CallBoard.h).
  /// Point-to-point connections carry no calls.
  void beginCall(const kern::CallStamp &Stamp) {
    forEachSet([&](net::Connections &Net) { Net.beginCall(Stamp); });
  }
  /// The point-to-point connections with Peer; null before connectPairs
  /// made them.
  net::Connections *pair(int Peer) const { return Pairs[size_t(Peer)]; }

private:
  /// With CCLC_DEBUG=INFO, how Net's large messages travel to each peer,
  /// once per peer.
  void logSingleCopy(const net::Connections &Net);

  net::Bootstrap &Boot;
  /// The sets' call boards, one per peer, so that a call is published once
  /// per peer rather than once per set.
  net::SharedBoards Boards;
  /// By peer.
  std::vector<net::Connections *> Pairs;
  bool Info;
  std::set<int> Logged;
};

} // namespace cclc::runtime
