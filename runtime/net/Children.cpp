//===- Children.cpp - Waiting for forked ranks with a limit ---------------===//

#include "runtime/net/Children.h"

#include <sys/wait.h>

#include <cerrno>
#include <csignal>
#include <thread>

namespace cclc::net {

std::vector<int> waitForChildren(const std::vector<pid_t> &Pids, std::chrono::milliseconds Limit) {
  std::vector<int> Status(Pids.size(), -1);
  if (Limit.count() == 0) {
    for (size_t I = 0; I < Pids.size(); ++I)
      while (::waitpid(Pids[I], &Status[I], 0) < 0 && errno == EINTR) {
      }
    return Status;
  }
  std::vector<bool> Done(Pids.size(), false);
  auto Deadline = std::chrono::steady_clock::now() + Limit;
  for (size_t Left = Pids.size(); Left > 0;) {
    for (size_t I = 0; I < Pids.size(); ++I)
      if (!Done[I] && ::waitpid(Pids[I], &Status[I], WNOHANG) == Pids[I]) {
        Done[I] = true;
        --Left;
      }
    if (Left && std::chrono::steady_clock::now() > Deadline) {
      for (size_t I = 0; I < Pids.size(); ++I)
        if (!Done[I]) {
          ::kill(Pids[I], SIGKILL);
          ::waitpid(Pids[I], nullptr, 0);
          Status[I] = -1;
        }
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return Status;
}

} // namespace cclc::net
