//===- Postcondition.cpp - What each collective leaves in output ----------===//

#include "compiler/verify/Postcondition.h"
#include "dsl/Assert.h"

namespace cclc::verify {

using dsl::CollectiveKind;

OutputExpectation expectedOutput(const sched::Schedule &S, int32_t Rank, int32_t Chunk) {
  const int32_t PerUnit = S.chunksPerUnit();
  const int32_t Unit = Chunk / PerUnit;
  const int32_t InUnit = Chunk % PerUnit;
  switch (S.Collective) {
  case CollectiveKind::AllReduce:
    return {true, Chunk, -1};
  case CollectiveKind::Reduce:
    return {Rank == S.Root, Chunk, -1};
  case CollectiveKind::Broadcast:
    return {true, Chunk, S.Root};
  case CollectiveKind::AllGather:
    return {true, InUnit, Unit};
  case CollectiveKind::ReduceScatter:
    return {true, Rank * PerUnit + InUnit, -1};
  case CollectiveKind::AllToAll:
    return {true, Rank * PerUnit + InUnit, Unit};
  }
  CCLC_UNREACHABLE("unknown collective");
}

} // namespace cclc::verify
