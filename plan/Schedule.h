//===- Schedule.h - The schedule IR -----------------------------*- C++ -*-===//
//
// An instantiated algorithm: for every physical rank and every channel, the
// ordered list of steps that rank executes, with concrete peers and buffer
// slices. Instantiation produces it, the verifier proves it correct, passes
// rewrite it, and every emitter (schedule text, plan JSON, MSCCL-IR XML, dot,
// CUDA and host kernels) reads it.
//
// Slices are measured in chunks, not bytes, so one schedule serves every
// message size. A unit is the per-rank element count of the collective (a
// buffer holds bufferUnits() of them); the algorithm's `chunks K` cuts every
// unit into K pieces per channel. A buffer of U units is a grid of
// NChannels * U * K chunks laid out channel-major: channel h owns the
// contiguous chunks [h*U*K, (h+1)*U*K), and within it chunk u*K + j is piece j
// of unit u. In memory, piece j of unit u on channel h is the (h*K + j)-th of
// the NChannels*K equal parts of unit u. Use chunkIndex/unitOfChunk/
// channelOfChunk rather than computing this by hand.
//
// Execution model (what the verifier proves and the runtime implements): each
// rank runs each channel's steps in order, channels independently. Every
// (sender, receiver, channel) connection is a FIFO of messages holding at most
// `BufferSlots` messages; a send copies its slice into the FIFO and blocks
// only while the FIFO is full; a receive blocks until a message is there. A
// step with WithNext set runs together with the step after it (an exchange):
// its send may be taken by the peer before the receive completes.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "plan/SourceManager.h"
#include "plan/Vocabulary.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cclc::sched {

using plan::BufferKind;
using plan::CollectiveKind;
using plan::OpKind;
using plan::Protocol;
using plan::TopologyKind;
using plan::bufferLetter;
using plan::bufferName;
using plan::opName;
using plan::opReceives;
using plan::opSends;
/// Chunks [Chunk, Chunk + Count) of one buffer: the template library's slice
/// reference, so that lowering copies slices unchanged.
using Slice = kern::SliceRef;

/// One step of a rank's channel. Its Op is one of plan::stepOps(): a
/// schedule writes an exchange as a send that runs with the receive after it.
struct Step {
  OpKind Op = OpKind::Copy;
  int32_t Peer = -1;     ///< Physical rank: the destination of Send, the source of receives.
  int32_t SendPeer = -1; ///< Fused forms only: where the received data goes next.
  Slice Src;             ///< Read by Send, Copy and Reduce.
  Slice Dst;             ///< Written by everything else.
  bool WithNext = false; ///< Runs together with the next step (exchange).
  SourceLoc Loc;         ///< The .ccl statement responsible, for diagnostics.
  /// The loop iteration that ran that statement (Schedule::iteration), so that
  /// a diagnostic can say which; 0 outside every loop or when unknown.
  uint32_t Iteration = 0;
  /// The template-library primitive that performs the step when the algorithm
  /// called one other than its effect's own (e.g. copy_streaming for a copy);
  /// empty for the default. Both halves of an exchange carry it.
  std::string Primitive;
  /// How the step's messages travel (common/Protocol.h); Simple for steps
  /// that send and receive nothing. Both halves of an exchange carry it.
  Protocol Proto = Protocol::Simple;
  /// The slice a send reads: Src for Send, Dst for the fused forms.
  const Slice &sentSlice() const { return Op == OpKind::Send ? Src : Dst; }
  /// The rank a send goes to.
  int32_t sendTarget() const { return Op == OpKind::Send ? Peer : SendPeer; }
};

struct ChannelProgram {
  std::vector<Step> Steps;
};

struct RankProgram {
  int32_t LogicalRank = 0;                 ///< The rank the algorithm's text calls `rank`.
  std::vector<ChannelProgram> Channels;    ///< Indexed by channel.
};

/// A `for` loop of the .ccl text.
struct SourceLoop {
  SourceLoc Loc;   ///< The `for` keyword.
  std::string Var; ///< The loop variable.
};

/// One iteration of a loop: its variable's value, inside an iteration of the
/// enclosing loop (Parent, 0 at the top level). Instantiation interns them,
/// so that every rank and channel that runs the same iteration shares one
/// entry and a step stores a single id, however many steps there are.
struct LoopIteration {
  uint32_t Parent = 0;
  uint32_t Loop = 0; ///< Index into Schedule::Loops.
  int64_t Value = 0;
};

/// How a schedule that holds rank 0's program alone (Schedule::Rotated)
/// stands for every rank's: rank r runs rank 0's steps with every peer p
/// replaced by (p + r) mod n and every slice smaller than its channel's
/// region moved ChunkStep * r chunks on, modulo the region. A slice that
/// fills its region stays as it is. Instantiation builds a schedule this way
/// only when it has proved, from the algorithm's text, that this is what
/// every rank would run (see Instantiate.h), so that a ring of thousands of
/// ranks is built, proved and written at the cost of one rank.
struct Rotation {
  int32_t ChunkStep = 0;
};

/// Units of the collective's per-rank count in each buffer.
struct BufferUnits {
  int32_t Input = 1;
  int32_t Output = 1;
  int32_t Scratch = 1;
  int32_t of(BufferKind Buf) const {
    return Buf == BufferKind::Input ? Input : Buf == BufferKind::Output ? Output : Scratch;
  }
};
/// allreduce/broadcast/reduce: 1/1; allgather: 1/n; reduce_scatter: n/1;
/// alltoall: n/n. Scratch is the larger of the two.
BufferUnits bufferUnits(CollectiveKind Kind, int32_t NRanks);

struct Schedule {
  std::string Algorithm;
  CollectiveKind Collective = CollectiveKind::AllReduce;
  TopologyKind Topology = TopologyKind::None;
  int32_t NRanks = 0;
  int32_t NChannels = 1;
  int32_t ChunksPerChannel = 1; ///< The algorithm's `chunks`, times the chunking pass's factor.
  int32_t Root = 0;
  int32_t BufferSlots = 2;
  BufferUnits Units;
  /// Remap[logical] = physical; the identity when the algorithm has no remap.
  std::vector<int32_t> Remap;
  /// Indexed by physical rank; rank 0's alone when Rotated is set.
  std::vector<RankProgram> Ranks;
  /// Set when Ranks holds rank 0's program alone and the others are its
  /// rotations (Rotation).
  std::optional<Rotation> Rotated;
  /// The loops and loop iterations that steps' Iteration ids name; empty for
  /// schedules that do not come from .ccl text (plans, MSCCL-IR).
  std::vector<SourceLoop> Loops;
  std::vector<LoopIteration> Iterations;

  /// The iteration with id Id (1-based: 0 means none).
  const LoopIteration &iteration(uint32_t Id) const { return Iterations[Id - 1]; }

  int32_t chunksPerUnit() const { return NChannels * ChunksPerChannel; }
  int32_t bufferChunks(BufferKind Buf) const { return Units.of(Buf) * chunksPerUnit(); }
  /// Chunks of one channel's share of a buffer.
  int32_t channelChunks(BufferKind Buf) const { return Units.of(Buf) * ChunksPerChannel; }
  /// The grid index of piece Piece of unit Unit on channel Channel.
  int32_t chunkIndex(BufferKind Buf, int32_t Channel, int32_t Unit, int32_t Piece) const {
    return Channel * channelChunks(Buf) + Unit * ChunksPerChannel + Piece;
  }
  int32_t channelOfChunk(BufferKind Buf, int32_t Chunk) const {
    return Chunk / channelChunks(Buf);
  }
  int32_t unitOfChunk(BufferKind Buf, int32_t Chunk) const {
    return Chunk % channelChunks(Buf) / ChunksPerChannel;
  }
  /// Steps held, which is rank 0's alone for a rotated schedule.
  size_t stepCount() const;
};

/// Rank R's version of rank 0's step St in the rotated schedule S.
Step rotatedStep(const Schedule &S, const Step &St, int32_t R);

/// Rank R's program of the rotated schedule S.
RankProgram rotatedProgram(const Schedule &S, int32_t R);

/// Makes a rotated schedule hold every rank's program, for the emitters and
/// passes that read them all; other schedules are left as they are.
void expandRotation(Schedule &S);

} // namespace cclc::sched
