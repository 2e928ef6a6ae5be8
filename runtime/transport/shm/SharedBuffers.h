//===- SharedBuffers.h - Host buffers the ranks of a host map ----*- C++ -*-===//
//
// The memory cclcMemAlloc gives: each buffer a memory file of its own
// (memfd), mapped shared. A receiver whose buffer lies in such memory names
// it in its offer of single copy (host/Connection.h), and the sender, on the
// same host, maps the buffer itself and writes the message with memcpy.
// Without it, single copy is a process_vm_writev per message, which pins the
// receiver's pages in the kernel and copied at 0.4-0.6x memcpy's speed on
// the machines measured (docs/performance.md).
//
// The sender takes the receiver's descriptor of the buffer with
// pidfd_getfd (Linux 5.6), which the kernel allows where it allows
// process_vm_writev (ptrace access to the receiver), and maps it. A
// descriptor number says nothing by itself, so the sender checks the
// memory file's name, which carries the buffer's id, and its size, before
// it maps it, and bounds every write by what it mapped: a peer's offer
// cannot make it write outside the buffer it mapped. A sender's mappings
// outlive the receiver's free (the pages stay until both unmap), so a
// late write lands in memory nobody reads instead of a reused buffer.
//
// Each process keeps one small memory file, its probe, that a sender
// fetches when it connects: whether that works decides, before any
// message, whether the pair's mapped copies can happen, and
// CCLC_DEBUG=INFO says which.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "host/Connection.h"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <sys/types.h>
#include <utility>

namespace cclc::net {

/// This process's buffers from cclcMemAlloc.
class SharedBuffers final : public host::SharedIndex {
public:
  static SharedBuffers &process();

  /// A new buffer of Bytes bytes (at least one page), zeroed and
  /// page-aligned; throws NetError when the system refuses it.
  void *allocate(size_t Bytes);
  /// Frees a buffer allocate() returned; false when Ptr is not one.
  bool release(void *Ptr);
  /// Whether Ptr starts a buffer of allocate().
  bool owns(const void *Ptr) const;
  /// The buffer holding every run of Runs, if one does.
  bool find(std::span<const host::Run> Runs, host::SharedSpan &Span) const override;
  /// How many buffers have been allocated and freed so far: while it stays,
  /// what find() answered stays true, so callers may keep the answer
  /// without taking the lock again.
  uint64_t changes() const { return Changes.load(std::memory_order_acquire); }
  /// This process's descriptor of its probe, a memory file a sender
  /// fetches to learn whether it can map this process's buffers; -1 where
  /// the system has no memory files.
  int probeFd();

private:
  SharedBuffers() = default;

  struct Buffer {
    uint64_t Id;
    int Fd;
    size_t Bytes;
  };
  mutable std::mutex Lock;
  /// By the address where this process maps them.
  std::map<uintptr_t, Buffer> Buffers;
  std::atomic<uint64_t> Changes{0};
  uint64_t NextId = 1;
  int Probe = -2; ///< -2: not made yet.
};

/// One process's mappings of another's buffers: a sender's, of the
/// receiver's it writes into, or a receiver's, of the sender's it reads
/// messages from.
class PeerBuffers final : public host::PeerMemory {
public:
  /// Opens process Pid and fetches its probe ProbeFd; whyNot() says why its
  /// buffers cannot be mapped, if they cannot.
  PeerBuffers(pid_t Pid, int ProbeFd);
  ~PeerBuffers();
  PeerBuffers(const PeerBuffers &) = delete;
  PeerBuffers &operator=(const PeerBuffers &) = delete;

  const std::string &whyNot() const { return WhyNot; }
  bool usable() override { return WhyNot.empty(); }
  /// This process's mapping of the peer's buffer Span, made the first
  /// time; null where it cannot be mapped, or is not what Span says.
  std::shared_ptr<std::byte> map(const host::SharedSpan &Span) override;

private:
  /// Fetches descriptor Fd of the receiver, if it is the memory file named
  /// Name; else -1, and why not in Why where it is not null.
  int fetch(int Fd, const std::string &Name, std::string *Why) const;

  int PidFd = -1;
  std::string WhyNot;
  std::mutex Lock;
  struct Mapping {
    uint64_t Id;
    std::shared_ptr<std::byte> View;
  };
  /// The newest last; at most MaxMappings, so that a receiver that
  /// allocates and frees buffers for ever does not pin memory for ever.
  std::deque<Mapping> Mappings;
  static constexpr size_t MaxMappings = 64;
};

/// A receiver's mappings of its sender's buffers, made once the sender has
/// said which process it is: it attaches to the receiver's FIFOs after the
/// receiver made them, and says so before its first message.
class SenderBuffers final : public host::PeerMemory {
public:
  /// The sender's process and its probe, as far as known: pid 0 while it
  /// has not said, or where this process may not map its buffers.
  using Identify = std::function<std::pair<pid_t, int>()>;
  explicit SenderBuffers(Identify Sender) : Sender(std::move(Sender)) {}

  bool usable() override;
  std::shared_ptr<std::byte> map(const host::SharedSpan &Span) override;

private:
  /// The sender's buffers, once it has said who it is; null before.
  PeerBuffers *peer();

  Identify Sender;
  std::mutex Lock;
  std::unique_ptr<PeerBuffers> Peer;
};

} // namespace cclc::net
