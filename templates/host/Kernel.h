//===- Kernel.h - The skeleton of a host kernel ------------------*- C++ -*-===//
//
// What a generated host kernel receives from the runtime, and the round loop
// it runs. A kernel is one function per (algorithm, dtype, op) that runs one
// channel of the schedule for any rank: the runtime calls it once per
// channel, from as many threads as it likes, with the rank's buffers and its
// connections. KernelInfo describes the kernel so the runtime can size
// buffers and choose it by name.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "common/KernelTypes.h"
#include "common/Layout.h"
#include "host/Primitives.h"

#include <cstddef>
#include <cstdint>

namespace cclc::host {

/// The connections a rank's kernel uses, by peer and channel; the runtime
/// connects them before the kernel runs.
class Links {
public:
  virtual ~Links() = default;
  virtual Outbox &out(int Peer, int Channel) = 0;
  virtual Inbox &in(int Peer, int Channel) = 0;
};

/// One rank's call of a kernel.
struct KernelArgs : kern::CallArgs {
  Links *Net = nullptr;
};

/// Element types and operators a kernel can be instantiated for.
using kern::DType;
using kern::RedOp;

using KernelFn = void (*)(const KernelArgs &Args, int Channel);

/// A generated kernel, as the runtime registers it.
struct KernelInfo {
  const char *Algorithm;  ///< The algorithm's name in its .ccl file.
  const char *Collective; ///< allreduce, allgather, ...
  int NRanks;
  int Root;
  kern::GridShape Shape;
  int InputUnits, OutputUnits, ScratchUnits;
  DType Type;
  RedOp Op;
  /// The message-size window (bytes of the per-rank count) the compiler chose
  /// it for; MaxBytes 0 means no upper bound.
  size_t MinBytes, MaxBytes;
  KernelFn Run;
};

/// A generated file's kernels under a C name, cclc_host_kernels_<algorithm>,
/// so that a program can find them in a shared library it loads at run time
/// (cclc-perf --kernels): the C++ table's name is mangled and its length is
/// not in the symbol.
struct KernelTable {
  const KernelInfo *Kernels;
  size_t Count;
};

/// Runs Body(Layout) once per round of Args.Count elements of T.
template <class T, class F>
inline void forEachRound(const KernelArgs &Args, kern::GridShape Shape, F &&Body) {
  kern::RoundPlan Plan = kern::RoundPlan::make(Shape, Args.Count, sizeof(T), Args.SlotBytes);
  for (size_t R = 0; R < Plan.Rounds; ++R)
    Body(Plan.round(R, sizeof(T)));
}

} // namespace cclc::host
