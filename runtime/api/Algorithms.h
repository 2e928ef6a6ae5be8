//===- Algorithms.h - Loaded algorithms and the choice per call -*- C++ -*-===//
//
// A communicator runs a collective with one of the algorithms loaded into it:
// plans (run by the plan interpreter) and generated host kernels. Each is
// meant for a window of message sizes; a call takes the algorithm whose
// window holds its size, preferring a generated kernel to the interpreter
// (same results, less dispatch), then the narrowest window (the most
// specific tuning), then the first loaded. Every rank loads the same
// algorithms in the same order, so every rank chooses alike.
//
// When nothing loaded serves a call, the communicator falls back on the
// library's ring algorithm (Fallback.h) and says so on stderr, always: a
// fallback is correct but rarely fast. With CCLC_DEBUG=INFO every choice is
// logged too, once per collective and algorithm.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/exec/Interpreter.h"
#include "runtime/net/Transport.h"

#include "dsl/AST.h"
#include "host/Kernel.h"

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

namespace cclc::runtime {

/// What one collective call asks for.
struct Request {
  dsl::CollectiveKind Collective = dsl::CollectiveKind::AllReduce;
  /// The call's root; 0 for collectives without one.
  int32_t Root = 0;
  /// The per-rank element count (the schedules' unit).
  size_t Count = 0;
  host::DType Type = host::DType::F32;
  host::RedOp Op = host::RedOp::Sum;
  /// Count elements of Type: what size windows are measured in.
  uint64_t bytes() const;
};

/// One algorithm a communicator can run, with the connections it runs on.
struct Algorithm {
  enum class Executor { Kernel, Interpreter };

  std::string Name;
  /// Where it came from, for logs: "plan ring.json", "kernels", "compiled
  /// at run time from the library".
  std::string Origin;
  dsl::CollectiveKind Collective = dsl::CollectiveKind::AllReduce;
  int32_t Root = 0;
  uint64_t MinBytes = 0;
  std::optional<uint64_t> MaxBytes;
  exec::ScheduleShape Shape;
  Executor Kind = Executor::Interpreter;
  /// The schedule, for the interpreter.
  std::shared_ptr<const exec::Interpreter> Interp;
  /// Generated kernels, one per (type, operator) they were compiled for.
  std::map<std::pair<host::DType, host::RedOp>, host::KernelFn> Kernels;
  net::Connections *Net = nullptr;
  size_t SlotBytes = 0;

  /// True when the window holds Bytes.
  bool holds(uint64_t Bytes) const;
  /// The kernel for R's type and operator (any operator for collectives
  /// that do not reduce); null when there is none.
  host::KernelFn kernelFor(const Request &R) const;
  /// True when this algorithm can run R.
  bool serves(const Request &R) const;
  /// Runs channel Channel of R with Args.
  void run(const Request &R, const host::KernelArgs &Args, int Channel) const;
  /// "ring_allreduce (plan ring.json, plan interpreter, 1 channel, sizes
  /// 0 B..1 MiB)".
  std::string describe() const;
};

class AlgorithmTable {
public:
  AlgorithmTable(int Rank, int NRanks);

  void add(Algorithm A);

  /// The algorithm for R: the best loaded one, else the fallback for R's
  /// collective and root, made by MakeFallback on first use and kept.
  /// Logs as the file comment says.
  const Algorithm &choose(const Request &R, const std::function<Algorithm()> &MakeFallback);

  const std::deque<Algorithm> &loaded() const { return Loaded; }

private:
  const Algorithm *best(const Request &R) const;
  void log(const char *Level, const std::string &Message) const;

  int Rank;
  int NRanks;
  bool Info;
  /// Stable addresses: choose() hands out references.
  std::deque<Algorithm> Loaded;
  std::map<std::pair<dsl::CollectiveKind, int32_t>, Algorithm> Fallbacks;
  /// (collective, algorithm, executor) already logged.
  std::set<std::tuple<dsl::CollectiveKind, std::string, Algorithm::Executor>> Logged;
};

} // namespace cclc::runtime
