//===- Symmetry.h - Rank symmetries of a schedule ---------------*- C++ -*-===//
//
// Most algorithms are written once for every rank: a ring rank does what its
// predecessor did, one position on; a butterfly or halving-doubling rank does
// what rank 0 does with its partner's bits flipped. Such a schedule is the
// image of rank 0's program under a group of renamings, one per rank r,
// which map rank 0 to r:
//
//   rotation   ranks x -> x + r (mod n), chunks c -> c + t_r (mod region)
//   xor        ranks x -> x ^ r,         chunks c -> c ^ t_r
//
// where a region is one channel's share of the chunk grid (Schedule.h) and
// t_r, one per rank and region, is read off the schedule. findSymmetry proves
// that every rank's every step is rank 0's step renamed, so that the verifier
// can run rank 0 alone and know every other rank's state as the image of
// rank 0's (see Verifier.cpp). Nothing is assumed: a schedule that is not
// exactly such an image gets no symmetry, and is verified rank by rank.
//
// Renaming chunks permutes the inside of a slice as well as moving it: a
// halving-doubling rank that flips a high rank bit sends the same aligned
// block as rank 0, its quarters swapped. So a slice of a renamed step must
// be the renamed slice as a set, and for messages a set the renaming lays
// out the same way on both ends: rotation keeps message slices whole (no
// wrap past the region's end), xor needs aligned power-of-two blocks.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "plan/Schedule.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace cclc::verify {

enum class SymmetryKind : uint8_t { Rotation, Xor };

/// A proven symmetry of a schedule: for every rank r, the renaming that
/// takes rank 0's program to rank r's.
class Symmetry {
public:
  SymmetryKind kind() const { return Kind; }
  /// Where renaming r takes rank X: pi_r(X).
  int32_t rank(int32_t R, int32_t X) const {
    return Kind == SymmetryKind::Xor ? X ^ R : (X + R) % NRanks;
  }
  /// The renaming that undoes renaming R, named by the rank it takes 0 to.
  int32_t inverse(int32_t R) const {
    return Kind == SymmetryKind::Xor ? R : (NRanks - R) % NRanks;
  }
  /// Where renaming R takes chunk C of any buffer (or input label C).
  int32_t chunk(int32_t R, int32_t C) const;
  /// The chunk renaming R takes to C.
  int32_t chunkBack(int32_t R, int32_t C) const;

private:
  friend std::optional<Symmetry> findSymmetry(const sched::Schedule &S);
  Symmetry(SymmetryKind Kind, const sched::Schedule &S);
  int32_t &shift(int32_t R, int32_t Region) { return Shifts[size_t(R) * Regions + Region]; }
  int32_t shift(int32_t R, int32_t Region) const { return Shifts[size_t(R) * Regions + Region]; }

  SymmetryKind Kind;
  int32_t NRanks;
  int32_t Regions;
  int32_t RegionChunks;
  /// t_r per rank and region.
  std::vector<int32_t> Shifts;
};

/// The symmetry S has, proved step by step, or none. Only allreduce
/// schedules qualify: their postcondition (every chunk reduced over all
/// ranks) is the same at every rank once renamed, so proving it at rank 0
/// proves it everywhere.
std::optional<Symmetry> findSymmetry(const sched::Schedule &S);

} // namespace cclc::verify
