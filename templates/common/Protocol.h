//===- Protocol.h - How a message travels through its slot ------*- C++ -*-===//
//
// A plan step says which protocol its messages use (plan/Schedule.h), as
// NCCL picks one per call:
//
// - Simple: the sender fills the slot, then publishes the message's size
//   word and the FIFO's Tail; the receiver waits for Tail, then reads the
//   slot. Every message pays a handshake whose publish must order all of
//   the block's data writes before it (a system-scope fence on a GPU).
// - LL (low latency): every 16-byte line of the slot carries 8 bytes of the
//   message and two copies of the message's flag, {data, flag, data, flag},
//   written by one 16-byte store. A line is whole once both its flags are
//   the message's: the receiver's threads poll their own lines and need no
//   counter, and the sender's need no fence and no barrier before they
//   write. It moves twice the bytes, so it serves small messages.
// - LL128: every 128-byte line carries 120 bytes of the message and one
//   8-byte flag, its last. Eight threads of a warp store a line together,
//   16 bytes each, in one instruction, and eight threads of a receiving
//   warp load it together and read it again until the flag is the
//   message's. It moves 1/15 more bytes than the message, so it serves
//   medium messages at close to the simple protocol's bandwidth without its
//   handshake. As in NCCL, it relies on the 128 bytes a warp stores at once
//   reaching the reader whole, which a GPU's own memory and NVLink give and
//   PCIe does not promise: only FIFOs between such GPUs carry it
//   (cuda/Connection.cuh's WholeLines).
//
// Both line protocols put the message's size word first, in the place of
// its first 8 bytes of data, and stage the message in a block of
// LineStageBytes on either end.
//
// Line stores are 16-byte vector stores, which each half of reaches memory
// whole (the property NCCL's LL relies on); a line whose halves disagree
// is read again. The flags of message n are n's low 32 bits XOR constants
// of each protocol's own, so the lines of older messages in the slot, of
// the other line protocol, or zeroed memory, never pass for n's, and data
// left by a simple message passes only by holding the flags.
//
// On the host a message that leaves room in its slot already carries its
// flag in its last line (host/Connection.h's trailer) and the sender's
// stores reach the receiver in order (x86's TSO), so a flag per line would
// only add bytes: host executors run the line protocols' steps as simple
// ones.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "common/HostDevice.h"

#include <cstddef>
#include <cstdint>

namespace cclc::kern {

/// The protocols a step's messages may use.
enum class Protocol : uint8_t { Simple, LL, LL128 };

/// How a line protocol lays a message out in its slot.
struct LineFormat {
  size_t LineBytes; ///< Bytes of one line.
  size_t Payload;   ///< Bytes of message (or size word) each line carries.
  /// The largest message a step of the protocol sends as lines: larger ones
  /// go by the simple protocol, which both ends decide alike from the size
  /// they expect.
  size_t MaxBytes;
};

/// The line format of P, a line protocol.
CCLC_HD constexpr LineFormat lineFormat(Protocol P) {
  return P == Protocol::LL128 ? LineFormat{128, 120, 16384} : LineFormat{16, 8, 4096};
}
inline constexpr LineFormat LLFormat = lineFormat(Protocol::LL);
inline constexpr LineFormat LL128Format = lineFormat(Protocol::LL128);

/// Bytes of the block an executor stages a line protocol's message in: the
/// largest message either sends as lines.
inline constexpr size_t LineStageBytes = lineFormat(Protocol::LL128).MaxBytes;

/// Bytes a message of Bytes bytes fills in its slot as P's lines: its size
/// word, then its data.
CCLC_HD constexpr size_t lineSlotBytes(Protocol P, size_t Bytes) {
  const LineFormat F = lineFormat(P);
  return (sizeof(uint64_t) + Bytes + F.Payload - 1) / F.Payload * F.LineBytes;
}

/// Whether a message of Bytes bytes of a step of line protocol P goes as
/// lines through slots of SlotBytes (each starting on a line, as the FIFO
/// lays them out, common/Fifo.h); both ends of a message decide alike.
CCLC_HD constexpr bool linesCarry(Protocol P, size_t Bytes, size_t SlotBytes) {
  const LineFormat F = lineFormat(P);
  return Bytes <= F.MaxBytes && SlotBytes % F.LineBytes == 0 &&
         lineSlotBytes(P, Bytes) <= SlotBytes;
}

/// The two flags of the lines of message number Seq (its counter value
/// plus one, never zero).
struct LLFlags {
  uint32_t First, Second;
  CCLC_HD static LLFlags of(uint64_t Seq) {
    return {uint32_t(Seq) ^ 0x9e3779b9u, uint32_t(Seq) ^ 0x7f4a7c15u};
  }
};

/// The flag of the lines of LL128 message number Seq, as the 8 bytes of a
/// line's end hold it: halves that differ from both of LL's flags for every
/// Seq, and are never both zero.
CCLC_HD constexpr uint64_t ll128Flag(uint64_t Seq) {
  return uint64_t(uint32_t(Seq) ^ 0x85ebca6bu) | uint64_t(uint32_t(Seq) ^ 0xc2b2ae35u) << 32;
}

} // namespace cclc::kern
