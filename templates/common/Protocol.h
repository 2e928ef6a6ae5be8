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
//   write. The first line carries the size word in place of data. It moves
//   twice the bytes, so it serves small messages.
//
// Line stores are 16-byte vector stores, which each half of reaches memory
// whole (the property NCCL's LL relies on); a line whose halves disagree
// is read again. The flags of message n are n's low 32 bits XOR two
// constants, so the lines of older messages in the slot, or zeroed
// memory, never pass for n's, and data left by a simple message passes
// only by holding both flags at once.
//
// On the host a message that leaves room in its slot already carries its
// flag in its last line (host/Connection.h's trailer) and the sender's
// stores reach the receiver in order (x86's TSO), so a flag per line would
// only double the bytes: host executors run LL steps as simple ones.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "common/HostDevice.h"

#include <cstddef>
#include <cstdint>

namespace cclc::kern {

/// The protocols a step's messages may use.
enum class Protocol : uint8_t { Simple, LL };

/// Bytes of one LL line, and bytes of message each carries.
inline constexpr size_t LLLineBytes = 16;
inline constexpr size_t LLLinePayload = 8;
/// The largest message an LL step sends by LL: larger ones go by the
/// simple protocol, which both ends decide alike from the size they expect.
/// Executors stage an LL message in a block of this size.
inline constexpr size_t LLMaxBytes = 4096;

/// Bytes an LL message of Bytes bytes fills in its slot: a header line and
/// a line per 8 bytes.
CCLC_HD constexpr size_t llSlotBytes(size_t Bytes) {
  return (1 + (Bytes + LLLinePayload - 1) / LLLinePayload) * LLLineBytes;
}

/// Whether a message of Bytes bytes of an LL step goes by LL through slots
/// of SlotBytes; both ends of a message decide alike.
CCLC_HD constexpr bool llCarries(size_t Bytes, size_t SlotBytes) {
  return Bytes <= LLMaxBytes && llSlotBytes(Bytes) <= SlotBytes;
}

/// The two flags of the lines of message number Seq (its counter value
/// plus one, never zero).
struct LLFlags {
  uint32_t First, Second;
  CCLC_HD static LLFlags of(uint64_t Seq) {
    return {uint32_t(Seq) ^ 0x9e3779b9u, uint32_t(Seq) ^ 0x7f4a7c15u};
  }
};

} // namespace cclc::kern
