//===- Algorithms.cpp - Loaded algorithms and the choice per call ---------===//

#include "compiler/cost/Explain.h"
#include "runtime/api/Algorithms.h"
#include "runtime/api/Environment.h"
#include "runtime/api/Types.h"

#include <iostream>
#include <limits>
#include <sstream>

namespace cclc::runtime {

namespace {

/// The window's width; unbounded windows are the widest.
uint64_t windowWidth(const Algorithm &A) {
  return A.MaxBytes ? *A.MaxBytes - A.MinBytes : std::numeric_limits<uint64_t>::max();
}

const char *executorName(Algorithm::Executor Kind) {
  return Kind == Algorithm::Executor::Kernel ? "generated kernel" : "plan interpreter";
}

/// "allreduce of 4 KiB (f32, sum)", "broadcast of 8 B (u8, root 2)".
std::string describeCall(const Request &R) {
  return std::string(dsl::collectiveName(R.Collective)) + " of " + cost::formatBytes(R.bytes()) + " (" +
         std::string(typeName(R.Type)) +
         (reduces(R.Collective) ? ", " + std::string(opName(R.Op)) : "") +
         (hasRoot(R.Collective) ? ", root " + std::to_string(R.Root) : "") + ")";
}

} // namespace

uint64_t Request::bytes() const { return uint64_t(Count) * exec::dtypeBytes(Type); }

bool Algorithm::holds(uint64_t Bytes) const {
  return Bytes >= MinBytes && (!MaxBytes || Bytes <= *MaxBytes);
}

host::KernelFn Algorithm::kernelFor(const Request &R) const {
  if (auto It = Kernels.find({R.Type, R.Op}); It != Kernels.end())
    return It->second;
  if (reduces(Collective))
    return nullptr;
  // Moving data does not depend on the operator: any of this type will do.
  for (const auto &[Key, Fn] : Kernels)
    if (Key.first == R.Type)
      return Fn;
  return nullptr;
}

bool Algorithm::serves(const Request &R) const {
  if (Collective != R.Collective || (hasRoot(Collective) && Root != R.Root) || !holds(R.bytes()))
    return false;
  return Kind == Executor::Interpreter || kernelFor(R);
}

void Algorithm::run(const Request &R, const host::KernelArgs &Args, int Channel) const {
  if (Kind == Executor::Kernel)
    kernelFor(R)(Args, Channel);
  else
    Interp->run(R.Type, R.Op, Args, Channel);
}

std::string Algorithm::describe() const {
  std::string Window = MaxBytes ? cost::formatBytes(MinBytes) + ".." + cost::formatBytes(*MaxBytes)
                                : cost::formatBytes(MinBytes) + " and up";
  return Name + " (" + Origin + ", " + executorName(Kind) + ", " +
         std::to_string(Shape.Grid.NChannels) + " channel" +
         (Shape.Grid.NChannels == 1 ? "" : "s") + ", sizes " + Window + ")";
}

AlgorithmTable::AlgorithmTable(int Rank, int NRanks)
    : Rank(Rank), NRanks(NRanks), Info(debugInfoFromEnvironment()) {}

void AlgorithmTable::add(Algorithm A) { Loaded.push_back(std::move(A)); }

const Algorithm *AlgorithmTable::best(const Request &R) const {
  const Algorithm *Best = nullptr;
  for (const Algorithm &A : Loaded) {
    if (!A.serves(R))
      continue;
    if (!Best)
      Best = &A;
    else if (A.Kind != Best->Kind)
      Best = A.Kind == Algorithm::Executor::Kernel ? &A : Best;
    else if (windowWidth(A) < windowWidth(*Best))
      Best = &A;
  }
  return Best;
}

const Algorithm &AlgorithmTable::choose(const Request &R,
                                        const std::function<Algorithm()> &MakeFallback) {
  const Algorithm *Chosen = best(R);
  if (!Chosen) {
    auto Key = std::make_pair(R.Collective, R.Root);
    auto It = Fallbacks.find(Key);
    if (It == Fallbacks.end()) {
      It = Fallbacks.emplace(Key, MakeFallback()).first;
      log("WARN", "no loaded algorithm serves " + describeCall(R) + " on " +
                      std::to_string(NRanks) + " ranks; falling back on " + It->second.describe() +
                      ". Load a plan whose size window holds such calls (cclcCommLoadPlan) "
                      "to run a tuned algorithm");
    }
    Chosen = &It->second;
  }
  if (Info && Logged.emplace(R.Collective, Chosen->Name, Chosen->Kind).second)
    log("INFO", describeCall(R) + " runs " + Chosen->describe());
  return *Chosen;
}

void AlgorithmTable::log(const char *Level, const std::string &Message) const {
  std::ostringstream Line;
  Line << "cclc " << Level << " rank " << Rank << ": " << Message << "\n";
  std::cerr << Line.str() << std::flush;
}

} // namespace cclc::runtime
