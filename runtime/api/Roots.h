//===- Roots.h - The bootstrap roots this process serves --------*- C++ -*-===//
//
// cclcGetUniqueId starts a root (a thread that introduces the ranks of one
// job) in the calling process and hands out its id. The root must outlive
// the ranks' registration, which the caller does not announce; so roots are
// kept here, and the one a communicator of this process joined is stopped
// once that communicator is up, which proves every rank registered. Roots
// of jobs this process does not join are removed once they have answered
// their ranks, the next time a root starts.
//
// A forked child inherits the record of its parent's roots but not their
// threads: only the process that started a root stops it.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/bootstrap/Bootstrap.h"

#include <chrono>

namespace cclc::runtime {

/// Starts a root and returns its id.
net::UniqueId startRoot(std::chrono::milliseconds Timeout);

/// Stops the root of Id if this process started it and still runs it.
void releaseRoot(const net::UniqueId &Id);

} // namespace cclc::runtime
