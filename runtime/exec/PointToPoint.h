//===- PointToPoint.h - Sends and receives that progress together -*- C++ -*-===//
//
// NCCL's send and receive: a message of any size from one rank to another,
// through the slot FIFOs collectives use (host/Connection.h). The sends and
// receives of a group run at once: runTransfers() goes round the group's
// FIFOs, copying a slot into every outbox with room and out of every inbox
// with a message, until every transfer is done. So a rank can send to and
// receive from many peers at once, whatever order it and its peers issued
// their operations in, without waiting on one peer while another waits on
// it. Transfers on one FIFO (two sends to one peer) run in the group's order.
//
// A message is cut into slots. Each slot's size word holds the bytes of the
// message from that slot on, and the slot carries as many of them as fit:
// the first slot tells the receiver the size of the whole message, so a
// receiver whose buffer has another size fails at once, saying both sizes,
// and writes nothing; a message of 0 bytes is one empty slot. The TCP proxy
// carries the words unchanged.
//
// Waits are bounded as a host::Waiter bounds them: a group that makes no
// progress for its links' timeout, or whose links are aborted, throws
// host::CommError naming the peers it waits for.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "host/Connection.h"

#include <cstddef>
#include <cstdint>
#include <span>

namespace cclc::exec {

/// One send or receive of a group, and how far it got.
struct Transfer {
  /// A send's FIFO and message; Out is null for a receive.
  host::Outbox *Out = nullptr;
  const std::byte *Source = nullptr;
  /// A receive's FIFO and buffer; In is null for a send.
  host::Inbox *In = nullptr;
  std::byte *Target = nullptr;
  size_t Bytes = 0;
  /// The transfer of the group on the same FIFO issued before this one,
  /// which must end before this one starts; -1 when none.
  int32_t After = -1;
  /// Bytes copied so far, and whether the last slot was.
  size_t Moved = 0;
  bool Done = false;

  static Transfer send(host::Outbox &Out, const void *Source, size_t Bytes) {
    return {&Out, static_cast<const std::byte *>(Source), nullptr, nullptr, Bytes};
  }
  static Transfer receive(host::Inbox &In, void *Target, size_t Bytes) {
    return {nullptr, nullptr, &In, static_cast<std::byte *>(Target), Bytes};
  }
};

/// Moves every message of Group, the transfers of rank Rank, and returns
/// once all are done. Throws host::CommError: Mismatch when a peer sends
/// another size than its receive takes, Timeout or Aborted as a Waiter
/// would.
void runTransfers(std::span<Transfer> Group, int Rank);

} // namespace cclc::exec
