//===- Interpreter.h - Runs a schedule with the host primitives -*- C++ -*-===//
//
// The host plan interpreter: it runs each rank's program of a schedule,
// encoded once (Program.h), through the step loop of host/Interpreter.h,
// which calls for every step the primitive of templates/host that a
// generated host kernel calls for the same step. Both executors therefore
// share the data path (rounds, chunk layout, packing, element loops), and the
// runtime can mix them across ranks: their messages and results are the same
// bit for bit. The GPU's interpreter kernel runs the same encoded programs.
//
// The element type and operator are known only at run time here; each call
// dispatches once to an instantiation for the (type, operator) pair, so the
// step loop and element loops are as specialized as a generated kernel's.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "plan/Program.h"

#include "plan/Schedule.h"

#include "host/Kernel.h"
#include "host/Trace.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace cclc::exec {

/// What executors need of a schedule besides its steps, as KernelInfo records
/// it for a generated kernel: the grid that fixes the memory layout, and each
/// buffer's size in units of the per-rank count.
using ScheduleShape = kern::ProgramShape;

/// The smallest slot that holds the largest message of a schedule of Grid for
/// elements of ElemBytes, whatever the count: the floor of KernelArgs::SlotBytes.
size_t minSlotBytes(const kern::GridShape &Grid, size_t ElemBytes);

/// A schedule ready to run: the plan interpreter's counterpart of a set of
/// generated kernels for one algorithm.
class Interpreter {
public:
  explicit Interpreter(sched::Schedule S);
  /// With Shape, the shape of every rank's steps, which S need not all hold:
  /// the ranks it holds no steps for get empty programs.
  Interpreter(sched::Schedule S, const kern::ProgramShape &Shape);

  const sched::Schedule &schedule() const { return Sched; }
  const ScheduleShape &shape() const { return Shape; }
  /// Rank's encoded program, for executors elsewhere (the GPU's).
  const plan::EncodedProgram &program(int Rank) const;

  /// Runs channel Channel of rank Args.Rank for elements of Type reduced with
  /// Op, with the contract of a generated kernel (host::KernelFn): every rank
  /// calls it once per channel with the same Count and SlotBytes, and its
  /// connections in Args.Net. Throws host::CommError when a peer fails.
  void run(host::DType Type, host::RedOp Op, const host::KernelArgs &Args, int Channel) const;
  /// What run() with these arguments would do, recorded without running it,
  /// for a caller that repeats the call on the same buffers.
  std::unique_ptr<host::Trace> trace(host::DType Type, host::RedOp Op,
                                     const host::KernelArgs &Args, int Channel) const;

private:
  void encodeAll();
  /// The contract run() and trace() assert.
  void check(host::DType Type, const host::KernelArgs &Args, int Channel) const;

  sched::Schedule Sched;
  ScheduleShape Shape;
  /// Every rank's program: the runtime runs one rank, tests run them all.
  std::vector<plan::EncodedProgram> Programs;
};

} // namespace cclc::exec
