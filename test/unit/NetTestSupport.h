//===- NetTestSupport.h - Ranks as forked processes in unit tests -*- C++ -*-===//
//
// The runtime's multi-process tests fork one process per rank. A child runs
// its body and exits with the body's result; a failed check throws, and the
// child prints it and exits with ChildFailed. The parent sees only exit
// statuses, so the children check contents themselves.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/net/Children.h"
#include "runtime/net/Socket.h"

#include <chrono>
#include <csignal>
#include <cstdio>
#include <exception>
#include <cstdlib>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace cclc::net::test {

/// The exit code of a child whose check failed or that threw.
constexpr int ChildFailed = 100;

/// Throws, ending the child with ChildFailed, unless Ok.
inline void require(bool Ok, const std::string &What) {
  if (!Ok)
    throw std::runtime_error("check failed: " + What);
}

/// Runs Body(Rank) in NRanks forked processes and returns their wait
/// statuses. Children still running after Limit are killed and reported as
/// -1, so a hang fails the test instead of stalling it.
inline std::vector<int> forkRanks(int NRanks, const std::function<int(int)> &Body,
                                  std::chrono::seconds Limit = std::chrono::seconds(20)) {
  std::fflush(nullptr);
  std::vector<pid_t> Pids;
  for (int Rank = 0; Rank < NRanks; ++Rank) {
    pid_t Pid = ::fork();
    if (Pid == 0) {
      int Code = ChildFailed;
      try {
        Code = Body(Rank);
      } catch (const std::exception &E) {
        std::fprintf(stderr, "rank %d: %s\n", Rank, E.what());
      }
      std::fflush(nullptr);
      ::_exit(Code);
    }
    Pids.push_back(Pid);
  }
  return waitForChildren(Pids, Limit);
}

inline bool exitedWith(int Status, int Code) {
  return Status != -1 && WIFEXITED(Status) && WEXITSTATUS(Status) == Code;
}

inline bool killedBy(int Status, int Signal) {
  return Status != -1 && WIFSIGNALED(Status) && WTERMSIG(Status) == Signal;
}

/// Sets an environment variable, or unsets it when Value is empty, for the
/// ranks forked in this scope; restores it afterwards. Tests change
/// CCLC_SOCKET_IFNAME only this way, so that the loopback the test
/// configuration sets holds for the tests after them.
class ScopedEnv {
public:
  ScopedEnv(const char *Name, const std::optional<std::string> &Value) : Name(Name) {
    if (const char *Old = std::getenv(Name))
      Saved = Old;
    if (Value)
      ::setenv(Name, Value->c_str(), 1);
    else
      ::unsetenv(Name);
  }
  ~ScopedEnv() {
    if (Saved)
      ::setenv(Name, Saved->c_str(), 1);
    else
      ::unsetenv(Name);
  }
  ScopedEnv(const ScopedEnv &) = delete;
  ScopedEnv &operator=(const ScopedEnv &) = delete;

private:
  const char *Name;
  std::optional<std::string> Saved;
};

/// A port that was free a moment ago.
inline uint16_t freePort() {
  Socket S = Socket::listen(SocketAddress::any(AF_INET, 0));
  return S.localAddress().port();
}

} // namespace cclc::net::test
