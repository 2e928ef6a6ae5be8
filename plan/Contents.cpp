//===- Contents.cpp - What a chunk holds, symbolically --------------------===//

#include "plan/Contents.h"
#include "plan/Assert.h"

#include <algorithm>
#include <bit>

namespace cclc::verify {

/// Rank lists in messages stop after this many names.
static constexpr int32_t MaxNamedRanks = 6;

/// "rank 2", "ranks 0, 1, 5" or "ranks 0, 1, 2, 3, 4, 5 and 9 more" for the
/// ranks whose bit is set in Bits; empty when there are none.
static std::string rankList(const uint64_t *Bits, size_t Words) {
  int32_t Count = 0;
  std::string Names;
  for (size_t W = 0; W < Words; ++W) {
    for (uint64_t Word = Bits[W]; Word != 0; Word &= Word - 1) {
      if (Count < MaxNamedRanks)
        Names += (Count ? ", " : "") +
                 std::to_string(W * 64 + static_cast<size_t>(std::countr_zero(Word)));
      ++Count;
    }
  }
  if (Count == 0)
    return "";
  if (Count > MaxNamedRanks)
    Names += " and " + std::to_string(Count - MaxNamedRanks) + " more";
  return (Count == 1 ? "rank " : "ranks ") + Names;
}

RankSets::RankSets(int32_t NRanks)
    : NRanks(NRanks), Words((static_cast<size_t>(NRanks) + 63) / 64), Table(64, NoSet),
      Scratch(Words), ScratchA(Words), ScratchB(Words) {
  All = ranks(0, NRanks);
}

RankSets::Id RankSets::single(int32_t Rank) {
  CCLC_ASSERT(Rank >= 0 && Rank < NRanks, "rank out of range");
  return ranks(Rank, 1);
}

RankSets::Id RankSets::all() { return All; }

RankSets::Id RankSets::ranks(int32_t Start, int32_t Length) {
  if (NRanks <= MaxRunRanks)
    return run(Start, Length);
  std::fill(Scratch.begin(), Scratch.end(), 0);
  addRun(Scratch.data(), Start, Length);
  return intern();
}

void RankSets::addRun(uint64_t *Into, int32_t Start, int32_t Length) const {
  // At most two pieces: to the last rank, then from rank 0.
  auto Range = [&](size_t Lo, size_t Hi) {
    for (size_t R = Lo; R < Hi;) {
      size_t W = R / 64, Bit = R % 64, Take = std::min<size_t>(64 - Bit, Hi - R);
      Into[W] |= (Take == 64 ? ~uint64_t(0) : ((uint64_t(1) << Take) - 1)) << Bit;
      R += Take;
    }
  };
  size_t End = size_t(Start) + size_t(Length);
  Range(size_t(Start), std::min(End, size_t(NRanks)));
  if (End > size_t(NRanks))
    Range(0, End - size_t(NRanks));
}

RankSets::Id RankSets::run(int32_t Start, int32_t Length) const {
  CCLC_ASSERT(Start >= 0 && Start < NRanks && Length >= 1 && Length <= NRanks,
              "a run of ranks out of range");
  CCLC_ASSERT(NRanks <= MaxRunRanks, "runs are numbered for schedules of at most 2^15 ranks");
  if (Length == NRanks)
    Start = 0;
  return RunTag | Id(Length - 1) << 15 | Id(Start);
}

const uint64_t *RankSets::bits(Id A, std::vector<uint64_t> &Into) const {
  if (A != NoSet && !isRun(A))
    return Bits.data() + size_t(A) * Words;
  std::fill(Into.begin(), Into.end(), 0);
  if (A != NoSet)
    addRun(Into.data(), runStart(A), runLength(A));
  return Into.data();
}

RankSets::Id RankSets::intern() {
  // A run is numbered by its bounds: it starts at a set bit whose
  // predecessor (cyclically) is clear, and there is one such bit.
  if (NRanks <= MaxRunRanks) {
    auto Has = [&](int32_t R) { return (Scratch[size_t(R) / 64] >> (R % 64)) & 1; };
    int32_t Count = 0, Starts = 0, Start = 0;
    for (size_t W = 0; W < Words; ++W)
      Count += std::popcount(Scratch[W]);
    for (size_t W = 0; W < Words && Starts < 2; ++W)
      for (uint64_t Word = Scratch[W]; Word != 0; Word &= Word - 1) {
        int32_t R = int32_t(W * 64) + std::countr_zero(Word);
        if (!Has(R == 0 ? NRanks - 1 : R - 1)) {
          ++Starts;
          Start = R;
        }
      }
    if (Count == NRanks || (Count > 0 && Starts == 1))
      return run(Start, Count);
  }
  uint64_t Hash = 0xcbf29ce484222325ull;
  for (uint64_t Word : Scratch)
    Hash = (Hash ^ Word) * 0x100000001b3ull ^ (Hash >> 29);
  size_t Mask = Table.size() - 1;
  size_t Slot = Hash & Mask;
  for (; Table[Slot] != NoSet; Slot = (Slot + 1) & Mask) {
    Id Candidate = Table[Slot];
    if (Hashes[Candidate] == Hash &&
        std::equal(Scratch.begin(), Scratch.end(), Bits.data() + size_t(Candidate) * Words))
      return Candidate;
  }
  Id New = Id(Hashes.size());
  CCLC_ASSERT(New < RunTag, "more distinct rank sets than a set number holds");
  Hashes.push_back(Hash);
  Bits.insert(Bits.end(), Scratch.begin(), Scratch.end());
  Table[Slot] = New;
  if (Hashes.size() * 2 > Table.size()) {
    // Twice the slots, every set placed again by its kept hash.
    std::vector<Id> Larger(Table.size() * 2, NoSet);
    for (Id Set = 0; Set < Id(Hashes.size()); ++Set) {
      size_t At = Hashes[Set] & (Larger.size() - 1);
      while (Larger[At] != NoSet)
        At = (At + 1) & (Larger.size() - 1);
      Larger[At] = Set;
    }
    Table = std::move(Larger);
  }
  return New;
}

RankSets::Id RankSets::merge(Id A, Id B) {
  CCLC_ASSERT(A != NoSet && B != NoSet, "merging a chunk without data");
  if (isRun(A) && isRun(B)) {
    // Two runs, one ending where the other starts, make one run.
    int32_t Length = runLength(A) + runLength(B);
    if (Length <= NRanks) {
      if ((runStart(A) + runLength(A)) % NRanks == runStart(B))
        return run(runStart(A), Length);
      if ((runStart(B) + runLength(B)) % NRanks == runStart(A))
        return run(runStart(B), Length);
    }
  }
  if (A == LastA && B == LastB)
    return LastMerged;
  const uint64_t *X = bits(A, ScratchA), *Y = bits(B, ScratchB);
  for (size_t W = 0; W < Words; ++W)
    Scratch[W] = X[W] | Y[W];
  LastA = A;
  LastB = B;
  LastMerged = intern();
  return LastMerged;
}

RankSets::Id RankSets::rotated(Id A, int32_t By) {
  CCLC_ASSERT(A != NoSet, "renaming a chunk without data");
  if (isRun(A))
    return run((runStart(A) + By) % NRanks, runLength(A));
  return renamed(A, [&](int32_t X) { return (X + By) % NRanks; });
}

RankSets::Id RankSets::xored(Id A, int32_t Mask) {
  CCLC_ASSERT(A != NoSet, "renaming a chunk without data");
  // An aligned block of a power-of-two size stays one: xor moves it whole.
  if (isRun(A) && std::has_single_bit(uint32_t(runLength(A))) &&
      runStart(A) % runLength(A) == 0)
    return run(runStart(A) ^ (Mask & ~(runLength(A) - 1)), runLength(A));
  return renamed(A, [&](int32_t X) { return X ^ Mask; });
}

int32_t RankSets::firstShared(Id A, Id B) const {
  if (A != NoSet && B != NoSet && isRun(A) && isRun(B)) {
    // Each run is one or two ranges of ranks; the lowest common rank is the
    // lowest start of their overlaps.
    auto Pieces = [&](Id Run, int32_t (&Lo)[2], int32_t (&Hi)[2]) {
      int32_t End = runStart(Run) + runLength(Run);
      Lo[0] = runStart(Run);
      Hi[0] = std::min(End, NRanks);
      Lo[1] = 0;
      Hi[1] = End > NRanks ? End - NRanks : 0;
    };
    int32_t ALo[2], AHi[2], BLo[2], BHi[2];
    Pieces(A, ALo, AHi);
    Pieces(B, BLo, BHi);
    int32_t First = -1;
    for (int I = 0; I < 2; ++I)
      for (int J = 0; J < 2; ++J) {
        int32_t Lo = std::max(ALo[I], BLo[J]), Hi = std::min(AHi[I], BHi[J]);
        if (Lo < Hi && (First < 0 || Lo < First))
          First = Lo;
      }
    return First;
  }
  const uint64_t *X = bits(A, ScratchA), *Y = bits(B, ScratchB);
  for (size_t W = 0; W < Words; ++W)
    if (uint64_t Both = X[W] & Y[W])
      return static_cast<int32_t>(W * 64 + static_cast<size_t>(std::countr_zero(Both)));
  return -1;
}

std::string RankSets::describe(Id A) const {
  if (A == All && NRanks > 1)
    return "all " + std::to_string(NRanks) + " ranks";
  return rankList(bits(A, ScratchA), Words);
}

std::string RankSets::describeMissing(Id A, Id B) const {
  const uint64_t *X = bits(A, ScratchA), *Y = bits(B, ScratchB);
  std::vector<uint64_t> Missing(Words);
  for (size_t W = 0; W < Words; ++W)
    Missing[W] = Y[W] & ~X[W];
  return rankList(Missing.data(), Words);
}

ContentArray::ContentArray(size_t Size, RankSets &Sets) : Sets(&Sets), Records(Size) {
  for (size_t I = 0; I < Size; ++I)
    set(I, Undefined, RankSets::NoSet);
}

void ContentArray::setSingle(size_t I, int32_t Label, int32_t Rank) {
  set(I, Label, Sets->single(Rank));
}

void ContentArray::setAllRanks(size_t I, int32_t Label) { set(I, Label, Sets->all()); }

std::string ContentArray::describe(size_t I) const {
  CCLC_ASSERT(label(I) >= 0, "describing a chunk without data");
  return "input[" + std::to_string(label(I)) + "] of " + Sets->describe(ranks(I));
}

} // namespace cclc::verify
