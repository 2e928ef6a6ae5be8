//===- Layout.h - Where the chunks of a schedule lie in memory ---*- C++ -*-===//
//
// A schedule names data by chunk of a channel-major grid (see the schedule
// IR): a buffer of U units is cut into NChannels * U * K chunks, chunk
// h*U*K + u*K + j being piece h*K + j of unit u. Executors run a schedule once
// per *round*: every unit's elements are cut into rounds small enough that
// the largest message of the schedule fits in one slot of a connection, which
// keeps the executors to the verifier's model (a FIFO of whole messages).
// Generated kernels, the plan interpreter and test references share this one
// definition, on the host and on the device.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "common/HostDevice.h"

#include <cstddef>
#include <cstdint>

namespace cclc::kern {

/// Piece starts are aligned to this many bytes so vector copies stay aligned
/// when the buffers are.
inline constexpr size_t PieceAlignBytes = 16;

/// A contiguous run of elements: [Begin, Begin + Elems) of a buffer.
struct Segment {
  size_t Begin = 0;
  size_t Elems = 0;
};

/// The shape of a schedule that fixes its memory layout.
struct GridShape {
  int32_t NChannels = 1;
  int32_t ChunksPerChannel = 1;
  /// The most chunks one step moves; bounds the message size.
  int32_t MaxSliceChunks = 1;
  CCLC_HD int32_t chunksPerUnit() const { return NChannels * ChunksPerChannel; }
};

/// The chunk grid of one round.
struct Layout {
  GridShape Shape;
  size_t Count = 0;      ///< Elements per unit of the whole buffer (the collective's count).
  size_t RoundBegin = 0; ///< First element of every unit covered by this round.
  size_t RoundElems = 0; ///< Elements of every unit in this round.
  size_t PieceElems = 0; ///< Elements of a full piece in this round.

  CCLC_HD size_t pieceBegin(int32_t Piece) const {
    size_t B = size_t(Piece) * PieceElems;
    return B < RoundElems ? B : RoundElems;
  }
  CCLC_HD size_t pieceElems(int32_t Piece) const {
    size_t B = pieceBegin(Piece), Left = RoundElems - B;
    return Left < PieceElems ? Left : PieceElems;
  }
  /// Chunk Chunk of a buffer of Units units, in elements from the buffer's start.
  /// Chunks run through the units K pieces at a time (K chunks per channel):
  /// chunk C is piece (C / (Units K)) K + C % K of unit (C % (Units K)) / K.
  /// A slice asks for its chunks many times a step, and each division costs
  /// dozens of cycles (emulated on a GPU), so the usual shapes take none (one
  /// unit: chunk C is piece C) or one (one chunk per channel).
  CCLC_HD Segment chunk(int32_t Units, int32_t Chunk) const {
    int32_t K = Shape.ChunksPerChannel, Unit = 0, Piece = Chunk;
    if (Units != 1 && K == 1) {
      Unit = Chunk % Units;
      Piece = Chunk / Units;
    } else if (Units != 1) {
      int32_t PerChannel = Units * K, Rest = Chunk % PerChannel;
      Unit = Rest / K;
      Piece = Chunk / PerChannel * K + Rest % K;
    }
    return {size_t(Unit) * Count + RoundBegin + pieceBegin(Piece), pieceElems(Piece)};
  }
  /// Elements of chunks [Chunk, Chunk + N): the size of a message moving them.
  CCLC_HD size_t sliceElems(int32_t Units, int32_t Chunk, int32_t N) const {
    size_t Total = 0;
    for (int32_t I = 0; I < N; ++I)
      Total += chunk(Units, Chunk + I).Elems;
    return Total;
  }
};

/// How a count is cut into rounds.
struct RoundPlan {
  GridShape Shape;
  size_t Count = 0;
  size_t MaxRoundElems = 0; ///< Elements of every unit in a full round.
  size_t Rounds = 0;

  /// Plans rounds so no message of MaxSliceChunks full pieces exceeds
  /// SlotBytes; SlotBytes must hold MaxSliceChunks aligned pieces.
  CCLC_HD static RoundPlan make(GridShape Shape, size_t Count, size_t ElemBytes,
                                size_t SlotBytes) {
    size_t Align = ElemBytes >= PieceAlignBytes ? 1 : PieceAlignBytes / ElemBytes;
    size_t Piece = SlotBytes / (size_t(Shape.MaxSliceChunks) * ElemBytes) / Align * Align;
    if (Piece == 0)
      Piece = Align;
    RoundPlan P;
    P.Shape = Shape;
    P.Count = Count;
    P.MaxRoundElems = Piece * size_t(Shape.chunksPerUnit());
    P.Rounds = (Count + P.MaxRoundElems - 1) / P.MaxRoundElems;
    return P;
  }
  CCLC_HD Layout round(size_t R, size_t ElemBytes) const {
    Layout L;
    L.Shape = Shape;
    L.Count = Count;
    L.RoundBegin = R * MaxRoundElems;
    size_t Left = Count - L.RoundBegin;
    L.RoundElems = Left < MaxRoundElems ? Left : MaxRoundElems;
    size_t Align = ElemBytes >= PieceAlignBytes ? 1 : PieceAlignBytes / ElemBytes;
    size_t Parts = size_t(Shape.chunksPerUnit());
    size_t Piece = (L.RoundElems + Parts - 1) / Parts;
    L.PieceElems = (Piece + Align - 1) / Align * Align;
    return L;
  }
};

} // namespace cclc::kern
