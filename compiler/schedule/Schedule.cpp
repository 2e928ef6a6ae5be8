//===- Schedule.cpp - The schedule IR -------------------------------------===//

#include "compiler/schedule/Schedule.h"
#include "dsl/Assert.h"

#include <algorithm>

namespace cclc::sched {

std::string_view bufferName(BufferKind Buf) {
  switch (Buf) {
  case BufferKind::Input: return "input";
  case BufferKind::Output: return "output";
  case BufferKind::Scratch: return "scratch";
  }
  CCLC_UNREACHABLE("unknown buffer");
}

char bufferLetter(BufferKind Buf) {
  switch (Buf) {
  case BufferKind::Input: return 'i';
  case BufferKind::Output: return 'o';
  case BufferKind::Scratch: return 's';
  }
  CCLC_UNREACHABLE("unknown buffer");
}

std::string_view opName(OpKind Op) {
  switch (Op) {
  case OpKind::Send: return "send";
  case OpKind::Recv: return "recv";
  case OpKind::RecvReduce: return "recv_reduce";
  case OpKind::Copy: return "copy";
  case OpKind::Reduce: return "reduce";
  case OpKind::RecvReduceSend: return "recv_reduce_send";
  case OpKind::RecvCopySend: return "recv_copy_send";
  }
  CCLC_UNREACHABLE("unknown op");
}

bool opReceives(OpKind Op) {
  return Op == OpKind::Recv || Op == OpKind::RecvReduce || Op == OpKind::RecvReduceSend ||
         Op == OpKind::RecvCopySend;
}

bool opSends(OpKind Op) {
  return Op == OpKind::Send || Op == OpKind::RecvReduceSend || Op == OpKind::RecvCopySend;
}

BufferUnits bufferUnits(dsl::CollectiveKind Kind, int32_t NRanks) {
  BufferUnits U;
  switch (Kind) {
  case dsl::CollectiveKind::AllGather: U.Output = NRanks; break;
  case dsl::CollectiveKind::ReduceScatter: U.Input = NRanks; break;
  case dsl::CollectiveKind::AllToAll: U.Input = U.Output = NRanks; break;
  default: break;
  }
  U.Scratch = std::max(U.Input, U.Output);
  return U;
}

size_t Schedule::stepCount() const {
  size_t N = 0;
  for (const RankProgram &R : Ranks)
    for (const ChannelProgram &C : R.Channels)
      N += C.Steps.size();
  return N;
}

} // namespace cclc::sched
