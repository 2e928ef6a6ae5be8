//===- Bench.h - One rank's measurements ------------------------*- C++ -*-===//
//
// Every rank runs the same sequence of calls: for each collective, type,
// operator and size, warm-up calls, a timed loop out of place and one in
// place (with nccl-tests' in-place buffers: allgather's input is its share of
// the output, reduce-scatter's output its share of the input), and with -c 1
// one more call of each on fresh inputs whose every element is checked.
// Times are averaged over the ranks and wrong elements summed, through the
// communicator itself; rank 0 prints.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/perf/Options.h"

namespace cclc::perf {

/// Runs Opts on Comm; returns the rank's exit code: 0, or 1 when a result
/// was wrong. A failed call throws std::runtime_error saying which.
int runBenchmarks(const Options &Opts, cclcComm_t Comm);

} // namespace cclc::perf
