//===- Symmetry.cpp - Rank symmetries of a schedule -----------------------===//

#include "plan/Symmetry.h"
#include "plan/Assert.h"

#include <algorithm>
#include <bit>

namespace cclc::verify {

using namespace sched;

Symmetry::Symmetry(SymmetryKind Kind, const Schedule &S, std::vector<int32_t> PhysicalOf)
    : Kind(Kind), NRanks(S.NRanks), Regions(S.NChannels),
      RegionChunks(S.channelChunks(BufferKind::Output)), Physical(std::move(PhysicalOf)),
      Label(Physical.size()), Shifts(size_t(S.NRanks) * S.NChannels, 0) {
  for (int32_t L = 0; L < NRanks; ++L) {
    Label[Physical[L]] = L;
    Identity = Identity && Physical[L] == L;
  }
}

Symmetry Symmetry::ofRotation(const Schedule &S) {
  CCLC_ASSERT(S.Rotated, "only a rotated schedule carries its rotation");
  std::vector<int32_t> Identity(size_t(S.NRanks));
  for (int32_t R = 0; R < S.NRanks; ++R)
    Identity[size_t(R)] = R;
  Symmetry Sym(SymmetryKind::Rotation, S, std::move(Identity));
  for (int32_t R = 0; R < S.NRanks; ++R)
    for (int32_t H = 0; H < S.NChannels; ++H)
      Sym.shift(R, H) =
          static_cast<int32_t>(int64_t(S.Rotated->ChunkStep) * R % Sym.RegionChunks);
  return Sym;
}

RankSets::Id Symmetry::ranks(RankSets &Sets, RankSets::Id A, int32_t R) const {
  if (!Identity)
    return Sets.renamed(A, [&](int32_t X) { return rank(R, X); });
  return Kind == SymmetryKind::Xor ? Sets.xored(A, R) : Sets.rotated(A, R);
}

int32_t Symmetry::chunk(int32_t R, int32_t C) const {
  const int32_t Region = C / RegionChunks, Offset = C % RegionChunks;
  const int32_t T = shift(R, Region);
  return Region * RegionChunks +
         (Kind == SymmetryKind::Xor ? Offset ^ T : (Offset + T) % RegionChunks);
}

int32_t Symmetry::chunkBack(int32_t R, int32_t C) const {
  if (Kind == SymmetryKind::Xor)
    return chunk(R, C);
  const int32_t Region = C / RegionChunks, Offset = C % RegionChunks;
  return Region * RegionChunks + (Offset - shift(R, Region) + RegionChunks) % RegionChunks;
}

namespace {

/// Proves that every rank's program is the representative's renamed by one
/// kind of symmetry. Rank by rank, it first reads t_r off the message
/// slices (which fix it), then checks every step against the
/// representative's with t_r known; last, it checks that the renamings
/// compose as the group's elements do, which the verifier's use of them
/// relies on (renaming by p, then by r, is renaming by the rank that takes
/// the representative to r's image of p).
class SymmetryProof {
public:
  SymmetryProof(const Schedule &S, Symmetry &Sym, std::vector<int32_t> &Shifts,
                const std::vector<int32_t> &Physical)
      : S(S), Sym(Sym), Shifts(Shifts), Physical(Physical), Representative(Physical[0]),
        RegionChunks(S.channelChunks(BufferKind::Output)), Known(Shifts.size(), 0) {}

  bool run() {
    for (int32_t R = 0; R < S.NRanks; ++R)
      if (R != Representative && (!sameSteps(R) || !sameLocalSlices(R)))
        return false;
    return composes();
  }

private:
  bool xorKind() const { return Sym.kind() == SymmetryKind::Xor; }
  size_t at(int32_t R, int32_t Region) const { return size_t(R) * S.NChannels + Region; }
  /// Proving runs before the verifier's structure checks, so that a slice
  /// outside the buffers only means "no symmetry" here.
  bool inGrid(const Slice &Sl) const {
    return Sl.Count >= 1 && Sl.Chunk >= 0 &&
           int64_t(Sl.Chunk) + Sl.Count <= S.bufferChunks(Sl.Buffer);
  }

  /// Everything but local slices: operation, grouping, peers and the slices
  /// of messages, from which t_r is learned.
  bool sameSteps(int32_t R) {
    for (int32_t H = 0; H < S.NChannels; ++H) {
      const std::vector<Step> &Rep = S.Ranks[Representative].Channels[H].Steps;
      const std::vector<Step> &Mine = S.Ranks[R].Channels[H].Steps;
      if (Rep.size() != Mine.size())
        return false;
      for (size_t I = 0; I < Rep.size(); ++I) {
        const Step &A = Rep[I], &B = Mine[I];
        if (A.Op != B.Op || A.WithNext != B.WithNext || !samePeer(R, A.Peer, B.Peer) ||
            !samePeer(R, A.SendPeer, B.SendPeer))
          return false;
        if (A.Op == OpKind::Send && !learn(R, A.Src, B.Src))
          return false;
        if (opReceives(A.Op) && !learn(R, A.Dst, B.Dst))
          return false;
      }
    }
    return true;
  }

  bool samePeer(int32_t R, int32_t Rep, int32_t Mine) const {
    return Rep < 0 || Rep >= S.NRanks ? Mine == Rep : Mine == Sym.rank(R, Rep);
  }

  /// Message slices must be renamed whole: the same size, t_r agreeing with
  /// what is known of it, and laid out so that both ends of a message see
  /// its elements permuted alike.
  bool learn(int32_t R, const Slice &Rep, const Slice &Mine) {
    if (Rep.Buffer != Mine.Buffer || Rep.Count != Mine.Count || !inGrid(Rep) || !inGrid(Mine))
      return false;
    const int32_t Region = Rep.Chunk / RegionChunks, X = Rep.Chunk % RegionChunks;
    const int32_t XMine = Mine.Chunk - Region * RegionChunks;
    if (XMine < 0 || XMine + Rep.Count > RegionChunks || X + Rep.Count > RegionChunks)
      return false;
    int32_t &T = Shifts[at(R, Region)];
    int32_t &Bits = Known[at(R, Region)];
    if (!xorKind()) {
      const int32_t Shift = (XMine - X + RegionChunks) % RegionChunks;
      if (Bits != 0)
        return T == Shift;
      T = Shift;
      Bits = ~0;
      return true;
    }
    const int32_t M = Rep.Count;
    if (!std::has_single_bit(uint32_t(M)) || X % M != 0 || XMine % M != 0)
      return false;
    const int32_t High = ~(M - 1) & (RegionChunks - 1);
    const int32_t Shift = (X ^ XMine) & High;
    if (((T ^ Shift) & Bits & High) != 0)
      return false;
    T |= Shift & ~Bits;
    Bits |= High;
    return true;
  }

  /// Copies and reductions within a rank: renaming the representative's slices must
  /// pair each source chunk with the destination chunk rank R pairs it with.
  bool sameLocalSlices(int32_t R) {
    for (int32_t H = 0; H < S.NChannels; ++H) {
      const std::vector<Step> &Rep = S.Ranks[Representative].Channels[H].Steps;
      const std::vector<Step> &Mine = S.Ranks[R].Channels[H].Steps;
      for (size_t I = 0; I < Rep.size();) {
        const size_t End = inputCopiesEnd(Rep, I);
        if (End > I) {
          if (!sameInputCopies(R, Rep, Mine, I, End))
            return false;
          I = End;
          continue;
        }
        const Step &A = Rep[I], &B = Mine[I];
        ++I;
        if (A.Op != OpKind::Copy && A.Op != OpKind::Reduce && A.Op != OpKind::RecvReduceCopy)
          continue;
        if (A.Src.Buffer != B.Src.Buffer || A.Dst.Buffer != B.Dst.Buffer ||
            A.Src.Count != B.Src.Count || A.Dst.Count != A.Src.Count ||
            B.Dst.Count != B.Src.Count || !samePairs(R, A.Src, A.Dst, B.Src, B.Dst))
          return false;
      }
    }
    return true;
  }

  /// One past a run of copies from input starting at I (I when there is
  /// none). The chunking pass cuts `copy(input, output)` into pieces at
  /// fixed offsets, so renamed, the representative's pieces are not rank R's: only the
  /// run as a whole is. Input never changes and the pieces' destinations
  /// are disjoint (sameInputCopies checks), so the order within the run
  /// does not matter.
  static size_t inputCopiesEnd(const std::vector<Step> &Steps, size_t I) {
    while (I < Steps.size() && Steps[I].Op == OpKind::Copy &&
           Steps[I].Src.Buffer == BufferKind::Input && !Steps[I].WithNext)
      ++I;
    return I;
  }

  /// Whether copies [I, End) of rank R write each chunk from the input
  /// chunk the representative's copies, renamed, write its preimage from, every chunk
  /// written once.
  bool sameInputCopies(int32_t R, const std::vector<Step> &Rep, const std::vector<Step> &Mine,
                       size_t I, size_t End) {
    // The commonest run, `copy(input, output)`: one copy of whole regions
    // onto the same chunks. Renaming maps each region onto itself, so such
    // a copy is its own image, with no need to pair its chunks one by one.
    const Step &First = Rep[I];
    if (End == I + 1 && Mine[I].Src == First.Src && Mine[I].Dst == First.Dst &&
        inGrid(First.Src) && inGrid(First.Dst) && First.Src.Chunk == First.Dst.Chunk &&
        First.Src.Count == First.Dst.Count && First.Dst.Buffer != BufferKind::Input &&
        First.Src.Chunk % RegionChunks == 0 && First.Src.Count % RegionChunks == 0)
      return true;
    const int32_t Chunks = S.bufferChunks(BufferKind::Output);
    SourceOf.assign(size_t(2) * Chunks, -1);
    auto At = [&](const Slice &Dst, int32_t Chunk) -> int32_t & {
      return SourceOf[size_t(Dst.Buffer == BufferKind::Scratch) * Chunks + Chunk];
    };
    int64_t Written = 0;
    for (size_t K = I; K < End; ++K) {
      const Step &A = Rep[K];
      if (!inGrid(A.Src) || !inGrid(A.Dst) || A.Src.Count != A.Dst.Count ||
          A.Dst.Buffer == BufferKind::Input)
        return false;
      for (int32_t J = 0; J < A.Src.Count; ++J) {
        int32_t &Source = At(A.Dst, Sym.chunk(R, A.Dst.Chunk + J));
        if (Source != -1)
          return false;
        Source = Sym.chunk(R, A.Src.Chunk + J);
      }
      Written += A.Src.Count;
    }
    for (size_t K = I; K < End; ++K) {
      const Step &B = Mine[K];
      if (B.Src.Buffer != BufferKind::Input || !inGrid(B.Src) || !inGrid(B.Dst) ||
          B.Src.Count != B.Dst.Count || B.Dst.Buffer == BufferKind::Input)
        return false;
      for (int32_t J = 0; J < B.Src.Count; ++J) {
        int32_t &Source = At(B.Dst, B.Dst.Chunk + J);
        if (Source != B.Src.Chunk + J)
          return false;
        Source = -2; // Taken: a second write of the chunk fails above.
      }
      Written -= B.Src.Count;
    }
    return Written == 0;
  }

  bool samePairs(int32_t R, const Slice &RepSrc, const Slice &RepDst, const Slice &Src,
                 const Slice &Dst) const {
    if (!inGrid(RepSrc) || !inGrid(RepDst) || !inGrid(Src) || !inGrid(Dst))
      return false;
    for (int32_t J = 0; J < RepSrc.Count; ++J) {
      const int32_t From = Sym.chunk(R, RepSrc.Chunk + J) - Src.Chunk;
      const int32_t To = Sym.chunk(R, RepDst.Chunk + J) - Dst.Chunk;
      if (From != To || From < 0 || From >= Src.Count)
        return false;
    }
    return true;
  }

  /// t must be additive in the labels (rotation: t of label l is t of l - 1
  /// plus t of 1; xor: the xor of t over l's bits), so that renaming by p
  /// and then by r is the renaming of the rank r's renaming takes p to.
  bool composes() const {
    auto T = [&](int32_t L, int32_t G) { return Shifts[at(Physical[L], G)]; };
    for (int32_t L = 2; L < S.NRanks; ++L)
      for (int32_t G = 0; G < S.NChannels; ++G) {
        if (xorKind()) {
          const int32_t Low = L & -L;
          if (Low != L && T(L, G) != (T(L ^ Low, G) ^ T(Low, G)))
            return false;
        } else if (T(L, G) != (T(L - 1, G) + T(1, G)) % RegionChunks) {
          return false;
        }
      }
    return true;
  }

  const Schedule &S;
  const Symmetry &Sym;
  std::vector<int32_t> &Shifts;
  const std::vector<int32_t> &Physical;
  const int32_t Representative;
  int32_t RegionChunks;
  /// Per rank and region, the bits of t_r that some message fixed.
  std::vector<int32_t> Known;
  /// sameInputCopies' map from a written chunk (output, then scratch) to
  /// the input chunk the representative, renamed, copies there.
  std::vector<int32_t> SourceOf;
};

} // namespace

std::optional<Symmetry> findSymmetry(const Schedule &S) {
  if (S.Collective != CollectiveKind::AllReduce || S.NRanks < 2 ||
      static_cast<int32_t>(S.Ranks.size()) != S.NRanks)
    return std::nullopt;
  const int32_t RegionChunks = S.channelChunks(BufferKind::Output);
  for (BufferKind Buf : {BufferKind::Input, BufferKind::Scratch})
    if (S.channelChunks(Buf) != RegionChunks)
      return std::nullopt;
  for (const RankProgram &P : S.Ranks)
    if (static_cast<int32_t>(P.Channels.size()) != S.NChannels)
      return std::nullopt;
  // Ranks in physical order, then, when the algorithm remaps them, in the
  // logical order it was written in (a butterfly placed one rank on).
  std::vector<std::vector<int32_t>> Labelings(1, std::vector<int32_t>(S.NRanks));
  for (int32_t R = 0; R < S.NRanks; ++R)
    Labelings[0][R] = R;
  if (S.Remap != Labelings[0] && std::is_permutation(S.Remap.begin(), S.Remap.end(),
                                                     Labelings[0].begin(), Labelings[0].end()))
    Labelings.push_back(S.Remap);
  for (const std::vector<int32_t> &Physical : Labelings)
    for (SymmetryKind Kind : {SymmetryKind::Rotation, SymmetryKind::Xor}) {
      if (Kind == SymmetryKind::Xor && (!std::has_single_bit(uint32_t(S.NRanks)) ||
                                        !std::has_single_bit(uint32_t(RegionChunks))))
        continue;
      Symmetry Sym(Kind, S, Physical);
      if (SymmetryProof(S, Sym, Sym.Shifts, Sym.Physical).run())
        return Sym;
    }
  return std::nullopt;
}

} // namespace cclc::verify
