//===- Fifo.h - Where the parts of a slot FIFO lie in memory -----*- C++ -*-===//
//
// A FIFO between two ranks is one block of memory that host code and device
// code may both use: a proxy thread on the host feeds or drains a GPU
// kernel's FIFO in mapped memory, and host code empties FIFOs before a
// kernel uses them. So the host and the CUDA connections view a FIFO through
// this one layout:
//
//   [counters][uint64_t Sizes[NumSlots]][padding][slots]
//
// Each target brings its own counters (atomics on the host, words the
// device reads with system-scope loads), laid out alike.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "common/HostDevice.h"

#include <cstddef>
#include <cstdint>

namespace cclc::kern {

/// Bytes of a FIFO's counters: the sender's Tail and the receiver's Head,
/// each on a cache line of its own.
inline constexpr size_t FifoCounterBytes = 128;

/// A view of one FIFO in a block of memory, with Counters the target's type
/// for the counters.
template <class Counters> struct FifoView {
  static_assert(sizeof(Counters) == FifoCounterBytes, "host and device FIFOs share one layout");

  Counters *Header = nullptr;
  uint64_t *Sizes = nullptr; ///< The size of the message in each slot.
  std::byte *Slots = nullptr;
  uint32_t NumSlots = 0;
  size_t SlotBytes = 0;

  CCLC_HD static size_t slotsOffset(uint32_t NumSlots) {
    size_t Off = sizeof(Counters) + NumSlots * sizeof(uint64_t);
    return (Off + 63) / 64 * 64;
  }
  CCLC_HD static size_t bytesFor(uint32_t NumSlots, size_t SlotBytes) {
    return slotsOffset(NumSlots) + NumSlots * SlotBytes;
  }
  /// Views Mem (64-byte aligned, bytesFor bytes, as the caller addresses it)
  /// without touching it.
  CCLC_HD static FifoView place(void *Mem, uint32_t NumSlots, size_t SlotBytes) {
    FifoView F;
    F.Header = static_cast<Counters *>(Mem);
    F.Sizes = reinterpret_cast<uint64_t *>(static_cast<std::byte *>(Mem) + sizeof(Counters));
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
