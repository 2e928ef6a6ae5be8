//===- Children.h - Waiting for forked ranks with a limit --------*- C++ -*-===//
//
// Local launchers (cclc-perf -np, the multi-process tests) fork one process
// per rank and must never hang on one that does not end: the wait is bounded
// and kills what is still running past it.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <sys/types.h>

#include <chrono>
#include <vector>

namespace cclc::net {

/// Waits for every child in Pids and returns their wait statuses (see
/// waitpid). With a nonzero Limit, children still running after it are
/// killed with SIGKILL and reported as -1.
std::vector<int> waitForChildren(const std::vector<pid_t> &Pids, std::chrono::milliseconds Limit);

} // namespace cclc::net
