//===- Report.h - nccl-tests' output ----------------------------*- C++ -*-===//
//
// cclc-perf prints what nccl-tests prints, column for column, so that the
// scripts that parse all_reduce_perf's output (and the people who read it)
// read cclc-perf's: bandwidths in GB/s (10^9 bytes), times in microseconds,
// and the bus bandwidth that makes collectives comparable with each other.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/perf/Options.h"

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

namespace cclc::perf {

/// A rank, as the header lists it.
struct RankInfo {
  int Pid = 0;
  std::string Host;
  /// "host", or the GPU as nccl-tests names it: " 0 [0x1b] NVIDIA H200".
  std::string Device;
};

/// One measurement: out-of-place or in-place.
struct Measurement {
  double Seconds = 0;
  /// Wrong elements over every rank; none when not checked.
  std::optional<uint64_t> Wrong;
};

class Report {
public:
  Report(const Options &Opts, std::FILE *Out) : Opts(Opts), Out(Out) {}

  /// The settings and the ranks.
  void header(const std::vector<RankInfo> &Ranks);
  /// The column titles of the table of C's collective (or sendrecv).
  void columns(const Call &C);
  /// One size of call C: Bytes and Count as nccl-tests counts them (the
  /// larger buffer), the operator "none" and the root -1 where they do not
  /// apply.
  void row(const Call &C, int NRanks, uint64_t Bytes, uint64_t Count, const Measurement &OutOfPlace,
           const Measurement &InPlace);
  /// The wrong elements and the average bus bandwidth of the rows so far.
  void footer();
  uint64_t wrong() const { return Wrong; }

private:
  void cell(double AlgBytes, double Factor, const Measurement &M);

  const Options &Opts;
  std::FILE *Out;
  double BusBandwidthSum = 0;
  int Cells = 0;
  uint64_t Wrong = 0;
};

} // namespace cclc::perf
