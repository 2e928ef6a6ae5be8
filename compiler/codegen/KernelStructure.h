//===- KernelStructure.h - One kernel's code for every rank -----*- C++ -*-===//
//
// The target-independent half of kernel generation: the shape of the code
// that runs a schedule on any rank, which the host and CUDA emitters then
// print.
//
//  - Steps become calls of primitives: one per step, except that a send
//    joined to the receive after it (WithNext) is one exchange.
//  - Channels whose calls are equal once each channel's own chunk offset is
//    taken away share one channel program (a flat ring on four channels is
//    one program run on four blocks of chunks).
//  - A channel program's ranks fall into rank classes: ranks whose calls have
//    the same shapes (primitive, buffers) run the same code, and the kernel
//    picks its class from a constexpr table (a tree's root, inner ranks and
//    leaves differ; a ring's ranks do not).
//  - A class's calls are cut into runs of equal shape whose peers, chunk
//    indices and slice sizes have closed forms over (rank, step in run) (see
//    IndexFit.h), so that sizes that depend on the rank (a Bruck allgather's
//    wrapped blocks) are expressions rather than code paths of their own,
//    the rank numbered physically, logically (when the algorithm remaps
//    ranks) or by position on the ring the channel's sends form.
//    Where a run has none, the longest prefix that has one is taken, and
//    stretches without any regularity read the fields from constexpr tables.
//  - Rounds that repeat a few calls of different shapes (a pairwise
//    alltoall's send and receive) are rolled into one loop whose body holds
//    a run per call, each fitted over the round, when there are more rounds
//    than are unrolled.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "compiler/codegen/IndexFit.h"
#include "plan/Program.h"
#include "plan/Schedule.h"
#include "plan/Diagnostics.h"

#include "common/Program.h"

#include <array>
#include <optional>
#include <string>
#include <vector>

namespace cclc::codegen {

/// What a call does: the language operation a primitive declares as its
/// effect (see templates/common/Primitive.h). The plan interpreters' steps
/// name the same operations.
using plan::OpKind;

/// The integer fields of a call; which ones an effect has is effectUses.
enum class Field : uint8_t { RecvPeer, SendPeer, SrcChunk, DstChunk, SrcCount, DstCount };
inline constexpr size_t NumFields = 6;
bool effectUses(OpKind E, Field F);
/// Whether F is a chunk index or a slice size rather than a peer.
bool isSliceField(Field F);
/// Whether F is about the source slice rather than the destination.
bool isSourceField(Field F);

/// One call of a primitive, as lowering (plan/Program.h) makes it, with its
/// chunks relative to its channel's block.
struct Call {
  OpKind Kind = OpKind::Copy;
  /// The primitive the algorithm chose; empty for the effect's own.
  std::string Primitive;
  sched::Protocol Proto = sched::Protocol::Simple; ///< How its messages travel.
  int32_t RecvPeer = -1; ///< The rank received from.
  int32_t SendPeer = -1; ///< The rank sent to.
  sched::Slice Src;      ///< Read by the effects that have a source.
  sched::Slice Dst;      ///< Written (received into) by the others.
  SourceLoc Loc;
  int32_t field(Field F) const;
};

/// What calls must share to be one line of code.
struct CallShape {
  OpKind Kind = OpKind::Copy;
  std::string Primitive;
  sched::Protocol Proto = sched::Protocol::Simple;
  sched::BufferKind SrcBuffer = sched::BufferKind::Input;
  sched::BufferKind DstBuffer = sched::BufferKind::Output;
  bool operator==(const CallShape &) const = default;
  /// The buffer of slice field F.
  sched::BufferKind bufferOf(Field F) const { return isSourceField(F) ? SrcBuffer : DstBuffer; }
};

/// How a run computes one field: a closed form or a table.
struct FieldCode {
  std::optional<IndexExpr> Expr;
  /// Without Expr: index into ChannelProgram::Tables.
  int32_t Table = -1;
};

/// Consecutive calls of one shape, written once: unrolled or as a loop over
/// the step counter.
struct Run {
  CallShape Shape;
  /// The class's ranks; Steps is the run's length.
  FitDomain Domain;
  std::array<FieldCode, NumFields> Fields;
  /// The .ccl statement of the first call.
  SourceLoc Loc;
};

/// Runs up to this long are unrolled, their step folded into every index;
/// longer ones become loops over the step counter.
inline constexpr int32_t MaxUnrolledSteps = 8;

/// Runs of one length that execute interleaved, a loop of Body.size() calls
/// a round: step S of Body[0], step S of Body[1], ..., then step S + 1. A
/// run of calls of one shape is a block of one.
struct RunBlock {
  std::vector<Run> Body;
  int32_t steps() const { return Body.front().Domain.Steps; }
};

struct RankClass {
  std::vector<int32_t> Ranks;
  std::vector<RunBlock> Blocks;
};

/// A field no closed form fits: Values[PhysicalRank * Steps + Step], zero for
/// ranks outside the class.
struct IndexTable {
  Field Of = Field::RecvPeer;
  int32_t Steps = 1;
  std::vector<int32_t> Values;
  /// The first field that needed it.
  SourceLoc Loc;
  /// Other fields with the same values read it too.
  bool Shared = false;
};

struct ChannelProgram {
  /// The channels running this program, ascending.
  std::vector<int32_t> Channels;
  /// The numberings its expressions read; [0] is the physical rank.
  std::vector<Numbering> Numberings;
  /// Class of each physical rank.
  std::vector<int32_t> ClassOfRank;
  std::vector<RankClass> Classes;
  std::vector<IndexTable> Tables;
};

struct KernelStructure {
  std::vector<ChannelProgram> Programs;
  /// The most chunks one message carries: the GridShape's MaxSliceChunks.
  int32_t MaxMessageChunks = 1;
  /// Units of scratch the kernel needs: none when no step touches scratch,
  /// so that the runtime allocates none.
  int32_t ScratchUnits = 0;
};

/// Builds the structure of S's kernel; S must be verified.
KernelStructure analyzeKernel(const sched::Schedule &S);

} // namespace cclc::codegen
