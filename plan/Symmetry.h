//===- Symmetry.h - Rank symmetries of a schedule ---------------*- C++ -*-===//
//
// Most algorithms are written once for every rank: a ring rank does what its
// predecessor did, one position on; a butterfly or halving-doubling rank does
// what rank 0 does with its partner's bits flipped. Such a schedule is the
// image of one rank's program (the representative's) under a group of
// renamings, one per rank r, which map the representative to r. With ranks
// numbered by a labeling l (the physical order, or the algorithm's remap:
// the label of a physical rank is the logical rank placed there), so that
// the representative is the rank labelled 0:
//
//   rotation   ranks l(x) -> l(x) + l(r) (mod n), chunks c -> c + t_r (mod region)
//   xor        ranks l(x) -> l(x) ^ l(r),         chunks c -> c ^ t_r
//
// where a region is one channel's share of the chunk grid (Schedule.h) and
// t_r, one per rank and region, is read off the schedule. findSymmetry proves
// that every rank's every step is the representative's step renamed, so that
// the verifier can run the representative alone and know every other rank's
// state as the image of its own (see Verifier.cpp). Nothing is assumed: a
// schedule that is not exactly such an image gets no symmetry, and is
// verified rank by rank.
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

#include "plan/Contents.h"
#include "plan/Schedule.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace cclc::verify {

enum class SymmetryKind : uint8_t { Rotation, Xor };

/// A proven symmetry of a schedule: for every rank r, the renaming that
/// takes the representative's program to rank r's. Ranks are physical.
class Symmetry {
public:
  SymmetryKind kind() const { return Kind; }
  /// The rank whose program the others rename: the one labelled 0.
  int32_t representative() const { return Physical[0]; }
  /// Where renaming R takes rank X.
  int32_t rank(int32_t R, int32_t X) const { return Physical[combine(Label[X], Label[R])]; }
  /// The renaming that undoes renaming R, named by the rank it takes the
  /// representative to.
  int32_t inverse(int32_t R) const {
    const int32_t L = Label[R];
    return Physical[Kind == SymmetryKind::Xor ? L : (NRanks - L) % NRanks];
  }
  /// Set A of Sets with every rank renamed by R.
  RankSets::Id ranks(RankSets &Sets, RankSets::Id A, int32_t R) const;
  /// Where renaming R takes chunk C of any buffer (or input label C).
  int32_t chunk(int32_t R, int32_t C) const;
  /// The chunk renaming R takes to C.
  int32_t chunkBack(int32_t R, int32_t C) const;

  /// The rotation a rotated schedule (sched::Rotation) is built with: it
  /// holds by construction, so nothing is checked.
  static Symmetry ofRotation(const sched::Schedule &S);

private:
  friend std::optional<Symmetry> findSymmetry(const sched::Schedule &S);
  Symmetry(SymmetryKind Kind, const sched::Schedule &S, std::vector<int32_t> Physical);
  int32_t combine(int32_t A, int32_t B) const {
    return Kind == SymmetryKind::Xor ? A ^ B : (A + B) % NRanks;
  }
  int32_t &shift(int32_t R, int32_t Region) { return Shifts[size_t(R) * Regions + Region]; }
  int32_t shift(int32_t R, int32_t Region) const { return Shifts[size_t(R) * Regions + Region]; }

  SymmetryKind Kind;
  int32_t NRanks;
  int32_t Regions;
  int32_t RegionChunks;
  /// Physical[l] is the rank labelled l, Label its inverse; Identity when
  /// both are the identity (the renamings of runs of ranks are then runs).
  std::vector<int32_t> Physical, Label;
  bool Identity = true;
  /// t_r per rank and region.
  std::vector<int32_t> Shifts;
};

/// The symmetry S has, proved step by step, or none. Only allreduce
/// schedules qualify: their postcondition (every chunk reduced over all
/// ranks) is the same at every rank once renamed, so proving it at one rank
/// proves it everywhere.
std::optional<Symmetry> findSymmetry(const sched::Schedule &S);

} // namespace cclc::verify
