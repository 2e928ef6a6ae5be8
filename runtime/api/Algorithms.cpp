//===- Algorithms.cpp - Loaded algorithms and the choice per call ---------===//

#include "plan/Vocabulary.h"
#include "runtime/api/Algorithms.h"
#include "runtime/api/Environment.h"
#include "runtime/api/LinkSets.h"
#include "runtime/api/Log.h"
#include "runtime/api/Types.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <limits>

namespace cclc::runtime {

namespace {

/// The window's width; unbounded windows are the widest.
uint64_t windowWidth(const Algorithm &A) {
  return A.MaxBytes ? *A.MaxBytes - A.MinBytes : std::numeric_limits<uint64_t>::max();
}

const char *executorName(Algorithm::Executor Kind, Target Where) {
  switch (Kind) {
  case Algorithm::Executor::Kernel: return "generated kernel";
  case Algorithm::Executor::CudaKernel: return "generated CUDA kernel";
  case Algorithm::Executor::Interpreter: break;
  }
  return Where == Target::Gpu ? "GPU plan interpreter" : "plan interpreter";
}

/// The kernel of Kernels for R's type and operator; any operator of the type
/// for collectives that do not reduce, since moving data does not depend on
/// it. A null function when there is none.
template <class Fn>
Fn findKernel(const std::map<std::pair<host::DType, host::RedOp>, Fn> &Kernels,
              plan::CollectiveKind Collective, const Request &R) {
  if (auto It = Kernels.find({R.Type, R.Op}); It != Kernels.end())
    return It->second;
  if (plan::reduces(Collective))
    return nullptr;
  for (const auto &[Key, Kernel] : Kernels)
    if (Key.first == R.Type)
      return Kernel;
  return nullptr;
}

/// A with its Identity set.
Algorithm identified(Algorithm A) {
  // FNV-1a over the fields that fix the schedule: stable across processes
  // and builds, unlike std::hash.
  std::string Key =
      A.Name + '/' + std::to_string(int(A.Collective)) + '/' + std::to_string(A.Root) + '/' +
      std::to_string(A.Shape.Grid.NChannels) + '/' + std::to_string(A.Shape.Grid.ChunksPerChannel) +
      '/' + std::to_string(A.Shape.Grid.MaxSliceChunks) + '/' + std::to_string(A.Shape.InputUnits) +
      '/' + std::to_string(A.Shape.OutputUnits) + '/' + std::to_string(A.Shape.ScratchUnits);
  uint64_t H = 0xcbf29ce484222325ull;
  for (unsigned char C : Key)
    H = (H ^ C) * 0x100000001b3ull;
  A.Identity = H;
  return A;
}

} // namespace

std::string describeCall(const Request &R) {
  return std::string(plan::collectiveName(R.Collective)) + " of " + plan::formatBytes(R.bytes()) +
         " (" + std::string(plan::dtypeName(R.Type)) +
         (plan::reduces(R.Collective) ? ", " + std::string(plan::redOpName(R.Op)) : "") +
         (plan::hasRoot(R.Collective) ? ", root " + std::to_string(R.Root) : "") + ")";
}

std::string planTag(const std::string &Name, uint64_t Identity) {
  char Short[9];
  std::snprintf(Short, sizeof Short, "%08x", unsigned(uint32_t(Identity ^ (Identity >> 32))));
  return Name + "#" + Short;
}

uint64_t Request::bytes() const { return uint64_t(Count) * plan::dtypeBytes(Type); }

int Algorithm::fit(const Request &R) const {
  auto Score = [](std::optional<bool> Chosen, bool Is) {
    return !Chosen ? 0 : *Chosen == Is ? 1 : -2;
  };
  return Score(ForInPlace, R.InPlace) + Score(ForMapped, R.Mapped);
}

bool Algorithm::holds(uint64_t Bytes) const {
  return Bytes >= MinBytes && (!MaxBytes || Bytes <= *MaxBytes);
}

host::KernelFn Algorithm::kernelFor(const Request &R) const {
  return findKernel(Kernels, Collective, R);
}

const cuda::KernelInfo *Algorithm::cudaKernelFor(const Request &R) const {
  return findKernel(CudaKernels, Collective, R);
}

bool Algorithm::serves(const Request &R) const {
  if (Collective != R.Collective || (plan::hasRoot(Collective) && Root != R.Root) ||
      !holds(R.bytes()))
    return false;
  switch (Kind) {
  case Executor::Kernel: return R.Where == Target::Host && kernelFor(R);
  case Executor::CudaKernel: return R.Where == Target::Gpu && cudaKernelFor(R);
  case Executor::Interpreter: break;
  }
  return true;
}

void Algorithm::run(const Request &R, const host::KernelArgs &Args, int Channel) const {
  if (Kind == Executor::Kernel)
    kernelFor(R)(Args, Channel);
  else
    Interp->run(R.Type, R.Op, Args, Channel);
}

std::unique_ptr<host::Trace> Algorithm::trace(const Request &R,
                                              const host::KernelArgs &Args) const {
  if (Kind != Executor::Interpreter || Shape.Grid.NChannels != 1 ||
      kern::RoundPlan::make(Shape.Grid, Args.Count, plan::dtypeBytes(R.Type), Args.SlotBytes)
              .Rounds > MaxTracedRounds)
    return nullptr;
  return Interp->trace(R.Type, R.Op, Args, 0);
}

/// "LL128 protocol", as the log names a protocol.
static std::string protocolLabel(sched::Protocol P) {
  std::string Name(plan::protocolName(P));
  std::transform(Name.begin(), Name.end(), Name.begin(),
                 [](unsigned char C) { return char(std::toupper(C)); });
  return Name + " protocol";
}

std::string Algorithm::describe(Target Where) const {
  std::string Window = MaxBytes ? plan::formatBytes(MinBytes) + ".." + plan::formatBytes(*MaxBytes)
                                : plan::formatBytes(MinBytes) + " and up";
  return Name + " (" + Origin + ", " + executorName(Kind, Where) + ", " +
         std::to_string(Shape.Grid.NChannels) + " channel" +
         (Shape.Grid.NChannels == 1 ? "" : "s") +
         (ForInPlace ? *ForInPlace ? ", in-place calls" : ", out-of-place calls" : "") +
         (ForMapped ? *ForMapped ? ", mapped buffers" : ", unmapped buffers" : "") +
         (Lines != sched::Protocol::Simple && Where == Target::Gpu ? ", " + protocolLabel(Lines)
                                                                  : "") +
         (SmallNet && Where == Target::Host
              ? ", calls to " + plan::formatBytes(SmallCallBytes) + " on FIFOs of " +
                    std::to_string(SmallSlotBytes) + "-byte slots"
              : "") +
         ", sizes " + Window + ")";
}

AlgorithmTable::AlgorithmTable(int Rank, int NRanks)
    : Rank(Rank), NRanks(NRanks), Info(debugInfoFromEnvironment()) {}

void AlgorithmTable::add(Algorithm A) {
  AsksMapped |= A.ForMapped.has_value();
  Loaded.push_back(identified(std::move(A)));
  LastChoice = nullptr;
}

const Algorithm *AlgorithmTable::withIdentity(uint64_t Identity) const {
  for (const Algorithm &A : Loaded)
    if (A.Identity == Identity)
      return &A;
  for (const auto &[Key, A] : Fallbacks)
    if (A.Identity == Identity)
      return &A;
  return nullptr;
}

const Algorithm *AlgorithmTable::best(const Request &R) const {
  const Algorithm *Best = nullptr;
  for (const Algorithm &A : Loaded) {
    if (!A.serves(R))
      continue;
    if (!Best)
      Best = &A;
    else if (A.Kind != Best->Kind)
      // The kinds of generated kernel never serve the same target.
      Best = A.Kind != Algorithm::Executor::Interpreter ? &A : Best;
    else if (A.fit(R) != Best->fit(R))
      Best = A.fit(R) > Best->fit(R) ? &A : Best;
    else if (windowWidth(A) < windowWidth(*Best))
      Best = &A;
  }
  return Best;
}

const Algorithm &AlgorithmTable::choose(const Request &R,
                                        const std::function<Algorithm()> &MakeFallback) {
  if (LastChoice && R == LastCall)
    return *LastChoice;
  const Algorithm *Chosen = best(R);
  if (!Chosen) {
    auto Key = std::make_tuple(R.Collective, R.Root, R.Where);
    auto It = Fallbacks.find(Key);
    if (It == Fallbacks.end()) {
      It = Fallbacks.emplace(Key, identified(MakeFallback())).first;
      log("WARN", "no loaded algorithm serves " + describeCall(R) + " on " +
                      std::to_string(NRanks) + " ranks; falling back on " +
                      It->second.describe(R.Where) +
                      ". Load a plan whose size window holds such calls (cclcCommLoadPlan) "
                      "to run a tuned algorithm");
    }
    Chosen = &It->second;
  }
  // Looked up before it is inserted: an insertion makes a node even where
  // the key is there, and every call asks.
  if (Info && !Logged.count({Chosen, R.Where})) {
    Logged.insert({Chosen, R.Where});
    log("INFO", describeCall(R) + " runs " + Chosen->describe(R.Where));
  }
  LastCall = R;
  LastChoice = Chosen;
  return *Chosen;
}

void AlgorithmTable::log(const char *Level, const std::string &Message) const {
  logLine(Level, Rank, Message);
}

} // namespace cclc::runtime
