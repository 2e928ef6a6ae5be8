//===- CopyFolding.cpp - Copies folded into the steps that use them -------===//

#include "plan/CopyFolding.h"

#include <optional>
#include <vector>

namespace cclc::plan {

using sched::BufferKind;
using sched::OpKind;
using sched::Slice;
using sched::Step;

std::string CopyFoldingResult::summary() const {
  return std::to_string(ReduceCopies) + " recv_reduce_copy (" + std::to_string(Forwarded) +
         " into the copy-out's destination), " + std::to_string(Sends) + " sends from the source";
}

namespace {

/// Whether A and B may be the same memory: in some call, out of place or in
/// place (where input chunk c is output chunk c).
bool aliases(const Slice &A, const Slice &B) {
  return kern::sharesMemory(A, B, /*InPlace=*/true);
}

bool writesInto(const Step &St, const Slice &X) {
  return St.Op != OpKind::Send && aliases(St.Dst, X);
}

/// Whether St reads or writes memory X may share (a receive that combines
/// reads its Dst, which writesInto covers).
bool touches(const Step &St, const Slice &X) {
  return writesInto(St, X) || (opReadsSource(St.Op) && aliases(St.Src, X));
}

bool isDefaultCopy(const Step &St) { return St.Op == OpKind::Copy && St.Primitive.empty(); }

bool within(const Slice &Part, const Slice &Whole) {
  return Part.Buffer == Whole.Buffer && Part.Chunk >= Whole.Chunk &&
         Part.Chunk + Part.Count <= Whole.Chunk + Whole.Count;
}

/// One pass may read Src while writing Dst: they are one memory or none.
bool readableWhileWritten(const Slice &Src, const Slice &Dst) {
  return !aliases(Src, Dst) || (Src.Chunk == Dst.Chunk && Src.Count == Dst.Count);
}

class ProgramFolding {
public:
  ProgramFolding(std::vector<Step> &Steps, CopyFoldingResult &Result)
      : Steps(Steps), Result(Result) {}

  void run() {
    for (size_t J = 0; J < Steps.size(); ++J) {
      const Step &St = Steps[J];
      if (!St.Primitive.empty())
        continue;
      if (St.Op == OpKind::RecvReduce)
        J = foldReceive(J);
      else if (St.Op == OpKind::Send && St.Src.Buffer == BufferKind::Scratch)
        J = foldSend(J);
    }
  }

private:
  /// The position of the copy that the step at J may take its slice Used
  /// from: the last step before J to touch Used, a copy of the default
  /// primitive whose destination holds Used, from a source that no step in
  /// between writes.
  std::optional<size_t> copyFor(size_t J, const Slice &Used) const {
    size_t I = J;
    while (I > 0 && !touches(Steps[I - 1], Used))
      --I;
    if (I == 0 || !isDefaultCopy(Steps[I - 1]) || !within(Used, Steps[I - 1].Dst))
      return std::nullopt;
    --I;
    const Slice X = sourceOf(Steps[I], Used);
    for (size_t K = I + 1; K < J; ++K)
      if (writesInto(Steps[K], X))
        return std::nullopt;
    return I;
  }

  /// What the copy C copied into Part of its destination.
  static Slice sourceOf(const Step &C, const Slice &Part) {
    return Slice{C.Src.Buffer, C.Src.Chunk + (Part.Chunk - C.Dst.Chunk), Part.Count};
  }

  /// Whether a step after J touches X.
  bool touchedAfter(size_t J, const Slice &X) const {
    for (size_t K = J + 1; K < Steps.size(); ++K)
      if (touches(Steps[K], X))
        return true;
    return false;
  }

  /// Folds into the recv_reduce at J the copy its slice comes from, where it
  /// may; returns J's new position.
  size_t foldReceive(size_t J) {
    const Slice A = Steps[J].Dst;
    const std::optional<size_t> I = copyFor(J, A);
    const Slice X = I ? sourceOf(Steps[*I], A) : A;
    if (!I || !readableWhileWritten(X, A)) {
      // No copy to fold; the receive may still combine what A holds into
      // where A is copied out.
      if (forward(J, A)) {
        Steps[J].Op = OpKind::RecvReduceCopy;
        ++Result.ReduceCopies;
        ++Result.Forwarded;
      }
      return J;
    }
    Steps[J].Op = OpKind::RecvReduceCopy;
    Steps[J].Src = X;
    ++Result.ReduceCopies;
    if (forward(J, X))
      ++Result.Forwarded;
    return cutCopy(*I, A) + J - 1;
  }

  /// Makes the send at J, of scratch that nothing touches after it, read
  /// what the copy its slice comes from read; returns J's new position.
  size_t foldSend(size_t J) {
    const Slice A = Steps[J].Src;
    std::optional<size_t> I = copyFor(J, A);
    if (!I || touchedAfter(J, A))
      return J;
    Steps[J].Src = sourceOf(Steps[*I], A);
    ++Result.Sends;
    return cutCopy(*I, A) + J - 1;
  }

  /// Where the receive at J, combining the message with X, writes scratch
  /// that the next step to touch it copies out and nothing touches after,
  /// makes it read X and write where that copy would, and drops the copy.
  bool forward(size_t J, const Slice &X) {
    const Slice A = Steps[J].Dst;
    if (A.Buffer != BufferKind::Scratch)
      return false;
    size_t K = J + 1;
    while (K < Steps.size() && !touches(Steps[K], A))
      ++K;
    if (K == Steps.size() || !isDefaultCopy(Steps[K]) || !(Steps[K].Src == A) ||
        touchedAfter(K, A))
      return false;
    const Slice B = Steps[K].Dst;
    if (!readableWhileWritten(X, B))
      return false;
    for (size_t M = J + 1; M < K; ++M)
      if (touches(Steps[M], B))
        return false;
    Steps[J].Src = X;
    Steps[J].Dst = B;
    Steps.erase(Steps.begin() + std::ptrdiff_t(K));
    return true;
  }

  /// Replaces the copy at I with what it copies besides Taken; returns the
  /// number of steps it became (0 to 2).
  size_t cutCopy(size_t I, const Slice &Taken) {
    const Step Copy = Steps[I];
    std::vector<Step> Pieces;
    auto Keep = [&](int32_t Chunk, int32_t Count) {
      if (Count <= 0)
        return;
      Step Piece = Copy;
      Piece.Dst = Slice{Copy.Dst.Buffer, Chunk, Count};
      Piece.Src = sourceOf(Copy, Piece.Dst);
      Pieces.push_back(std::move(Piece));
    };
    Keep(Copy.Dst.Chunk, Taken.Chunk - Copy.Dst.Chunk);
    Keep(Taken.Chunk + Taken.Count, Copy.Dst.Chunk + Copy.Dst.Count - Taken.Chunk - Taken.Count);
    Steps.erase(Steps.begin() + std::ptrdiff_t(I));
    Steps.insert(Steps.begin() + std::ptrdiff_t(I), Pieces.begin(), Pieces.end());
    return Pieces.size();
  }

  std::vector<Step> &Steps;
  CopyFoldingResult &Result;
};

} // namespace

CopyFoldingResult foldCopies(sched::Schedule &S) {
  CopyFoldingResult Result;
  if (S.Rotated)
    return Result;
  for (sched::RankProgram &R : S.Ranks)
    for (sched::ChannelProgram &C : R.Channels)
      ProgramFolding(C.Steps, Result).run();
  return Result;
}

} // namespace cclc::plan
