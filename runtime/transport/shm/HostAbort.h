//===- HostAbort.h - One abort word for the ranks of a host -----*- C++ -*-===//
//
// GPU kernels of a collective spin waiting for their peers' kernels, and can
// poll only a word of memory, not a socket. So that one rank's failure stops
// the kernels of every rank on its host at once, instead of at their
// timeouts, the ranks of a job that share a host share one abort word: a
// page of POSIX shared memory that each rank maps into its GPU's address
// space. The lowest rank of each host creates it, the job's ranks learn its
// name through the bootstrap, and the name is removed once every rank has
// mapped it, so it disappears with the last process, crash or not.
//
// A rank that cannot map its host's page (its processes do not share
// /dev/shm) gets a page of its own, and says so through shared().
//
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/bootstrap/Bootstrap.h"
#include "runtime/transport/shm/ShmTransport.h"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace cclc::net {

class HostAbortWord {
public:
  /// Collective: every rank of B's job constructs one, in the same order.
  explicit HostAbortWord(Bootstrap &B);
  HostAbortWord(const HostAbortWord &) = delete;
  HostAbortWord &operator=(const HostAbortWord &) = delete;

  /// Raised (nonzero) by the first rank of the host that stops.
  std::atomic<uint32_t> &word() { return Segment->abortWord(); }
  /// The page that holds word(), at its start, for mapping it elsewhere.
  void *page() { return &Segment->abortWord(); }
  static size_t pageBytes();
  /// False when this rank fell back on a page of its own; Why says why.
  bool shared() const { return Why.empty(); }
  const std::string &whyNotShared() const { return Why; }

private:
  std::unique_ptr<ShmSegment> Segment;
  std::string Why;
};

} // namespace cclc::net
