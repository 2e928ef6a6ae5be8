//===- ExecReference.h - A schedule's meaning, on plain arrays --*- C++ -*-===//
//
// The test reference of the executors: it runs a schedule one step at a time
// on plain arrays, with nothing of the executors' data path (no slots, no
// primitives, no threads). It cuts the count into the rounds and chunks of
// common/Layout.h, the one definition of where data lies, and applies the
// operators of host/Types.h in the schedule's order, so an executor that
// implements the execution model gives the same bits.
//
// Every round is an event-driven simulation of the execution model: any
// rank's channel whose next step can run (a receive needs a message waiting
// on its connection) runs it. Connections are unbounded FIFOs, so sends never
// block, and the sends of a WithNext group (an exchange) go when the group
// starts, reading their data before its receives land, as the model says.
// The verifier proves that the order in which ranks run does not change the
// result.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "plan/Schedule.h"
#include "runtime/exec/Interpreter.h"

#include "common/Layout.h"

#include <gtest/gtest.h>

#include <deque>
#include <vector>

namespace cclc::test {

/// One rank's buffers: Input, Output and Scratch hold the shape's units of
/// the count each.
template <class T> struct RankArrays {
  std::vector<T> Input, Output, Scratch;
};

template <class T, class Op> class Reference {
public:
  Reference(const sched::Schedule &S, size_t Count, size_t SlotBytes,
            std::vector<RankArrays<T>> &Ranks)
      : S(S), Shape(plan::scheduleShape(S)), Count(Count), SlotBytes(SlotBytes), Ranks(Ranks),
        Queues(size_t(S.NRanks) * S.NRanks * S.NChannels) {}

  /// Runs every round; a deadlock or a message of the wrong size is a test
  /// failure.
  void run() {
    kern::RoundPlan Plan = kern::RoundPlan::make(Shape.Grid, Count, sizeof(T), SlotBytes);
    for (size_t R = 0; R < Plan.Rounds; ++R)
      if (!runRound(Plan.round(R, sizeof(T))))
        return;
  }

private:
  struct Actor {
    int32_t Rank = 0;
    int32_t Channel = 0;
    size_t Next = 0;
    /// One past the WithNext group whose sends already went.
    size_t SentUpTo = 0;
  };

  std::deque<std::vector<T>> &queue(int32_t Sender, int32_t Receiver, int32_t Channel) {
    return Queues[(size_t(Sender) * S.NRanks + Receiver) * S.NChannels + Channel];
  }

  T *base(int32_t Rank, sched::BufferKind Buf) {
    RankArrays<T> &A = Ranks[Rank];
    return (Buf == sched::BufferKind::Input    ? A.Input
            : Buf == sched::BufferKind::Output ? A.Output
                                               : A.Scratch)
        .data();
  }
  int32_t units(sched::BufferKind Buf) const {
    return Buf == sched::BufferKind::Input    ? Shape.InputUnits
           : Buf == sched::BufferKind::Output ? Shape.OutputUnits
                                              : Shape.ScratchUnits;
  }

  /// Calls Fn(element) for every element of Sl, in chunk order.
  template <class F>
  void forEachElement(const kern::Layout &Grid, int32_t Rank, const sched::Slice &Sl, F &&Fn) {
    T *Base = base(Rank, Sl.Buffer);
    for (int32_t I = 0; I < Sl.Count; ++I) {
      kern::Segment Seg = Grid.chunk(units(Sl.Buffer), Sl.Chunk + I);
      for (size_t E = 0; E < Seg.Elems; ++E)
        Fn(Base[Seg.Begin + E]);
    }
  }
  std::vector<T> read(const kern::Layout &Grid, int32_t Rank, const sched::Slice &Sl) {
    std::vector<T> Data;
    forEachElement(Grid, Rank, Sl, [&](T &X) { Data.push_back(X); });
    return Data;
  }
  void write(const kern::Layout &Grid, int32_t Rank, const sched::Slice &Sl,
             const std::vector<T> &Data, bool Reduce) {
    size_t K = 0;
    Op Fn;
    forEachElement(Grid, Rank, Sl, [&](T &X) {
      X = Reduce ? Fn(X, Data[K]) : Data[K];
      ++K;
    });
  }

  /// Runs A's next step unless it waits for a message. The sends of a
  /// WithNext group go when the group starts: they read their data before
  /// any receive of the group lands.
  bool tryStep(const kern::Layout &Grid, Actor &A) {
    using sched::OpKind;
    const std::vector<sched::Step> &Steps = S.Ranks[A.Rank].Channels[A.Channel].Steps;
    if (A.Next >= A.SentUpTo) {
      A.SentUpTo = A.Next + 1;
      while (Steps[A.SentUpTo - 1].WithNext && A.SentUpTo < Steps.size())
        ++A.SentUpTo;
      for (size_t I = A.Next; I < A.SentUpTo; ++I)
        if (Steps[I].Op == OpKind::Send)
          queue(A.Rank, Steps[I].Peer, A.Channel).push_back(read(Grid, A.Rank, Steps[I].Src));
    }
    const sched::Step &St = Steps[A.Next];
    std::vector<T> Data;
    if (sched::opReceives(St.Op)) {
      std::deque<std::vector<T>> &In = queue(St.Peer, A.Rank, A.Channel);
      if (In.empty())
        return false;
      Data = std::move(In.front());
      In.pop_front();
      EXPECT_EQ(Data.size(), Grid.sliceElems(units(St.Dst.Buffer), St.Dst.Chunk, St.Dst.Count))
          << "rank " << A.Rank << " channel " << A.Channel << " step " << A.Next
          << " receives a message of the wrong size";
    } else if (St.Op != OpKind::Send) {
      Data = read(Grid, A.Rank, St.Src); // a local source is read before the write
    }
    switch (St.Op) {
    case OpKind::Send: // sent when its group started
      break;
    case OpKind::Recv:
    case OpKind::Copy:
    case OpKind::RecvCopySend:
      write(Grid, A.Rank, St.Dst, Data, false);
      break;
    case OpKind::RecvReduce:
    case OpKind::Reduce:
    case OpKind::RecvReduceSend:
      write(Grid, A.Rank, St.Dst, Data, true);
      break;
    case OpKind::RecvReduceCopy:
      write(Grid, A.Rank, St.Dst, read(Grid, A.Rank, St.Src), false);
      write(Grid, A.Rank, St.Dst, Data, true);
      break;
    case OpKind::Exchange:
    case OpKind::ExchangeReduce: ADD_FAILURE() << "a schedule step is never an exchange"; break;
    }
    if (St.Op == OpKind::RecvCopySend || St.Op == OpKind::RecvReduceSend)
      queue(A.Rank, St.SendPeer, A.Channel).push_back(read(Grid, A.Rank, St.Dst));
    ++A.Next;
    return true;
  }

  bool runRound(const kern::Layout &Grid) {
    std::vector<Actor> Actors;
    for (int32_t R = 0; R < S.NRanks; ++R)
      for (int32_t C = 0; C < S.NChannels; ++C)
        Actors.push_back({R, C, 0});
    for (;;) {
      bool Progress = false, Finished = true;
      for (Actor &A : Actors) {
        const size_t Steps = S.Ranks[A.Rank].Channels[A.Channel].Steps.size();
        while (A.Next < Steps && tryStep(Grid, A))
          Progress = true;
        Finished = Finished && A.Next == Steps;
      }
      if (Finished)
        break;
      if (!Progress) {
        ADD_FAILURE() << "the reference deadlocks: the schedule's receives wait for messages "
                         "nobody sends";
        return false;
      }
    }
    for (const std::deque<std::vector<T>> &Q : Queues)
      EXPECT_TRUE(Q.empty()) << "a message was sent that nobody received";
    return true;
  }

  const sched::Schedule &S;
  exec::ScheduleShape Shape;
  size_t Count;
  size_t SlotBytes;
  std::vector<RankArrays<T>> &Ranks;
  /// By (sender, receiver, channel).
  std::vector<std::deque<std::vector<T>>> Queues;
};

} // namespace cclc::test
