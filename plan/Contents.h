//===- Contents.h - What a chunk holds, symbolically ------------*- C++ -*-===//
//
// The verifier moves descriptions of data, not data. A chunk holds the data of
// one input chunk -- its label, the chunk's index in the input grid of the
// ranks that contributed -- combined over a set of ranks. The label tells
// "rank 3's unit 1" from "rank 3's unit 2", so copying the wrong unit or
// reducing two different chunks together is caught, not only reducing the
// wrong ranks. Combining two rank sets that intersect is double counting.
//
// Rank sets are numbered, and a chunk holds its label and its set's number
// in one word. Most sets a schedule makes are runs of consecutive ranks (a
// ring's arcs, a butterfly's aligned blocks), numbered by their bounds and
// combined by arithmetic; the others are stored once each. A chunk of an
// n-rank schedule so costs 8 bytes instead of n / 8, which is what lets a
// halving-doubling allreduce of 8192 ranks (n^2 chunks) be proved in memory.
//
// An array is one flat vector of such words, one allocation per buffer.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace cclc::verify {

/// The distinct rank sets of one verification. A set that is a run of
/// consecutive ranks, wrapping past the last (a ring's arc, a butterfly's
/// block, a single rank, all of them), is its own number: start and length
/// packed under a tag bit, merged and intersected by arithmetic. Any other
/// set is a bitset stored once and numbered in order. Every set has one
/// number, so equal sets have equal numbers.
class RankSets {
public:
  using Id = uint32_t;
  static constexpr Id NoSet = ~Id(0);

  explicit RankSets(int32_t NRanks);

  Id single(int32_t Rank);
  Id all();
  /// The union of A and B.
  Id merge(Id A, Id B);
  /// A with every rank x renamed x + By (mod the rank count).
  Id rotated(Id A, int32_t By);
  /// A with every rank x renamed x ^ Mask (a power-of-two rank count).
  Id xored(Id A, int32_t Mask);
  /// A with every rank x renamed Rename(x), a permutation of the ranks.
  template <class F> Id renamed(Id A, F Rename) {
    const uint64_t *X = bits(A, ScratchA);
    std::fill(Scratch.begin(), Scratch.end(), 0);
    for (size_t W = 0; W < Words; ++W)
      for (uint64_t Word = X[W]; Word != 0; Word &= Word - 1) {
        const size_t To = size_t(Rename(int32_t(W * 64) + std::countr_zero(Word)));
        Scratch[To / 64] |= uint64_t(1) << (To % 64);
      }
    return intern();
  }
  /// The lowest rank in both, or -1 when they are disjoint.
  int32_t firstShared(Id A, Id B) const;
  /// "rank 2", "ranks 0, 1, 5", "all 8 ranks".
  std::string describe(Id A) const;
  /// The ranks B holds that A lacks, as describe() names them; empty when
  /// it lacks none.
  std::string describeMissing(Id A, Id B) const;

private:
  static constexpr Id RunTag = Id(1) << 31;
  /// Runs are packed as 15-bit start and length - 1, so only schedules of
  /// at most this many ranks number them so.
  static constexpr int32_t MaxRunRanks = 1 << 15;

  bool isRun(Id A) const { return (A & RunTag) != 0; }
  int32_t runStart(Id A) const { return int32_t(A & 0x7fff); }
  int32_t runLength(Id A) const { return int32_t((A >> 15) & 0x7fff) + 1; }
  /// Ranks [Start, Start + Length) modulo NRanks; all ranks start at 0.
  Id run(int32_t Start, int32_t Length) const;
  /// The set of ranks [Start, Start + Length) modulo NRanks, numbered.
  Id ranks(int32_t Start, int32_t Length);
  /// Sets the bits of ranks [Start, Start + Length) modulo NRanks in Into.
  void addRun(uint64_t *Into, int32_t Start, int32_t Length) const;
  /// A's bits: stored, or written into Into for a run (none for NoSet).
  const uint64_t *bits(Id A, std::vector<uint64_t> &Into) const;
  /// The number of the set whose bits are Scratch: a run's when they form
  /// one, else a stored set's, added when new.
  Id intern();

  int32_t NRanks;
  size_t Words; ///< Bit words per set.
  /// Stored sets, Words each, their hashes, and an open-addressed table of
  /// their numbers by hash (NoSet where free), kept at most half full.
  std::vector<uint64_t> Bits;
  std::vector<uint64_t> Hashes;
  std::vector<Id> Table;
  /// The last merge of stored sets and its result: the chunks of one
  /// message mostly merge the same two sets.
  Id LastA = NoSet, LastB = NoSet, LastMerged = NoSet;
  Id All = NoSet;
  std::vector<uint64_t> Scratch;
  mutable std::vector<uint64_t> ScratchA, ScratchB;
};

class ContentArray {
public:
  /// A chunk no data has reached yet.
  static constexpr int32_t Undefined = -1;
  /// A chunk whose data is already known to be wrong: the error was reported
  /// where it went wrong, and checks downstream of it stay quiet.
  static constexpr int32_t Poisoned = -2;

  ContentArray() = default;
  /// Size undefined chunks whose rank sets live in Sets.
  ContentArray(size_t Size, RankSets &Sets);

  int32_t label(size_t I) const { return static_cast<int32_t>(Records[I] >> 32); }
  bool isDefined(size_t I) const { return label(I) != Undefined; }
  bool isPoisoned(size_t I) const { return label(I) == Poisoned; }

  /// Input chunk Label of one rank.
  void setSingle(size_t I, int32_t Label, int32_t Rank);
  /// Input chunk Label reduced over every rank.
  void setAllRanks(size_t I, int32_t Label);
  void poison(size_t I) { set(I, Poisoned, ranks(I)); }
  /// Input chunk Label combined over the ranks of set Ranks.
  void setContent(size_t I, int32_t Label, RankSets::Id Ranks) { set(I, Label, Ranks); }
  RankSets::Id rankSet(size_t I) const { return ranks(I); }
  void copyFrom(size_t I, const ContentArray &From, size_t J) { Records[I] = From.Records[J]; }
  /// The lowest rank both chunks hold, or -1 when their rank sets are disjoint.
  int32_t firstSharedRank(size_t I, const ContentArray &From, size_t J) const {
    return Sets->firstShared(ranks(I), From.ranks(J));
  }
  /// Adds From[J]'s ranks to chunk I (the caller checked labels and overlap).
  void mergeFrom(size_t I, const ContentArray &From, size_t J) {
    set(I, label(I), Sets->merge(ranks(I), From.ranks(J)));
  }
  bool sameAs(size_t I, const ContentArray &Other, size_t J) const {
    return Records[I] == Other.Records[J];
  }

  /// "input[3] of rank 1", "input[3] of ranks 0, 2", "input[3] of all 8 ranks".
  std::string describe(size_t I) const;
  /// "rank 2" or "ranks 2, 5": the ranks Other[J] holds that chunk I lacks;
  /// empty when it lacks none.
  std::string describeMissing(size_t I, const ContentArray &Other, size_t J) const {
    return Sets->describeMissing(ranks(I), Other.ranks(J));
  }

private:
  RankSets::Id ranks(size_t I) const { return static_cast<RankSets::Id>(Records[I]); }
  void set(size_t I, int32_t Label, RankSets::Id Ranks) {
    Records[I] = uint64_t(uint32_t(Label)) << 32 | Ranks;
  }

  RankSets *Sets = nullptr;
  /// Per chunk: the label in the high half, the rank set in the low.
  std::vector<uint64_t> Records;
};

} // namespace cclc::verify
