//===- Contents.h - What a chunk holds, symbolically ------------*- C++ -*-===//
//
// The verifier moves descriptions of data, not data. A chunk holds the data of
// one input chunk -- its label, the chunk's index in the input grid of the
// ranks that contributed -- combined over a set of ranks. The label tells
// "rank 3's unit 1" from "rank 3's unit 2", so copying the wrong unit or
// reducing two different chunks together is caught, not only reducing the
// wrong ranks. The rank set is a bitset of NRanks bits; combining two sets
// that intersect is double counting.
//
// An array is one flat vector of records, a label word followed by the rank
// bits, so that a 1024-rank schedule costs one allocation per buffer instead
// of one per chunk, and a step touches one contiguous record per chunk.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace cclc::verify {

class ContentArray {
public:
  /// A chunk no data has reached yet.
  static constexpr int32_t Undefined = -1;
  /// A chunk whose data is already known to be wrong: the error was reported
  /// where it went wrong, and checks downstream of it stay quiet.
  static constexpr int32_t Poisoned = -2;

  ContentArray() = default;
  /// Size undefined chunks over NRanks ranks.
  ContentArray(size_t Size, int32_t NRanks);

  int32_t label(size_t I) const { return static_cast<int32_t>(Records[I * Stride]); }
  bool isDefined(size_t I) const { return label(I) != Undefined; }
  bool isPoisoned(size_t I) const { return label(I) == Poisoned; }

  /// Input chunk Label of one rank.
  void setSingle(size_t I, int32_t Label, int32_t Rank);
  /// Input chunk Label reduced over every rank.
  void setAllRanks(size_t I, int32_t Label);
  void poison(size_t I) { setLabel(I, Poisoned); }
  void copyFrom(size_t I, const ContentArray &From, size_t J);
  /// The lowest rank both chunks hold, or -1 when their rank sets are disjoint.
  int32_t firstSharedRank(size_t I, const ContentArray &From, size_t J) const;
  /// Adds From[J]'s ranks to chunk I (the caller checked labels and overlap).
  void mergeFrom(size_t I, const ContentArray &From, size_t J);
  bool sameAs(size_t I, const ContentArray &Other, size_t J) const;

  /// "input[3] of rank 1", "input[3] of ranks 0, 2", "input[3] of all 8 ranks".
  std::string describe(size_t I) const;
  /// "rank 2" or "ranks 2, 5": the ranks Other[J] holds that chunk I lacks;
  /// empty when it lacks none.
  std::string describeMissing(size_t I, const ContentArray &Other, size_t J) const;

private:
  void setLabel(size_t I, int32_t Label) {
    Records[I * Stride] = static_cast<uint64_t>(static_cast<int64_t>(Label));
  }
  const uint64_t *bits(size_t I) const { return Records.data() + I * Stride + 1; }
  uint64_t *bits(size_t I) { return Records.data() + I * Stride + 1; }

  int32_t NRanks = 0;
  size_t Words = 0;  ///< Bit words per chunk.
  size_t Stride = 1; ///< Words per record: the label, then the bits.
  std::vector<uint64_t> Records;
};

} // namespace cclc::verify
