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
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/net/Transport.h"

#include "compiler/schedule/Schedule.h"

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <tuple>
#include <vector>

namespace cclc::runtime {

/// (sender, receiver, channel) for every message stream of a schedule.
using LinkSet = std::set<std::tuple<int, int, int>>;

/// Every stream of S.
LinkSet linksOf(const sched::Schedule &S);
/// Every pair of distinct ranks among NRanks, both ways, on channels below
/// NChannels: for kernels whose schedule the runtime does not have.
LinkSet allLinks(int NRanks, int NChannels);

/// The FIFO shape an algorithm of Grid needs: the transports' default, with
/// at least the BufferSlots its schedule was verified with and slots that
/// hold its largest message of any element type.
net::LinkOptions linkOptionsFor(const kern::GridShape &Grid, int32_t BufferSlots);

class LinkSets {
public:
  /// One set of connections and the FIFO shape they have.
  struct Set {
    LinkSet Links;
    net::LinkOptions Options;
    std::unique_ptr<net::Connections> Net;
  };

  explicit LinkSets(net::Bootstrap &Boot) : Boot(Boot) {}

  /// A set that carries every link of Links with FIFOs of at least Options'
  /// shape, connecting a new one when none does. Collective: every rank
  /// calls it with the same arguments in the same order.
  const Set &connect(const LinkSet &Links, const net::LinkOptions &Options);

  /// Stops every wait on every set, here and at the peers, recording Cause.
  /// Safe from any thread.
  void abort(const std::string &Cause);
  /// The first failure any set recorded or heard of; empty when none did.
  std::string failure() const;

private:
  net::Bootstrap &Boot;
  /// Guards Sets against abort() from another thread.
  mutable std::mutex Lock;
  std::deque<Set> Sets;
};

} // namespace cclc::runtime
