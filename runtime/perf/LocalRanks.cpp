//===- LocalRanks.cpp - A job of forked ranks on this host ----------------===//

#include "runtime/perf/LocalRanks.h"

#include "runtime/api/Environment.h"
#include "runtime/net/Children.h"

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <exception>
#include <poll.h>
#include <sys/wait.h>
#include <stdexcept>
#include <sys/resource.h>
#include <thread>
#include <unistd.h>

namespace cclc::perf {

namespace {

/// Reads the job's id from Fd, waiting at most Timeout.
bool readId(int Fd, cclcUniqueId &Id, std::chrono::milliseconds Timeout) {
  auto Deadline = std::chrono::steady_clock::now() + Timeout;
  size_t Got = 0;
  while (Got < sizeof Id) {
    auto Left = std::chrono::duration_cast<std::chrono::milliseconds>(
        Deadline - std::chrono::steady_clock::now());
    pollfd P{Fd, POLLIN, 0};
    if (Left.count() <= 0 || ::poll(&P, 1, int(Left.count())) == 0)
      return false;
    ssize_t N = ::read(Fd, reinterpret_cast<char *>(&Id) + Got, sizeof Id - Got);
    if (N < 0 && errno == EINTR)
      continue;
    if (N <= 0)
      return false;
    Got += size_t(N);
  }
  return true;
}

[[noreturn]] void runChild(int Rank, int IdPipe, const RankBody &Body) {
  int Code = 1;
  try {
    cclcUniqueId Id;
    if (readId(IdPipe, Id, runtime::timeoutFromEnvironment()))
      Code = Body(Rank, Id);
    else
      printWhole("rank " + std::to_string(Rank) + ": the parent sent no job id");
  } catch (const std::exception &E) {
    printWhole("rank " + std::to_string(Rank) + ": " + E.what());
  }
  std::fflush(nullptr);
  ::_exit(Code);
}

void writeAll(int Fd, const void *Data, size_t Bytes) {
  const char *P = static_cast<const char *>(Data);
  while (Bytes) {
    ssize_t N = ::write(Fd, P, Bytes);
    if (N < 0 && errno == EINTR)
      continue;
    if (N < 0)
      return; // The child died; its status tells.
    P += N;
    Bytes -= size_t(N);
  }
}

/// The descriptors the parent of NRanks ranks needs at once: a pipe and a
/// root connection per rank, and some to spare for the rest of the process.
rlim_t descriptorsFor(int NRanks) { return 2 * rlim_t(NRanks) + 32; }

/// Throws when NRanks is out of range or the open-file limit is too low for it.
void checkRankCount(int NRanks) {
  if (NRanks < 1 || NRanks > MaxLocalRanks)
    throw std::runtime_error("a job of " + std::to_string(NRanks) +
                             " forked ranks: this host runs 1 to " +
                             std::to_string(MaxLocalRanks) + " ranks");
  rlimit Files{};
  if (::getrlimit(RLIMIT_NOFILE, &Files) == 0 && Files.rlim_cur != RLIM_INFINITY &&
      Files.rlim_cur < descriptorsFor(NRanks))
    throw std::runtime_error(std::to_string(NRanks) + " forked ranks need about " +
                             std::to_string(descriptorsFor(NRanks)) +
                             " open files, but the limit (ulimit -n) is " +
                             std::to_string(Files.rlim_cur) + "; raise it or start fewer ranks");
}

} // namespace

std::vector<int> runLocalRanks(int NRanks, const RankBody &Body, std::chrono::milliseconds Limit) {
  // Every rank runs on this host, so the job needs no interface but
  // loopback, unless the caller chose one.
  ::setenv("CCLC_SOCKET_IFNAME", "=lo", /*overwrite=*/0);
  std::fflush(nullptr);
  checkRankCount(NRanks);
  std::vector<pid_t> Pids;
  std::vector<int> IdPipes;
  // Closing the pipes makes the ranks forked so far exit at once.
  auto Failure = [&](const char *Call) {
    int Err = errno;
    for (int Fd : IdPipes)
      ::close(Fd);
    net::waitForChildren(Pids, std::chrono::milliseconds(0));
    return std::runtime_error(std::string(Call) + " failed after starting " +
                             std::to_string(Pids.size()) + " of " + std::to_string(NRanks) +
                             " ranks: " + std::strerror(Err) +
                             "; check the limits on processes and open files (ulimit -u, -n)");
  };
  for (int Rank = 0; Rank < NRanks; ++Rank) {
    int Fds[2];
    if (::pipe(Fds) != 0)
      throw Failure("pipe");
    pid_t Pid = ::fork();
    if (Pid < 0) {
      int Err = errno;
      ::close(Fds[0]);
      ::close(Fds[1]);
      errno = Err;
      throw Failure("fork");
    }
    if (Pid == 0) {
      ::close(Fds[1]);
      for (int Fd : IdPipes)
        ::close(Fd);
      runChild(Rank, Fds[0], Body);
    }
    ::close(Fds[0]);
    Pids.push_back(Pid);
    IdPipes.push_back(Fds[1]);
  }
  // A write to a child that died must not kill the parent.
  std::signal(SIGPIPE, SIG_IGN);
  cclcUniqueId Id;
  cclcResult_t Result = cclcGetUniqueId(&Id);
  if (Result != cclcSuccess)
    std::fprintf(stderr, "cclcGetUniqueId failed: %s: %s\n", cclcGetErrorString(Result),
                 cclcGetLastError(nullptr));
  for (int Fd : IdPipes) {
    if (Result == cclcSuccess)
      writeAll(Fd, &Id, sizeof Id);
    ::close(Fd);
  }

  return net::waitForChildren(Pids, Limit);
}

std::string describeStatus(int Status) {
  if (Status == -1)
    return "still running past the limit";
  if (WIFEXITED(Status))
    return "exited with " + std::to_string(WEXITSTATUS(Status));
  if (WIFSIGNALED(Status))
    return "killed by signal " + std::to_string(WTERMSIG(Status)) + " (" +
           strsignal(WTERMSIG(Status)) + ")";
  return "ended with wait status " + std::to_string(Status);
}

void printWhole(const std::string &Line) {
  std::string Text = Line + "\n";
  std::fflush(stderr);
  for (size_t Done = 0; Done < Text.size();) {
    ssize_t N = ::write(STDERR_FILENO, Text.data() + Done, Text.size() - Done);
    if (N < 0 && errno == EINTR)
      continue;
    if (N <= 0)
      return;
    Done += size_t(N);
  }
}

} // namespace cclc::perf
