//===- Postcondition.cpp - What each collective leaves in output ----------===//

#include "plan/Postcondition.h"
#include "plan/Assert.h"

namespace cclc::verify {

using plan::CollectiveKind;

OutputExpectation expectedOutput(const sched::Schedule &S, int32_t Rank, int32_t Chunk) {
  using sched::BufferKind;
  const int32_t Channel = S.channelOfChunk(BufferKind::Output, Chunk);
  const int32_t Unit = S.unitOfChunk(BufferKind::Output, Chunk);
  const int32_t Piece = Chunk % S.ChunksPerChannel;
  auto Input = [&](int32_t InputUnit) {
    return S.chunkIndex(BufferKind::Input, Channel, InputUnit, Piece);
  };
  switch (S.Collective) {
  case CollectiveKind::AllReduce:
    return {true, Input(0), -1};
  case CollectiveKind::Reduce:
    return {Rank == S.Root, Input(0), -1};
  case CollectiveKind::Broadcast:
    return {true, Input(0), S.Root};
  case CollectiveKind::AllGather:
    return {true, Input(0), Unit};
  case CollectiveKind::ReduceScatter:
    return {true, Input(Rank), -1};
  case CollectiveKind::AllToAll:
    return {true, Input(Rank), Unit};
  }
  CCLC_UNREACHABLE("unknown collective");
}

} // namespace cclc::verify
