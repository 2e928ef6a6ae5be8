//===- Roots.cpp - The bootstrap roots this process serves ----------------===//

#include "runtime/api/Roots.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <mutex>
#include <unistd.h>
#include <vector>

namespace cclc::runtime {

namespace {

struct Served {
  pid_t Owner;
  std::unique_ptr<net::Root> Root;
};

struct Registry {
  std::mutex Lock;
  std::vector<Served> Roots;
};

/// Never destroyed: at exit a root may still wait for ranks, and a forked
/// child must not join threads it does not have.
Registry &registry() {
  static Registry *R = new Registry;
  return *R;
}

/// Takes out of R the roots this process started that have answered their
/// job, so that the caller destroys them (joining a finished thread does
/// not wait). A process that makes ids for jobs it does not join (a parent
/// that forks the ranks) would otherwise keep a thread, a socket and the
/// ranks' connections per job.
std::vector<std::unique_ptr<net::Root>> takeFinished(Registry &R) {
  std::vector<std::unique_ptr<net::Root>> Finished;
  pid_t Self = ::getpid();
  std::erase_if(R.Roots, [&](Served &S) {
    if (S.Owner != Self || !S.Root->finished())
      return false;
    Finished.push_back(std::move(S.Root));
    return true;
  });
  return Finished;
}

} // namespace

net::UniqueId startRoot(std::chrono::milliseconds Timeout) {
  std::unique_ptr<net::Root> Root = net::createRoot(Timeout);
  net::UniqueId Id = Root->id();
  Registry &R = registry();
  std::vector<std::unique_ptr<net::Root>> Finished;
  std::lock_guard<std::mutex> Guard(R.Lock);
  Finished = takeFinished(R);
  R.Roots.push_back({::getpid(), std::move(Root)});
  return Id;
}

void releaseRoot(const net::UniqueId &Id) {
  Registry &R = registry();
  std::unique_ptr<net::Root> Stopped;
  {
    std::lock_guard<std::mutex> Guard(R.Lock);
    auto It = std::find_if(R.Roots.begin(), R.Roots.end(), [&](const Served &S) {
      return std::memcmp(S.Root->id().Bytes, Id.Bytes, sizeof Id.Bytes) == 0;
    });
    if (It == R.Roots.end())
      return;
    if (It->Owner == ::getpid())
      Stopped = std::move(It->Root);
    else
      (void)It->Root.release(); // The parent's: its thread is not ours to join.
    R.Roots.erase(It);
  }
}

} // namespace cclc::runtime
