//===- CallBoard.h - What the two ranks of a segment tell each other -*- C++ -*-===//
//
// Each side of a shared-memory segment keeps a record in it that the other
// side reads:
//
// - The collective call it is in, and the one before. Ranks that make
//   different calls usually meet at a message whose stamp differs
//   (host/Connection.h), but not always: two ranks that disagree on a
//   reduction's root both wait to receive, and a rank whose call runs on
//   other connections sends nothing where its peers wait. A wait that has
//   outlasted its patience reads its peer's record (a StallCheck) and stops
//   at once when the peer is at the same call number with another stamp, or
//   went on to a later call without sending (or taking) what this rank waits
//   for, instead of at its timeout. The connection sets of a communicator
//   share one board per pair of ranks (net::SharedBoards), to which the
//   runtime publishes every call, whichever set the call runs on.
// - The cause of its abort, so that the ranks stopped by the abort word say
//   what went wrong at its origin (both calls of a mismatch, a timeout, a
//   dead rank), not only who stopped them.
//
// A record has one writer, its side's rank; a call is published under a
// sequence lock, so a reader never mistakes a half-written stamp for
// another call.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "host/Connection.h"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace cclc::net {

class CallBoard final : public host::StallCheck {
public:
  /// Bytes of the two sides' records, a multiple of a cache line.
  static size_t bytes();
  /// Constructs both records in Mem (64-byte aligned, bytes() long), which
  /// exactly one side does before the other attaches.
  static void init(void *Mem);

  /// Views the records at Mem as side Side (0: the receiver that created
  /// the segment, 1: the sender), whose call in progress is *Current.
  CallBoard(void *Mem, int Side, const kern::CallStamp *Current);

  /// Makes S this side's call in progress.
  void publish(const kern::CallStamp &S);
  /// Throws CallMismatch when the other side, Peer, is at this side's call
  /// number with another stamp, or has gone past it while the wait is not
  /// Ready.
  void check(int Peer, bool (*Ready)(const void *), const void *Arg) const override;

  /// Records Cause as why this side aborted, unless a cause was recorded;
  /// its first CauseCapacity bytes are kept.
  void recordCause(std::string_view Cause);
  /// Why the other side aborted; empty when it recorded nothing.
  std::string peerCause() const;

  static constexpr size_t CauseCapacity = 1000;

private:
  struct Record;

  /// The other side's call numbered Seq, or its latest when Seq is 0, if
  /// read whole.
  std::optional<kern::CallStamp> peerCall(uint64_t Seq) const;

  Record *Mine;
  const Record *Theirs;
  const kern::CallStamp *Current;
};

} // namespace cclc::net
