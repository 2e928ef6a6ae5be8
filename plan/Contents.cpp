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
      Singles(size_t(NRanks)), Scratch(Words) {
  // Set 0 is the empty set, which the chunks of an array start with.
  intern();
  for (int32_t R = 0; R < NRanks; ++R) {
    std::fill(Scratch.begin(), Scratch.end(), 0);
    Scratch[size_t(R) / 64] = uint64_t(1) << (R % 64);
    Singles[size_t(R)] = intern();
  }
  std::fill(Scratch.begin(), Scratch.end(), ~uint64_t(0));
  if (NRanks % 64 != 0)
    Scratch[Words - 1] = (uint64_t(1) << (NRanks % 64)) - 1;
  All = intern();
}

RankSets::Id RankSets::intern() {
  uint64_t Hash = 0xcbf29ce484222325ull;
  for (uint64_t Word : Scratch)
    Hash = (Hash ^ Word) * 0x100000001b3ull ^ (Hash >> 29);
  size_t Mask = Table.size() - 1;
  size_t Slot = Hash & Mask;
  for (; Table[Slot] != NoSet; Slot = (Slot + 1) & Mask) {
    Id Candidate = Table[Slot];
    if (Hashes[Candidate] == Hash && std::equal(Scratch.begin(), Scratch.end(), bits(Candidate)))
      return Candidate;
  }
  Id New = Id(Hashes.size());
  CCLC_ASSERT(New != NoSet, "more distinct rank sets than a set number holds");
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

RankSets::Id RankSets::single(int32_t Rank) {
  CCLC_ASSERT(Rank >= 0 && Rank < NRanks, "rank out of range");
  return Singles[size_t(Rank)];
}

RankSets::Id RankSets::all() { return All; }

RankSets::Id RankSets::merge(Id A, Id B) {
  if (A == LastA && B == LastB)
    return LastMerged;
  const uint64_t *X = bits(A), *Y = bits(B);
  for (size_t W = 0; W < Words; ++W)
    Scratch[W] = X[W] | Y[W];
  LastA = A;
  LastB = B;
  LastMerged = intern();
  return LastMerged;
}

int32_t RankSets::firstShared(Id A, Id B) const {
  const uint64_t *X = bits(A), *Y = bits(B);
  for (size_t W = 0; W < Words; ++W)
    if (uint64_t Both = X[W] & Y[W])
      return static_cast<int32_t>(W * 64 + static_cast<size_t>(std::countr_zero(Both)));
  return -1;
}

std::string RankSets::describe(Id A) const {
  if (A == All && NRanks > 1)
    return "all " + std::to_string(NRanks) + " ranks";
  return rankList(bits(A), Words);
}

std::string RankSets::describeMissing(Id A, Id B) const {
  std::vector<uint64_t> Missing(Words);
  for (size_t W = 0; W < Words; ++W)
    Missing[W] = bits(B)[W] & ~bits(A)[W];
  return rankList(Missing.data(), Words);
}

ContentArray::ContentArray(size_t Size, RankSets &Sets) : Sets(&Sets), Records(Size) {
  for (size_t I = 0; I < Size; ++I)
    set(I, Undefined, 0);
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
