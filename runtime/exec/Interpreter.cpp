//===- Interpreter.cpp - Runs a schedule with the host primitives ---------===//

#include "runtime/exec/Interpreter.h"

#include "common/Dispatch.h"
#include "plan/Assert.h"
#include "host/Interpreter.h"

#include <utility>

namespace cclc::exec {

size_t minSlotBytes(const kern::GridShape &Grid, size_t ElemBytes) {
  size_t Align = ElemBytes >= kern::PieceAlignBytes ? 1 : kern::PieceAlignBytes / ElemBytes;
  return size_t(Grid.MaxSliceChunks) * Align * ElemBytes;
}

Interpreter::Interpreter(sched::Schedule S)
    : Sched(std::move(S)), Shape(plan::scheduleShape(Sched)) {
  encodeAll();
}

Interpreter::Interpreter(sched::Schedule S, const kern::ProgramShape &Shape)
    : Sched(std::move(S)), Shape(Shape) {
  encodeAll();
}

void Interpreter::encodeAll() {
  plan::MessageMatch Match(Sched);
  for (int Rank = 0; Rank < Sched.NRanks; ++Rank)
    Programs.push_back(plan::encodeProgram(Sched, Shape, Rank, Match));
}

const plan::EncodedProgram &Interpreter::program(int Rank) const {
  CCLC_ASSERT(Rank >= 0 && Rank < Sched.NRanks, "the rank is not one of the schedule's");
  return Programs[size_t(Rank)];
}

void Interpreter::check(host::DType Type, const host::KernelArgs &Args, int Channel) const {
  CCLC_ASSERT(Args.Rank >= 0 && Args.Rank < Sched.NRanks, "the rank is not one of the schedule's");
  CCLC_ASSERT(Channel >= 0 && Channel < Sched.NChannels,
              "the channel is not one of the schedule's");
  CCLC_ASSERT(Args.Net, "the rank has no connections");
  CCLC_ASSERT(Args.SlotBytes >= minSlotBytes(Shape.Grid, plan::dtypeBytes(Type)),
              "a slot cannot hold the schedule's largest message");
  CCLC_ASSERT(Shape.ScratchUnits == 0 || Args.Scratch || Args.Count == 0,
              "the schedule needs scratch memory");
}

void Interpreter::run(host::DType Type, host::RedOp Op, const host::KernelArgs &Args,
                      int Channel) const {
  check(Type, Args, Channel);
  kern::ProgramView View = Programs[size_t(Args.Rank)].view();
  kern::withTypeAndOperator<host::TypeSet>(Type, Op, [&]<class T, class O>() {
    host::interpretChannel<T, O>(Args, View, Channel);
  });
}

std::unique_ptr<host::Trace> Interpreter::trace(host::DType Type, host::RedOp Op,
                                                const host::KernelArgs &Args, int Channel) const {
  check(Type, Args, Channel);
  kern::ProgramView View = Programs[size_t(Args.Rank)].view();
  std::unique_ptr<host::Trace> Recorded;
  kern::withTypeAndOperator<host::TypeSet>(Type, Op, [&]<class T, class O>() {
    Recorded = std::make_unique<host::TypedTrace<T, O>>(Args, View, Channel);
  });
  return Recorded;
}

} // namespace cclc::exec
