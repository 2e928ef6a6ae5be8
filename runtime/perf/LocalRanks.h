//===- LocalRanks.h - A job of forked ranks on this host --------*- C++ -*-===//
//
// `cclc-perf -np N` and the runtime's multi-process tests start their ranks
// themselves: the parent forks one child per rank, and only then starts the
// job's root (cclcGetUniqueId) and sends each child the id through a pipe.
// Forking before any thread exists keeps the children free of locks that a
// thread of the parent held at the fork. Such a job binds loopback unless
// CCLC_SOCKET_IFNAME says otherwise.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/api/cclc.h"

#include <chrono>
#include <functional>
#include <string>
#include <vector>

namespace cclc::perf {

/// The most ranks a job of forked ranks may have: every rank is a process
/// of this host, and the parent holds a pipe and the root a connection per
/// rank while the job starts.
constexpr int MaxLocalRanks = 1024;

/// A rank's work: its exit code, given its rank and the job's id.
using RankBody = std::function<int(int Rank, const cclcUniqueId &Id)>;

/// Runs Body in NRanks forked processes and returns their wait statuses
/// (see waitpid). A child that cannot get the id within the runtime's
/// timeout exits with 1. Throws std::runtime_error, saying what to change,
/// when NRanks is outside [1, MaxLocalRanks], when the open-file limit is
/// too low for NRanks, or when a pipe or fork fails (after ending the
/// ranks forked so far). With a nonzero Limit, children still running after
/// it are killed and reported as -1, so that a test fails instead of
/// hanging.
std::vector<int> runLocalRanks(int NRanks, const RankBody &Body,
                               std::chrono::milliseconds Limit = std::chrono::milliseconds(0));

/// "exited with 1", "killed by signal 9", "still running past the limit".
std::string describeStatus(int Status);

/// Writes Line and a newline to standard error in one write: ranks that
/// fail together write to one pipe, which keeps a write of up to PIPE_BUF
/// bytes whole, where a C stream may split a long line into several.
void printWhole(const std::string &Line);

} // namespace cclc::perf
