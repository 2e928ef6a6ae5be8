//===- Contents.h - What a chunk holds, symbolically ------------*- C++ -*-===//
//
// The verifier moves descriptions of data, not data. A chunk holds the data of
// one input chunk -- its label, the chunk's index in the input grid of the
// ranks that contributed -- combined over a set of ranks. The label tells
// "rank 3's unit 1" from "rank 3's unit 2", so copying the wrong unit or
// reducing two different chunks together is caught, not only reducing the
// wrong ranks. Combining two rank sets that intersect is double counting.
//
// Rank sets are shared: a schedule's chunks hold few distinct sets (a
// butterfly's aligned blocks of ranks, a tree's subtrees, a ring's arcs), so
// RankSets keeps each distinct set once, as a bitset of NRanks bits, and a
// chunk holds its label and the set's number in one word. A chunk of an
// n-rank schedule so costs 8 bytes instead of n / 8, which is what lets a
// halving-doubling allreduce of 8192 ranks (n^2 chunks) be proved in memory.
//
// An array is one flat vector of such words, one allocation per buffer.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace cclc::verify {

/// The distinct rank sets of one verification, each stored once.
class RankSets {
public:
  using Id = uint32_t;
  static constexpr Id NoSet = ~Id(0);

  explicit RankSets(int32_t NRanks);

  int32_t nranks() const { return NRanks; }
  Id single(int32_t Rank);
  Id all();
  /// The union of A and B.
  Id merge(Id A, Id B);
  /// The lowest rank in both, or -1 when they are disjoint.
  int32_t firstShared(Id A, Id B) const;
  /// "rank 2", "ranks 0, 1, 5", "all 8 ranks".
  std::string describe(Id A) const;
  /// The ranks B holds that A lacks, as describe() names them; empty when
  /// it lacks none.
  std::string describeMissing(Id A, Id B) const;

private:
  const uint64_t *bits(Id A) const { return Bits.data() + size_t(A) * Words; }
  /// The number of the set whose bits are Scratch, added when new.
  Id intern();

  int32_t NRanks;
  size_t Words; ///< Bit words per set.
  std::vector<uint64_t> Bits;
  /// Each set's hash, and an open-addressed table of set numbers by hash
  /// (NoSet where free), kept at most half full.
  std::vector<uint64_t> Hashes;
  std::vector<Id> Table;
  std::vector<Id> Singles;
  Id All;
  /// The last merge asked for and its result: the chunks of one message
  /// mostly merge the same two sets.
  Id LastA = 0, LastB = 0, LastMerged = 0;
  std::vector<uint64_t> Scratch;
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
