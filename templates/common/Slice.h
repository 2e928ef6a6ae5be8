//===- Slice.h - The slices the primitives move ------------------*- C++ -*-===//
//
// A primitive moves a slice: consecutive chunks of one buffer in one round
// (see Layout.h). The chunks need not touch in memory, so primitives walk a
// slice by contiguous runs, and a message holds a slice's runs one after
// another. Host and device primitives share these walks, so both targets cut
// a slice into the same runs and pack a message the same way.
//
// The walks are loops over a RunCursor rather than calls of one walk from
// another through a lambda, whose calls nvcc would check for both sides (see
// CCLC_HD_UNCHECKED).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "common/HostDevice.h"
#include "common/Layout.h"

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace cclc::kern {

template <class T> class RunCursor;

/// Chunks [Chunk, Chunk + Count) of a buffer of Units units, in one round.
template <class T> struct Slice {
  T *Base = nullptr;
  const Layout *Grid = nullptr;
  int32_t Units = 1;
  int32_t Chunk = 0;
  int32_t Count = 0;
  /// Set on a slice a step sends when nothing writes it again before the
  /// call ends (common/Program.h): its receiver may read it where it lies.
  bool Stable = false;

  CCLC_HD size_t elems() const { return Grid->sliceElems(Units, Chunk, Count); }
  CCLC_HD size_t bytes() const { return elems() * sizeof(T); }

  /// Calls Fn(pointer, elements) for each contiguous run, in chunk order.
  CCLC_HD_UNCHECKED
  template <class F> CCLC_HD void forEachRun(F &&Fn) const {
    for (RunCursor<T> Run(*this); Run.next();)
      Fn(Run.ptr(), Run.elems());
  }
};

/// Steps through the contiguous runs of a slice in chunk order: a chunk that
/// starts where the run before it ends joins that run, and runs without
/// elements are passed over.
template <class T> class RunCursor {
public:
  CCLC_HD explicit RunCursor(const Slice<T> &S) : S(S) {}

  /// Moves to the next run; false once there is none.
  CCLC_HD bool next() {
    At += Elems;
    Ptr = NextPtr;
    Elems = NextElems;
    while (Read < S.Count) {
      Segment C = S.Grid->chunk(S.Units, S.Chunk + Read++);
      T *Begin = S.Base + C.Begin;
      if (Ptr && Ptr + Elems == Begin) {
        Elems += C.Elems;
        continue;
      }
      if (Elems) {
        // The chunk ends this run and begins the next.
        NextPtr = Begin;
        NextElems = C.Elems;
        return true;
      }
      Ptr = Begin;
      Elems = C.Elems;
    }
    NextPtr = nullptr;
    NextElems = 0;
    return Elems != 0;
  }
  CCLC_HD T *ptr() const { return Ptr; }
  CCLC_HD size_t elems() const { return Elems; }
  /// Where the run starts in a message of the slice, in elements; once the
  /// runs are done, the slice's elements.
  CCLC_HD size_t at() const { return At; }

private:
  const Slice<T> &S;
  int32_t Read = 0; ///< Chunks read so far.
  T *Ptr = nullptr; ///< The current run.
  size_t Elems = 0;
  size_t At = 0;
  T *NextPtr = nullptr; ///< The start of the next run, read with the current one.
  size_t NextElems = 0;
};

/// Walks two slices of equal size together, calling Fn(a, b, elements) on
/// the runs they share.
CCLC_HD_UNCHECKED
template <class A, class B, class F>
CCLC_HD void zipRuns(const Slice<A> &X, const Slice<B> &Y, F &&Fn) {
  // Slices have few runs; walk X's runs and cut Y's chunks to match.
  B *YPtr = nullptr;
  size_t YLeft = 0;
  int32_t YChunk = 0;
  for (RunCursor<A> Run(X); Run.next();) {
    A *XPtr = Run.ptr();
    for (size_t XLeft = Run.elems(); XLeft;) {
      while (YLeft == 0 && YChunk < Y.Count) {
        Segment S = Y.Grid->chunk(Y.Units, Y.Chunk + YChunk++);
        YPtr = Y.Base + S.Begin;
        YLeft = S.Elems;
      }
      size_t N = XLeft < YLeft ? XLeft : YLeft;
      Fn(XPtr, YPtr, N);
      XPtr += N;
      XLeft -= N;
      YPtr += N;
      YLeft -= N;
    }
  }
}

//===----------------------------------------------------------------------===//
// Slices through messages
//
// The walks below move a slice through the connections of either target:
// Outbox::acquire() returns a free slot and post(Bytes) publishes it;
// Inbox::peek(Bytes) returns the next message and release() frees it. A
// device connection returns null instead once a wait of the block failed,
// and then the walk moves nothing.
//===----------------------------------------------------------------------===//

/// Packs Src into a free slot of Out and posts it, calling Fn(run, part,
/// elements) to fill the part of the message that holds each run.
CCLC_HD_UNCHECKED
template <class Outbox, class T, class F>
CCLC_HD void sendRuns(Outbox &Out, const Slice<T> &Src, F &&Fn) {
  auto *Msg = reinterpret_cast<std::remove_const_t<T> *>(Out.acquire());
  if (!Msg)
    return;
  RunCursor<T> Run(Src);
  while (Run.next())
    Fn(Run.ptr(), Msg + Run.at(), Run.elems());
  Out.post(Run.at() * sizeof(T));
}

/// Receives In's next message into Dst, calling Fn(part, run, elements) for
/// each run and the part of the message that goes there.
CCLC_HD_UNCHECKED
template <class Inbox, class T, class F>
CCLC_HD void receiveRuns(Inbox &In, const Slice<T> &Dst, F &&Fn) {
  const T *Msg = reinterpret_cast<const T *>(In.peek(Dst.bytes()));
  if (!Msg)
    return;
  for (RunCursor<T> Run(Dst); Run.next();)
    Fn(Msg + Run.at(), Run.ptr(), Run.elems());
  In.release();
}

/// Receives In's next message into Dst and sends one of the same size to
/// Out, calling Fn(part, run, outgoing part, elements) for each run.
CCLC_HD_UNCHECKED
template <class Inbox, class Outbox, class T, class F>
CCLC_HD void relayRuns(Inbox &In, Outbox &Out, const Slice<T> &Dst, F &&Fn) {
  const T *From = reinterpret_cast<const T *>(In.peek(Dst.bytes()));
  if (!From)
    return;
  T *To = reinterpret_cast<T *>(Out.acquire());
  if (!To)
    return;
  RunCursor<T> Run(Dst);
  while (Run.next())
    Fn(From + Run.at(), Run.ptr(), To + Run.at(), Run.elems());
  In.release();
  Out.post(Run.at() * sizeof(T));
}

} // namespace cclc::kern
