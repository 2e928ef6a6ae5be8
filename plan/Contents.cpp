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

ContentArray::ContentArray(size_t Size, int32_t NRanks)
    : NRanks(NRanks), Words((static_cast<size_t>(NRanks) + 63) / 64), Stride(Words + 1),
      Records(Size * Stride, 0) {
  for (size_t I = 0; I < Size; ++I)
    setLabel(I, Undefined);
}

void ContentArray::setSingle(size_t I, int32_t Label, int32_t Rank) {
  CCLC_ASSERT(Rank >= 0 && Rank < NRanks, "rank out of range");
  setLabel(I, Label);
  uint64_t *B = bits(I);
  std::fill(B, B + Words, 0);
  B[Rank / 64] = uint64_t(1) << (Rank % 64);
}

void ContentArray::setAllRanks(size_t I, int32_t Label) {
  setLabel(I, Label);
  uint64_t *B = bits(I);
  std::fill(B, B + Words, ~uint64_t(0));
  if (NRanks % 64 != 0)
    B[Words - 1] = (uint64_t(1) << (NRanks % 64)) - 1;
}

void ContentArray::copyFrom(size_t I, const ContentArray &From, size_t J) {
  std::copy_n(From.Records.data() + J * Stride, Stride, Records.data() + I * Stride);
}

int32_t ContentArray::firstSharedRank(size_t I, const ContentArray &From, size_t J) const {
  const uint64_t *A = bits(I), *B = From.bits(J);
  for (size_t W = 0; W < Words; ++W)
    if (uint64_t Both = A[W] & B[W])
      return static_cast<int32_t>(W * 64 + static_cast<size_t>(std::countr_zero(Both)));
  return -1;
}

void ContentArray::mergeFrom(size_t I, const ContentArray &From, size_t J) {
  uint64_t *A = bits(I);
  const uint64_t *B = From.bits(J);
  for (size_t W = 0; W < Words; ++W)
    A[W] |= B[W];
}

bool ContentArray::sameAs(size_t I, const ContentArray &Other, size_t J) const {
  return std::equal(Records.data() + I * Stride, Records.data() + (I + 1) * Stride,
                    Other.Records.data() + J * Stride);
}

std::string ContentArray::describe(size_t I) const {
  CCLC_ASSERT(label(I) >= 0, "describing a chunk without data");
  std::string Data = "input[" + std::to_string(label(I)) + "] of ";
  const uint64_t *B = bits(I);
  int32_t Count = 0;
  for (size_t W = 0; W < Words; ++W)
    Count += std::popcount(B[W]);
  if (Count == NRanks && NRanks > 1)
    return Data + "all " + std::to_string(NRanks) + " ranks";
  return Data + rankList(B, Words);
}

std::string ContentArray::describeMissing(size_t I, const ContentArray &Other, size_t J) const {
  std::vector<uint64_t> Missing(Words);
  for (size_t W = 0; W < Words; ++W)
    Missing[W] = Other.bits(J)[W] & ~bits(I)[W];
  return rankList(Missing.data(), Words);
}

} // namespace cclc::verify
