//===- Fifo.h - Where the parts of a slot FIFO lie in memory -----*- C++ -*-===//
//
// A FIFO between two ranks is one block of memory that host code and device
// code may both use: a proxy thread on the host feeds or drains a GPU
// kernel's FIFO in mapped memory, and host code empties FIFOs before a
// kernel uses them. So the host and the CUDA connections view a FIFO through
// this one layout:
//
//   [counters][uint64_t Sizes[NumSlots]][CallStamp Stamps[NumSlots]][padding][slots]
//
// Each target brings its own counters (atomics on the host, words the
// device reads with system-scope loads), laid out alike. Executors stamp
// the first message of each call on a FIFO with the call, so that a
// receiver whose peer makes another call fails instead of combining the
// wrong data (host/Connection.h, cuda/Connection.cuh).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "common/HostDevice.h"

#include <cstddef>
#include <cstdint>

namespace cclc::kern {

/// What a collective call is, as its first message on each FIFO carries: ranks whose
/// calls differ in any field (one calls with twice the count, another
/// type, operator, root or collective, has loaded another plan, or skipped
/// a call) must not exchange data. The fields hold the runtime's enums as
/// numbers, since the templates do not know them.
struct CallStamp {
  /// The communicator's call number: the first collective is 1.
  uint64_t Seq = 0;
  /// The per-rank element count.
  uint64_t Count = 0;
  /// A hash of what fixes the algorithm's schedule: its name, collective,
  /// root and chunk grid.
  uint64_t Plan = 0;
  int32_t Root = 0;
  uint8_t Collective = 0;
  uint8_t Type = 0;
  uint8_t Op = 0;
  uint8_t Reserved = 0; ///< Zero: pads the stamp to four words.

  CCLC_HD bool operator==(const CallStamp &O) const {
    return Seq == O.Seq && Count == O.Count && Plan == O.Plan && Root == O.Root &&
           Collective == O.Collective && Type == O.Type && Op == O.Op;
  }
  CCLC_HD bool operator!=(const CallStamp &O) const { return !(*this == O); }
};
static_assert(sizeof(CallStamp) == 32, "every target and the TCP frames lay a stamp out alike");

/// The top bit of a size word that carries a call: the word of a call's
/// first message holds its size in the low 32 bits (a collective's messages
/// fit a slot) and a 29-bit digest of the call's stamp in bits 32 to 60, so
/// that the receiver checks the call in the word it reads anyway and reads
/// the stamp itself only to describe a mismatch. Other words hold a plain
/// size, which point-to-point messages that span slots make larger than 32
/// bits.
inline constexpr uint64_t StampedWord = uint64_t(1) << 63;

/// The bit of a size word whose message the sender wrote straight into the
/// receiver's buffer, where the receiver offered it (host/Connection.h):
/// the slot holds nothing, and the word still holds the size (and digest).
inline constexpr uint64_t DirectWord = uint64_t(1) << 62;

/// The bit of a size word whose message stays in the sender's buffer, which
/// the receiver maps and reads it from (host/Connection.h): the slot holds
/// where (a MessageReference), and the word still holds the size (and
/// digest). The receiver's release of the slot says it has read the message.
inline constexpr uint64_t ReferenceWord = uint64_t(1) << 61;

/// The bits of the size word of S's first message that are not its size.
CCLC_HD inline uint64_t stampDigest(const CallStamp &S) {
  uint64_t H = (S.Seq * 0x9e3779b97f4a7c15ull) ^ S.Count;
  H = ((H ^ (H >> 29)) * 0xbf58476d1ce4e5b9ull) ^ S.Plan;
  H = ((H ^ (H >> 32)) * 0x94d049bb133111ebull) ^
      ((uint64_t(uint32_t(S.Root)) << 24) | (uint64_t(S.Collective) << 16) |
       (uint64_t(S.Type) << 8) | S.Op);
  H = (H ^ (H >> 31)) * 0x9e3779b97f4a7c15ull;
  return StampedWord | (H & 0x1fffffff00000000ull);
}

/// The stamp's digest a size word carries; 0 for none.
CCLC_HD inline uint64_t wordDigest(uint64_t Word) {
  return Word & StampedWord ? Word & ~(DirectWord | ReferenceWord | 0xffffffffull) : 0;
}

/// The message size a size word holds.
CCLC_HD inline uint64_t wordBytes(uint64_t Word) {
  return Word & StampedWord ? Word & 0xffffffffull : Word & ~(DirectWord | ReferenceWord);
}

/// Whether a size word's message was written straight into the receiver's buffer.
CCLC_HD inline bool wordDirect(uint64_t Word) { return (Word & DirectWord) != 0; }
/// Whether a size word's message is to be read from the sender's buffer.
CCLC_HD inline bool wordReference(uint64_t Word) { return (Word & ReferenceWord) != 0; }

/// Bytes of a FIFO's counters: the sender's Tail and the receiver's Head,
/// each on a cache line of its own, and a line for the receiver's offer of
/// single copy (host/Connection.h).
inline constexpr size_t FifoCounterBytes = 192;

/// The alignment of a FIFO's memory and of its slots.
inline constexpr size_t FifoAlignBytes = 128;

/// A view of one FIFO in a block of memory, with Counters the target's type
/// for the counters.
template <class Counters> struct FifoView {
  static_assert(sizeof(Counters) == FifoCounterBytes, "host and device FIFOs share one layout");

  Counters *Header = nullptr;
  uint64_t *Sizes = nullptr;   ///< The size word of the message in each slot.
  CallStamp *Stamps = nullptr; ///< The call of each slot's message, if its first.
  std::byte *Slots = nullptr;
  uint32_t NumSlots = 0;
  size_t SlotBytes = 0;

  /// Where the slots begin: on a 128-byte line, so that LL128's lines in a
  /// slot of a multiple of 128 bytes (common/Protocol.h) are the memory's.
  CCLC_HD static size_t slotsOffset(uint32_t NumSlots) {
    size_t Off = sizeof(Counters) + NumSlots * (sizeof(uint64_t) + sizeof(CallStamp));
    return (Off + FifoAlignBytes - 1) / FifoAlignBytes * FifoAlignBytes;
  }
  CCLC_HD static size_t bytesFor(uint32_t NumSlots, size_t SlotBytes) {
    return slotsOffset(NumSlots) + NumSlots * SlotBytes;
  }
  /// Views Mem (FifoAlignBytes aligned, bytesFor bytes, as the caller addresses it)
  /// without touching it.
  CCLC_HD static FifoView place(void *Mem, uint32_t NumSlots, size_t SlotBytes) {
    FifoView F;
    F.Header = static_cast<Counters *>(Mem);
    F.Sizes = reinterpret_cast<uint64_t *>(static_cast<std::byte *>(Mem) + sizeof(Counters));
    F.Stamps = reinterpret_cast<CallStamp *>(F.Sizes + NumSlots);
    F.Slots = static_cast<std::byte *>(Mem) + slotsOffset(NumSlots);
    F.NumSlots = NumSlots;
    F.SlotBytes = SlotBytes;
    return F;
  }
  /// The slot of the message that counter value Counter numbers.
  CCLC_HD std::byte *slot(uint64_t Counter) const {
    return Slots + (Counter % NumSlots) * SlotBytes;
  }
};

} // namespace cclc::kern
