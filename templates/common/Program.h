//===- Program.h - A schedule as data, and the loop that runs it -*- C++ -*-===//
//
// The plan interpreters of both targets run one rank's schedule as data: an
// array of encoded steps per channel, which runSteps() walks once per round,
// calling for each step the primitive a generated kernel calls for it. The
// host interpreter and the generic CUDA kernel share this loop and this
// encoding, so they cut, pack and combine data alike, and alike with the
// generated kernels, whose primitives they call.
//
// A step's operation is its effect (see common/Primitive.h): a user's
// primitive runs with the effect's own, since every primitive of an effect
// has that effect's meaning. A send that runs together with the receive
// after it is encoded as one exchange, which the primitives perform in
// whichever order the two peers allow.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "common/HostDevice.h"
#include "common/Layout.h"
#include "common/Protocol.h"
#include "common/Slice.h"

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace cclc::kern {

/// The operations of the whole project: what a schedule step does, what an
/// encoded step does, and the effect a template primitive declares. Each
/// names one primitive. Schedule steps use all but the exchanges; lowering
/// (see plan/Program.h) joins a send to the receive that runs with it into
/// one of the two exchanges.
enum class OpKind : uint8_t {
  Send,           ///< Src -> SendPeer.
  Recv,           ///< RecvPeer -> Dst (overwrite).
  RecvReduce,     ///< Dst = Dst (op) data from RecvPeer.
  Copy,           ///< Dst = Src, locally.
  Reduce,         ///< Dst = Dst (op) Src, locally.
  RecvReduceSend, ///< Dst = Dst (op) data from RecvPeer, then Dst -> SendPeer.
  RecvCopySend,   ///< Dst = data from RecvPeer, then Dst -> SendPeer.
  Exchange,       ///< Send Src to SendPeer while receiving Dst from RecvPeer.
  ExchangeReduce, ///< Send Src to SendPeer while combining RecvPeer's message into Dst.
  RecvReduceCopy, ///< Dst = Src (op) data from RecvPeer: a copy and a recv_reduce in one step.
};

/// The buffers of a collective call: the caller's input and output, and the
/// scratch the runtime allocates for algorithms that need it.
enum class BufferKind : uint8_t { Input, Output, Scratch };

/// Chunks [Chunk, Chunk + Count) of one of the rank's buffers, in units of
/// the chunk grid (see common/Layout.h), not bytes.
struct SliceRef {
  BufferKind Buffer = BufferKind::Output;
  int32_t Chunk = 0;
  int32_t Count = 0;
  CCLC_HD constexpr bool overlaps(const SliceRef &Other) const {
    return Buffer == Other.Buffer && Chunk < Other.Chunk + Other.Count &&
           Other.Chunk < Chunk + Count;
  }
  constexpr bool operator==(const SliceRef &) const = default;
};

/// Whether A and B share memory: slices of one buffer that overlap, or, in a
/// call InPlace on one buffer, of input and output (input chunk c is then
/// output chunk c).
CCLC_HD constexpr bool sharesMemory(const SliceRef &A, const SliceRef &B, bool InPlace) {
  const bool Aliased = InPlace && (A.Buffer == BufferKind::Input) != (B.Buffer == BufferKind::Input) &&
                       A.Buffer != BufferKind::Scratch && B.Buffer != BufferKind::Scratch;
  return A.overlaps(B) || (Aliased && SliceRef{B.Buffer, A.Chunk, A.Count}.overlaps(B));
}

/// Bits of ProgramStep::Stable: what the step sends stays as sent until its
/// receiver has taken it, in a call out of place or in place (see
/// plan/StableSends.h).
inline constexpr uint8_t StableOutOfPlace = 1;
inline constexpr uint8_t StableInPlace = 2;

/// One encoded step. Which fields it uses depends on Op: a send reads Src
/// and sends to SendPeer; a receive writes Dst from RecvPeer; local steps
/// read Src and write Dst; fused steps receive Dst from RecvPeer and send it
/// on to SendPeer; exchanges use all four.
struct ProgramStep {
  OpKind Op = OpKind::Copy;
  int32_t RecvPeer = -1;
  int32_t SendPeer = -1;
  SliceRef Src;
  SliceRef Dst;
  /// How the step's messages travel (common/Protocol.h).
  Protocol Proto = Protocol::Simple;
  /// StableOutOfPlace and StableInPlace, for a step that sends Src: where
  /// the receiver may read the message in the sender's buffer.
  uint8_t Stable = 0;
};

/// What fixes a schedule's memory layout: its grid, and each buffer's size in
/// units of the per-rank count (0 scratch units when no step touches
/// scratch).
struct ProgramShape {
  GridShape Grid;
  int32_t InputUnits = 1;
  int32_t OutputUnits = 1;
  int32_t ScratchUnits = 0;
};

/// One rank's encoded program, as the executor addresses it: channel C's
/// steps are Steps[ChannelBegin[C]] up to Steps[ChannelBegin[C + 1]].
struct ProgramView {
  const ProgramStep *Steps = nullptr;
  const uint32_t *ChannelBegin = nullptr;
  ProgramShape Shape;
};

/// One rank's buffers in one round, as the slices the primitives take.
template <class T> struct ProgramBuffers {
  const ProgramShape *Shape;
  const Layout *Grid;
  const T *Input;
  T *Output;
  T *Scratch;

  CCLC_HD int32_t units(BufferKind Buf) const {
    return Buf == BufferKind::Input    ? Shape->InputUnits
           : Buf == BufferKind::Output ? Shape->OutputUnits
                                     : Shape->ScratchUnits;
  }
  CCLC_HD T *writable(BufferKind Buf) const { return Buf == BufferKind::Output ? Output : Scratch; }
  CCLC_HD Slice<const T> source(const SliceRef &S) const {
    const T *Base = S.Buffer == BufferKind::Input ? Input : writable(S.Buffer);
    return {Base, Grid, units(S.Buffer), S.Chunk, S.Count};
  }
  /// A verified schedule never writes its input, and the encoder refuses one
  /// that would.
  CCLC_HD Slice<T> destination(const SliceRef &S) const {
    return {writable(S.Buffer), Grid, units(S.Buffer), S.Chunk, S.Count};
  }
  /// The call runs in place: its input is its output.
  CCLC_HD bool inPlace() const {
    return static_cast<const void *>(Input) == static_cast<const void *>(Output);
  }
  /// Whether A and B share memory in this call.
  CCLC_HD bool overlap(const SliceRef &A, const SliceRef &B) const {
    return sharesMemory(A, B, inPlace());
  }
};

/// Whether a target's primitives let a receiver read a message where its
/// sender keeps it, and so take with each slice a step sends whether it is
/// Stable (the host's, between processes that map each other's buffers).
template <class Prims>
inline constexpr bool ReadsInPlace = requires { requires Prims::ReadsInPlace; };

/// The slice step S sends from its Src, marked Stable where the target reads
/// in place and the plan says the slice stays as sent in this call.
template <class Prims, class T>
CCLC_HD Slice<const T> sentSlice(const ProgramStep &S, const ProgramBuffers<T> &Bufs) {
  Slice<const T> Sent = Bufs.source(S.Src);
  if constexpr (ReadsInPlace<Prims>)
    Sent.Stable = (S.Stable & (Bufs.inPlace() ? StableInPlace : StableOutOfPlace)) != 0;
  return Sent;
}

/// Whether S receives a whole message into Dst, unmixed with what Dst held:
/// a message a sender may write there itself.
CCLC_HD constexpr bool receivesWhole(const ProgramStep &S) {
  return S.Op == OpKind::Recv || S.Op == OpKind::RecvCopySend;
}

/// Runs step I of Steps (of Count) with the primitives of Prims. Prims is a
/// target's table of primitives (static member templates named like the
/// primitives, over element type T and operator Op); Net gives the channel's
/// Outbox and Inbox by peer, as the target's Links does.
CCLC_HD_UNCHECKED
template <class Prims, class T, class Op, class Net>
CCLC_HD void runStep(const ProgramStep *Steps, uint32_t I, uint32_t Count,
                     const ProgramBuffers<T> &Bufs, Net &Links, int Channel) {
  const ProgramStep &S = Steps[I];
  switch (S.Op) {
  case OpKind::Send:
    // A receive straight after a send may be ready before the send is
    // done: the executor may offer its buffer first (see
    // sendBeforeReceive), when the send does not read it.
    if (I + 1 < Count && receivesWhole(Steps[I + 1]) && !Bufs.overlap(S.Src, Steps[I + 1].Dst))
      Prims::template sendBeforeReceive<T, Op>(
          Links.out(S.SendPeer, Channel), sentSlice<Prims>(S, Bufs),
          Links.in(Steps[I + 1].RecvPeer, Channel), Bufs.destination(Steps[I + 1].Dst));
    else
      Prims::template send<T, Op>(Links.out(S.SendPeer, Channel),
                                  sentSlice<Prims>(S, Bufs));
    break;
  case OpKind::Recv:
    Prims::template recv<T, Op>(Links.in(S.RecvPeer, Channel), Bufs.destination(S.Dst));
    break;
  case OpKind::RecvReduce:
    Prims::template recvReduce<T, Op>(Links.in(S.RecvPeer, Channel), Bufs.destination(S.Dst));
    break;
  case OpKind::Copy:
    Prims::template copy<T, Op>(Bufs.source(S.Src), Bufs.destination(S.Dst));
    break;
  case OpKind::Reduce:
    Prims::template reduce<T, Op>(Bufs.source(S.Src), Bufs.destination(S.Dst));
    break;
  case OpKind::RecvReduceSend:
    Prims::template recvReduceSend<T, Op>(Links.in(S.RecvPeer, Channel),
                                          Links.out(S.SendPeer, Channel), Bufs.destination(S.Dst));
    break;
  case OpKind::RecvCopySend:
    Prims::template recvCopySend<T, Op>(Links.in(S.RecvPeer, Channel),
                                        Links.out(S.SendPeer, Channel), Bufs.destination(S.Dst));
    break;
  case OpKind::Exchange:
    Prims::template exchange<T, Op>(Links.out(S.SendPeer, Channel), Links.in(S.RecvPeer, Channel),
                                    sentSlice<Prims>(S, Bufs),
                                    Bufs.destination(S.Dst));
    break;
  case OpKind::ExchangeReduce:
    Prims::template exchangeReduce<T, Op>(Links.out(S.SendPeer, Channel),
                                          Links.in(S.RecvPeer, Channel),
                                          sentSlice<Prims>(S, Bufs),
                                          Bufs.destination(S.Dst));
    break;
  case OpKind::RecvReduceCopy:
    Prims::template recvReduceCopy<T, Op>(Links.in(S.RecvPeer, Channel), Bufs.source(S.Src),
                                          Bufs.destination(S.Dst));
    break;
  }
}

/// Runs Count encoded steps of one channel for one round: a step of a line
/// protocol P with the table Prims::Lines<P>, every other with Prims (see
/// runStep). A target whose tables are all one runs every step with it.
CCLC_HD_UNCHECKED
template <class Prims, class T, class Op, class Net>
CCLC_HD void runSteps(const ProgramStep *Steps, uint32_t Count, const ProgramBuffers<T> &Bufs,
                      Net &Links, int Channel) {
  using LL = typename Prims::template Lines<Protocol::LL>;
  using LL128 = typename Prims::template Lines<Protocol::LL128>;
  constexpr bool OneTable = std::is_same_v<LL, Prims> && std::is_same_v<LL128, Prims>;
  for (uint32_t I = 0; I < Count; ++I) {
    if (OneTable || Steps[I].Proto == Protocol::Simple)
      runStep<Prims, T, Op>(Steps, I, Count, Bufs, Links, Channel);
    else if (Steps[I].Proto == Protocol::LL)
      runStep<LL, T, Op>(Steps, I, Count, Bufs, Links, Channel);
    else
      runStep<LL128, T, Op>(Steps, I, Count, Bufs, Links, Channel);
  }
}

} // namespace cclc::kern
