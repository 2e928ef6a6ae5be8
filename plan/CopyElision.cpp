//===- CopyElision.cpp - Smaller input copies -----------------------------===//

#include "plan/CopyElision.h"

#include <vector>

namespace cclc::plan {

using sched::BufferKind;
using sched::OpKind;
using sched::Schedule;
using sched::Slice;
using sched::Step;

std::string CopyElisionResult::summary() const {
  return "copies " + std::to_string(ChunksBefore) + " -> " + std::to_string(ChunksAfter) +
         " chunks, " + std::to_string(ReadsMoved) + " reads from input";
}

namespace {

constexpr int32_t NoCopy = -1;

/// A copy of input chunks onto the same output chunks: in place, a copy of
/// a chunk onto itself.
bool copiesInputAlike(const Step &St) {
  return St.Op == OpKind::Copy && St.Dst.Buffer == BufferKind::Output &&
         St.Src == Slice{BufferKind::Input, St.Dst.Chunk, St.Dst.Count};
}

/// Such a copy by the default primitive: the copies this pass may cut.
bool isInputCopy(const Step &St) { return copiesInputAlike(St) && St.Primitive.empty(); }

/// True for steps whose write to Dst replaces it without reading it.
bool overwrites(OpKind Op) {
  return Op == OpKind::Recv || Op == OpKind::RecvCopySend || Op == OpKind::Copy;
}

/// One channel program: which output chunks each input copy must still
/// write, and which reads could move to input.
class ProgramElision {
public:
  ProgramElision(std::vector<Step> &Steps, const Schedule &S)
      : Steps(Steps), S(S), Holder(size_t(S.bufferChunks(BufferKind::Output)), NoCopy),
        Needed(Steps.size()) {}

  void run(CopyElisionResult &Result) {
    for (size_t I = 0; I < Steps.size(); ++I)
      visit(int32_t(I));
    // What output still holds of a copy at the end is the copy's result.
    for (size_t J = 0; J < Holder.size(); ++J)
      if (Holder[J] != NoCopy)
        need(Holder[J], int32_t(J));
    rewrite(Result);
  }

private:
  void need(int32_t Copy, int32_t Chunk) {
    Needed[size_t(Copy)][size_t(Chunk - Steps[size_t(Copy)].Dst.Chunk)] = true;
  }

  /// The copy whose input every chunk of X still holds, or NoCopy.
  int32_t heldWhole(const Slice &X) const {
    if (X.Buffer != BufferKind::Output)
      return NoCopy;
    const int32_t Copy = Holder[size_t(X.Chunk)];
    for (int32_t J = X.Chunk; J < X.Chunk + X.Count; ++J)
      if (Holder[size_t(J)] != Copy)
        return NoCopy;
    return Copy;
  }

  /// Marks what X reads of every copy as needed.
  void read(const Slice &X) {
    if (X.Buffer == BufferKind::Output)
      for (int32_t J = X.Chunk; J < X.Chunk + X.Count; ++J)
        if (Holder[size_t(J)] != NoCopy)
          need(Holder[size_t(J)], J);
  }

  void visit(int32_t I) {
    const Step &St = Steps[size_t(I)];
    // A source read where a copy's data lies may read input instead.
    if (plan::opReadsSource(St.Op) && St.Src.Count > 0) {
      if (int32_t Copy = heldWhole(St.Src); Copy != NoCopy && !isInputCopy(St))
        Moves.push_back({I, Copy});
      else
        read(St.Src);
    }
    if (St.Op == OpKind::Send || St.Dst.Buffer != BufferKind::Output)
      return;
    if (!overwrites(St.Op))
      read(St.Dst);
    for (int32_t J = St.Dst.Chunk; J < St.Dst.Chunk + St.Dst.Count; ++J)
      Holder[size_t(J)] = NoCopy;
    if (isInputCopy(St)) {
      Needed[size_t(I)].assign(size_t(St.Dst.Count), false);
      for (int32_t J = St.Dst.Chunk; J < St.Dst.Chunk + St.Dst.Count; ++J)
        Holder[size_t(J)] = I;
    }
  }

  /// The runs of copy I's chunks still needed, as slices of output.
  std::vector<Slice> neededRuns(int32_t I) const {
    const Slice &Whole = Steps[size_t(I)].Dst;
    const std::vector<bool> &Need = Needed[size_t(I)];
    std::vector<Slice> Runs;
    for (int32_t K = 0; K < Whole.Count; ++K) {
      if (!Need[size_t(K)])
        continue;
      if (!Runs.empty() && Runs.back().Chunk + Runs.back().Count == Whole.Chunk + K)
        ++Runs.back().Count;
      else
        Runs.push_back(Slice{BufferKind::Output, Whole.Chunk + K, 1});
    }
    return Runs;
  }

  /// Whether copy I is cut: when that halves it, and in a rotated schedule
  /// only into runs a rotation can move.
  bool cut(int32_t I, const std::vector<Slice> &Runs) const {
    int32_t Kept = 0;
    for (const Slice &R : Runs) {
      Kept += R.Count;
      if (S.Rotated && R.Count != 1 && R.Count != S.channelChunks(BufferKind::Output))
        return false;
    }
    return 2 * Kept <= Steps[size_t(I)].Dst.Count;
  }

  void rewrite(CopyElisionResult &Result) {
    std::vector<bool> Cut(Steps.size(), false);
    std::vector<std::vector<Slice>> Runs(Steps.size());
    for (size_t I = 0; I < Steps.size(); ++I) {
      if (Needed[I].empty())
        continue;
      Runs[I] = neededRuns(int32_t(I));
      Cut[I] = cut(int32_t(I), Runs[I]);
      Result.ChunksBefore += size_t(Steps[I].Dst.Count);
    }
    for (auto [Reader, Copy] : Moves)
      if (Cut[size_t(Copy)]) {
        Steps[size_t(Reader)].Src.Buffer = BufferKind::Input;
        ++Result.ReadsMoved;
      }
    std::vector<Step> Out;
    Out.reserve(Steps.size());
    for (size_t I = 0; I < Steps.size(); ++I) {
      if (!Cut[I]) {
        Result.ChunksAfter += Needed[I].empty() ? 0 : size_t(Steps[I].Dst.Count);
        Out.push_back(std::move(Steps[I]));
        continue;
      }
      for (const Slice &R : Runs[I]) {
        Step Piece = Steps[I];
        Piece.Src = Slice{BufferKind::Input, R.Chunk, R.Count};
        Piece.Dst = R;
        Out.push_back(std::move(Piece));
        Result.ChunksAfter += size_t(R.Count);
      }
    }
    Steps = std::move(Out);
  }

  /// A read that may move to input, and the copy whose data it reads.
  struct Move {
    int32_t Reader;
    int32_t Copy;
  };

  std::vector<Step> &Steps;
  const Schedule &S;
  /// Per output chunk, the copy whose input it holds, or NoCopy.
  std::vector<int32_t> Holder;
  /// Per input copy, which of its chunks something still needs.
  std::vector<std::vector<bool>> Needed;
  std::vector<Move> Moves;
};

} // namespace

bool runsInPlace(const Schedule &S, int32_t Rank) {
  if (S.Units.Input != S.Units.Output)
    return false;
  // Whether each output chunk may differ from the input chunk it aliases.
  std::vector<bool> Changed(size_t(S.bufferChunks(BufferKind::Output)), false);
  auto ReadsChanged = [&](const Slice &X) {
    for (int32_t J = X.Chunk; X.Buffer == BufferKind::Input && J < X.Chunk + X.Count; ++J)
      if (Changed[size_t(J)])
        return true;
    return false;
  };
  for (const sched::ChannelProgram &C : S.Ranks[size_t(Rank)].Channels)
    for (const Step &St : C.Steps) {
      if (plan::opReadsSource(St.Op) && ReadsChanged(St.Src))
        return false;
      if (St.Op == OpKind::Send || St.Dst.Buffer != BufferKind::Output ||
          copiesInputAlike(St))
        continue;
      for (int32_t J = St.Dst.Chunk; J < St.Dst.Chunk + St.Dst.Count; ++J)
        Changed[size_t(J)] = true;
    }
  return true;
}

CopyElisionResult elideCopies(Schedule &S) {
  CopyElisionResult Result;
  if (S.Units.Input != S.Units.Output)
    return Result;
  for (sched::RankProgram &R : S.Ranks)
    for (sched::ChannelProgram &C : R.Channels)
      ProgramElision(C.Steps, S).run(Result);
  return Result;
}

} // namespace cclc::plan
