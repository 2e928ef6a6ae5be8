//===- ProtocolSelection.h - How each step's messages travel ----*- C++ -*-===//
//
// A step's protocol (common/Protocol.h) is a choice per message size, not
// part of an algorithm: the same ring serves 4 bytes by LL and 64 MiB by the
// simple protocol. So algorithms say nothing about it, and this pass, last
// in the pipeline, gives every step that sends or receives the protocol
// that `cclc compile --protocol` or the cost model chose for the plan's
// size window. Steps done by a primitive the algorithm named keep that
// primitive, which decides how their messages travel. Both ends of every
// message, and both halves of every exchange, get the same protocol, so the
// verifier's agreement check holds by construction.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "plan/Schedule.h"

#include <cstddef>
#include <string>

namespace cclc::passes {

struct ProtocolResult {
  sched::Protocol Chosen = sched::Protocol::Simple;
  size_t Steps = 0; ///< Steps given the protocol.
  /// "24 steps by ll" for the statistics line.
  std::string summary() const;
};

/// Whether the pass gives St the plan's protocol: it sends or receives, by
/// no primitive the algorithm named.
bool takesProtocol(const sched::Step &St);

ProtocolResult selectProtocol(sched::Schedule &S, sched::Protocol P);

} // namespace cclc::passes
