//===- ShmTransport.h - FIFOs in POSIX shared memory --------------*- C++ -*-===//
//
// Links between ranks of one host. For each (sender, receiver) pair the
// receiver creates one segment holding the FIFOs of every channel the sender
// uses towards it, and names it to the sender over the bootstrap; the sender
// maps it and removes the name at once, so that the segment disappears with
// the last process that maps it, crash or not. Until then the name is
// removed on every failure: by the receiver when its setup fails (a sender
// that died), and by the sender for every name it was offered and had not
// mapped when its setup fails (a receiver that died after offering).
//
// The segment's first cache line holds the receiver's process id, so that
// the sender can write messages straight into the receiver's buffers, and an
// abort word that both sides' Waiters watch: a rank that fails raises it (to its rank + 1) and the other
// side stops at once; a rank that dies cannot, and the other side's waits
// time out instead. The second holds the sender's process id, written when
// it attaches, so that the receiver can read messages the sender leaves in
// its buffers. The two sides' call board follows (CallBoard.h).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "host/Connection.h"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <sys/types.h>
#include <utility>

namespace cclc::net {

class ShmSegment {
public:
  /// Creates and maps a new segment of NumFifos FIFOs and initialises them;
  /// this receiver offers its buffers for messages of SingleCopyMin bytes
  /// and more (0: none).
  static std::unique_ptr<ShmSegment> create(const std::string &Name, uint32_t NumFifos,
                                            uint32_t NumSlots, size_t SlotBytes,
                                            size_t SingleCopyMin);
  /// Maps the segment the receiver created, checking that it has the shape
  /// the sender expects.
  static std::unique_ptr<ShmSegment> attach(const std::string &Name, uint32_t NumFifos,
                                            uint32_t NumSlots, size_t SlotBytes);
  /// A name no other segment has, telling who made it for whom.
  static std::string uniqueName(int Receiver, int Sender);
  /// Whether Name is one uniqueName(Receiver, Sender) makes: a sender opens
  /// and removes only such names, whatever a peer offers.
  static bool isNameFor(const std::string &Name, int Receiver, int Sender);
  /// Removes the name of a segment Receiver offered this rank and this rank
  /// did not map, when the setup fails; names of another form are left.
  static void removeOffered(const std::string &Name, int Receiver, int Sender);

  /// Unmaps, and removes the name when this side created it and still holds it.
  ~ShmSegment();
  ShmSegment(const ShmSegment &) = delete;
  ShmSegment &operator=(const ShmSegment &) = delete;

  const std::string &name() const { return Name; }
  host::Fifo fifo(uint32_t Index) const;
  std::atomic<uint32_t> &abortWord();
  /// Where the two sides' call board lies (CallBoard.h).
  void *boardMemory();
  /// The smallest message the receiver offers its buffers for; 0 for none.
  size_t singleCopyMin() const;
  /// The receiver's process, if this process may write into its memory
  /// (process_vm_writev) and finds it by the id it recorded; else 0 and why not.
  std::pair<pid_t, std::string> receiverProcess() const;
  /// The receiver's descriptor of its probe (SharedBuffers.h); -1 for none.
  int receiverProbe() const;
  /// Says, on the sender's side, which process sends: before its first
  /// message, so that the receiver can read messages from its buffers.
  void introduceSender();
  /// The sender's process and its descriptor of its probe, once it has
  /// introduced itself and where this process may reach into its memory;
  /// else pid 0.
  std::pair<pid_t, int> senderProcess() const;
  /// Removes the name, once both sides have mapped the segment.
  void unlink();

private:
  ShmSegment(std::string Name, void *Base, size_t Bytes, bool Linked);

  std::string Name;
  void *Base;
  size_t Bytes;
  bool Linked;
};

} // namespace cclc::net
