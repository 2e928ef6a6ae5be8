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
// /dev/shm), and every rank of a host whose leader could not create one (a
// full /dev/shm), gets a page of its own, and says so through shared(): the
// leader still takes part in the name exchange, so that no rank waits for
// it until the bootstrap's timeout.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/bootstrap/Bootstrap.h"
#include "runtime/transport/shm/ShmTransport.h"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace cclc::net {

class HostAbortWord {
public:
  /// Creates the host's segment under a name; throws NetError when it
  /// cannot.
  using SegmentMaker = std::function<std::unique_ptr<ShmSegment>(const std::string &Name)>;
  /// The segment of a page that every ranks' abort word is made in.
  static std::unique_ptr<ShmSegment> createSegment(const std::string &Name);

  /// Collective: every rank of B's job constructs one, in the same order.
  /// The leader of each host makes the shared page with Create.
  explicit HostAbortWord(Bootstrap &B, const SegmentMaker &Create = createSegment);
  HostAbortWord(const HostAbortWord &) = delete;
  HostAbortWord &operator=(const HostAbortWord &) = delete;

  /// Raised (nonzero) by the first rank of the host that stops.
  std::atomic<uint32_t> &word() { return *Word; }
  /// The page that holds word(), at its start, for mapping it elsewhere.
  void *page() { return Word; }
  static size_t pageBytes();
  /// False when this rank fell back on a page of its own; Why says why.
  bool shared() const { return Why.empty(); }
  const std::string &whyNotShared() const { return Why; }

private:
  /// Unmaps a page of the rank's own.
  struct Unmap {
    void operator()(std::atomic<uint32_t> *Page) const;
  };

  /// Falls back on a page of the rank's own, because of Cause.
  void usePrivatePage(const std::string &Cause);

  std::unique_ptr<ShmSegment> Segment;
  std::unique_ptr<std::atomic<uint32_t>, Unmap> Private;
  std::atomic<uint32_t> *Word = nullptr;
  std::string Why;
};

} // namespace cclc::net
