//===- Bench.h - One rank's measurements ------------------------*- C++ -*-===//
//
// Every rank runs the same sequence of calls: for each collective (and
// sendrecv), type, operator and size, warm-up calls, a timed loop out of
// place and one in place (with nccl-tests' in-place buffers: allgather's
// input is its share of the output, reduce-scatter's output its share of the
// input), and with -c 1 one more call of each, on fresh inputs and into
// poisoned outputs, whose every element is checked (but sendrecv's in
// place, which nccl-tests leaves unchecked too).
// Times are averaged over the ranks and wrong elements summed, through the
// communicator itself; rank 0 prints. The buffers are host or device memory
// (Memory.h); the calls, the checks and the report are the same for both.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/perf/Options.h"

namespace cclc::perf {

/// Runs Opts on Comm and ends Comm; returns the rank's exit code: 0, or 1
/// when a result was wrong or a call failed (said on stderr, after which
/// Comm is aborted).
int runBenchmarks(const Options &Opts, cclcComm_t Comm);

} // namespace cclc::perf
