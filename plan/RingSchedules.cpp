//===- RingSchedules.cpp - The library's rings, built directly ------------===//
//
// Each builder follows its .ccl file line by line. Ranks sit on the ring in
// order (position = rank, next = rank + 1), and a send that follows a
// receive of the same slice to the next rank is fused into one
// recv_reduce_send or recv_copy_send step, as the fusion pass does; copy
// elision and copy folding then run as the compiler runs them.
//
//===----------------------------------------------------------------------===//

#include "plan/RingSchedules.h"
#include "plan/CopyElision.h"
#include "plan/CopyFolding.h"

namespace cclc::plan {

namespace {

using sched::Slice;
using sched::Step;

/// Appends one rank's steps, fusing a send into the receive before it.
class StepWriter {
public:
  StepWriter(std::vector<Step> &Steps, int32_t Rank, int32_t NRanks)
      : Steps(Steps), Next((Rank + 1) % NRanks), Prev((Rank + NRanks - 1) % NRanks) {}

  void copy(Slice Src, Slice Dst) { add(OpKind::Copy, -1, Src, Dst); }
  void recv(Slice Dst) { add(OpKind::Recv, Prev, {}, Dst); }
  void recvReduce(Slice Dst) { add(OpKind::RecvReduce, Prev, {}, Dst); }
  void send(Slice Src) {
    Step *Last = Steps.empty() ? nullptr : &Steps.back();
    bool Fuses = Last && (Last->Op == OpKind::Recv || Last->Op == OpKind::RecvReduce) &&
                 Last->Dst == Src;
    if (!Fuses) {
      add(OpKind::Send, Next, Src, {});
      return;
    }
    Last->Op = Last->Op == OpKind::Recv ? OpKind::RecvCopySend : OpKind::RecvReduceSend;
    Last->SendPeer = Next;
  }

private:
  void add(OpKind Op, int32_t Peer, Slice Src, Slice Dst) {
    Step &St = Steps.emplace_back();
    St.Op = Op;
    St.Peer = Peer;
    St.Src = Src;
    St.Dst = Dst;
  }

  std::vector<Step> &Steps;
  int32_t Next, Prev;
};

Slice slice(BufferKind Buffer, int32_t Chunk, int32_t Count = 1) { return {Buffer, Chunk, Count}; }

/// (A mod N) for any A.
int32_t wrap(int32_t A, int32_t N) { return ((A % N) + N) % N; }

/// algorithms/ring-allreduce.ccl: a reduce-scatter then an allgather of the
/// reduced chunks, the buffer cut into nranks chunks.
void allReduce(StepWriter &W, int32_t Pos, int32_t N) {
  W.copy(slice(BufferKind::Input, 0, N), slice(BufferKind::Output, 0, N));
  for (int32_t S = 0; S < N - 1; ++S) {
    W.send(slice(BufferKind::Output, wrap(Pos - S, N)));
    W.recvReduce(slice(BufferKind::Output, wrap(Pos - S - 1, N)));
  }
  for (int32_t S = 0; S < N - 1; ++S) {
    W.send(slice(BufferKind::Output, wrap(Pos - S + 1, N)));
    W.recv(slice(BufferKind::Output, wrap(Pos - S, N)));
  }
}

/// algorithms/ring-allgather.ccl.
void allGather(StepWriter &W, int32_t Pos, int32_t N) {
  W.copy(slice(BufferKind::Input, 0), slice(BufferKind::Output, Pos));
  for (int32_t S = 0; S < N - 1; ++S) {
    W.send(slice(BufferKind::Output, wrap(Pos - S, N)));
    W.recv(slice(BufferKind::Output, wrap(Pos - S - 1, N)));
  }
}

/// algorithms/ring-reduce-scatter.ccl: partial sums in scratch.
void reduceScatter(StepWriter &W, int32_t Pos, int32_t N) {
  W.copy(slice(BufferKind::Input, 0, N), slice(BufferKind::Scratch, 0, N));
  for (int32_t S = 0; S < N - 1; ++S) {
    W.send(slice(BufferKind::Scratch, wrap(Pos - S - 1, N)));
    W.recvReduce(slice(BufferKind::Scratch, wrap(Pos - S - 2, N)));
  }
  W.copy(slice(BufferKind::Scratch, Pos), slice(BufferKind::Output, 0));
}

/// algorithms/ring-broadcast.ccl.
void broadcast(StepWriter &W, int32_t Pos, int32_t N, int32_t Root) {
  int32_t Hops = wrap(Pos - Root, N);
  if (Pos == Root)
    W.copy(slice(BufferKind::Input, 0), slice(BufferKind::Output, 0));
  else
    W.recv(slice(BufferKind::Output, 0));
  if (Hops != N - 1)
    W.send(slice(BufferKind::Output, 0));
}

/// algorithms/ring-reduce.ccl: partial sums flow toward the root.
void reduce(StepWriter &W, int32_t Pos, int32_t N, int32_t Root) {
  int32_t Hops = wrap(Pos - Root, N);
  if (Pos == Root) {
    W.copy(slice(BufferKind::Input, 0), slice(BufferKind::Output, 0));
    if (N > 1)
      W.recvReduce(slice(BufferKind::Output, 0));
    return;
  }
  W.copy(slice(BufferKind::Input, 0), slice(BufferKind::Scratch, 0));
  if (Hops != 1)
    W.recvReduce(slice(BufferKind::Scratch, 0));
  W.send(slice(BufferKind::Scratch, 0));
}

} // namespace

std::optional<sched::Schedule> ringSchedule(CollectiveKind Collective, int32_t NRanks,
                                            int32_t Root) {
  if (Collective == CollectiveKind::AllToAll)
    return std::nullopt;
  sched::Schedule S;
  S.Algorithm = "ring_" + std::string(collectiveName(Collective));
  S.Collective = Collective;
  S.Topology = TopologyKind::Ring;
  S.NRanks = NRanks;
  S.ChunksPerChannel = Collective == CollectiveKind::AllReduce ? NRanks : 1;
  S.Root = Root;
  S.Units = sched::bufferUnits(Collective, NRanks);
  for (int32_t R = 0; R < NRanks; ++R) {
    S.Remap.push_back(R);
    sched::RankProgram &P = S.Ranks.emplace_back();
    P.LogicalRank = R;
    StepWriter W(P.Channels.emplace_back().Steps, R, NRanks);
    switch (Collective) {
    case CollectiveKind::AllReduce: allReduce(W, R, NRanks); break;
    case CollectiveKind::AllGather: allGather(W, R, NRanks); break;
    case CollectiveKind::ReduceScatter: reduceScatter(W, R, NRanks); break;
    case CollectiveKind::Broadcast: broadcast(W, R, NRanks, Root); break;
    case CollectiveKind::Reduce: reduce(W, R, NRanks, Root); break;
    case CollectiveKind::AllToAll: break;
    }
  }
  elideCopies(S);
  foldCopies(S);
  return S;
}

} // namespace cclc::plan
