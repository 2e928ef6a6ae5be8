//===- Interpreter.h - Runs a schedule with the host primitives -*- C++ -*-===//
//
// The host plan interpreter: it walks one rank's channel program of a
// schedule and calls, for every step, the primitive of templates/host that a
// generated host kernel calls for the same step. Both executors therefore
// share the data path (rounds, chunk layout, packing, element loops), and the
// runtime can mix them across ranks: their messages and results are the same
// bit for bit.
//
// The element type and operator are known only at run time here; each call
// dispatches once to an instantiation for the (type, operator) pair, so the
// step loop and element loops are as specialized as a generated kernel's.
// Steps run by their effect: one the algorithm gave to another primitive of
// the template library (Step::Primitive) runs with its effect's own, since
// every primitive of an effect has that effect's meaning.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "compiler/schedule/Schedule.h"

#include "host/Kernel.h"

#include <cstddef>
#include <cstdint>

namespace cclc::exec {

/// What executors need of a schedule besides its steps, as KernelInfo records
/// it for a generated kernel: the grid that fixes the memory layout, and each
/// buffer's size in units of the per-rank count.
struct ScheduleShape {
  kern::GridShape Grid;
  int32_t InputUnits = 1;
  int32_t OutputUnits = 1;
  /// 0 when no step touches scratch, so that the runtime allocates none.
  int32_t ScratchUnits = 0;
};

/// The shape of S. Its MaxSliceChunks is the largest message (the most chunks
/// a send or receive moves); local copies do not count, since they never pass
/// through a slot. Every executor of S must use this shape, or the ranks cut
/// rounds differently and their messages do not match.
ScheduleShape scheduleShape(const sched::Schedule &S);

/// The size of one element of Type.
size_t dtypeBytes(host::DType Type);

/// The smallest slot that holds the largest message of a schedule of Grid for
/// elements of ElemBytes, whatever the count: the floor of KernelArgs::SlotBytes.
size_t minSlotBytes(const kern::GridShape &Grid, size_t ElemBytes);

/// A schedule ready to run: the plan interpreter's counterpart of a set of
/// generated kernels for one algorithm.
class Interpreter {
public:
  explicit Interpreter(sched::Schedule S);

  const sched::Schedule &schedule() const { return Sched; }
  const ScheduleShape &shape() const { return Shape; }

  /// Runs channel Channel of rank Args.Rank for elements of Type reduced with
  /// Op, with the contract of a generated kernel (host::KernelFn): every rank
  /// calls it once per channel with the same Count and SlotBytes, and its
  /// connections in Args.Net. Throws host::CommError when a peer fails.
  void run(host::DType Type, host::RedOp Op, const host::KernelArgs &Args, int Channel) const;

private:
  sched::Schedule Sched;
  ScheduleShape Shape;
};

} // namespace cclc::exec
