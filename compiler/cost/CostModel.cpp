//===- CostModel.cpp - Predicted time of a schedule -----------------------===//

#include "compiler/cost/CostModel.h"
#include "compiler/passes/Chunking.h"
#include "compiler/topology/System.h"
#include "plan/Assert.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

namespace cclc::cost {

using sched::OpKind;
using sched::Schedule;
using sched::Step;
using topo::PathType;

double linkLatencyUs(PathType Type) {
  switch (Type) {
  case PathType::LOC: return 0.0;
  case PathType::NVL:
  case PathType::NVB:
  case PathType::C2C: return 0.6;
  case PathType::NET: return 2.7;
  default: return 1.0; // Every PCI and CPU path: NCCL's PCI latency.
  }
}

/// Units of the larger of the input and output buffers.
static int32_t messageUnits(const Schedule &S) { return std::max(S.Units.Input, S.Units.Output); }

uint64_t messageBytes(const Schedule &S, uint64_t UnitBytes) {
  return UnitBytes * static_cast<uint64_t>(messageUnits(S));
}

namespace {

/// One run of the execution model with times attached.
class Simulation {
public:
  Simulation(const Schedule &S, const LinkTable &Links, float ChannelBwGBs, uint64_t Bytes)
      : S(S), Links(Links), ChannelBw(ChannelBwGBs * 1e3),
        ChunkBytes(static_cast<double>(Bytes) / messageUnits(S) / S.chunksPerUnit()),
        Lanes(static_cast<size_t>(S.NRanks) * S.NChannels) {
    countChannelsPerLink();
  }

  /// The time the last rank finishes, in us, without launch latency.
  double run();

private:
  /// Where a step is in its group: waiting, received (a fused step still
  /// to forward), or done.
  enum class Phase : uint8_t { Waiting, Received, Done };

  /// One (rank, channel) program.
  struct Lane {
    size_t Pc = 0;       ///< First step of the current group.
    size_t GroupEnd = 0; ///< One past its last step; 0 before the group starts.
    double Clock = 0;    ///< When the previous group finished.
    std::vector<Phase> Phases;
    std::vector<double> Ready; ///< When each step of the group finished its receive.
    std::vector<double> Finish;
  };

  /// A (sender, receiver, channel) FIFO.
  struct Connection {
    std::vector<double> Arrival;  ///< Per message, in send order.
    std::vector<double> Consumed; ///< Per message, when its receive finished.
  };

  const std::vector<Step> &stepsOf(size_t Lane) const {
    return S.Ranks[Lane / S.NChannels].Channels[Lane % S.NChannels].Steps;
  }
  double bytesOf(const sched::Slice &X) const { return X.Count * ChunkBytes; }
  Connection &connection(int32_t From, int32_t To, int32_t Channel) {
    return Connections[{From, To, Channel}];
  }
  void countChannelsPerLink();
  /// Advances one lane as far as it goes; true if anything happened.
  bool advance(size_t LaneIndex);
  bool tryReceive(int32_t Rank, int32_t Channel, const Step &St, Lane &L, size_t I);
  bool trySend(int32_t Rank, int32_t Channel, const Step &St, Lane &L, size_t I);

  const Schedule &S;
  const LinkTable &Links;
  /// Bytes per us one channel moves at most; 0 for no limit.
  double ChannelBw;
  double ChunkBytes;
  std::vector<Lane> Lanes;
  std::map<std::tuple<int32_t, int32_t, int32_t>, Connection> Connections;
  /// Channels sending over each directed pair of ranks: they share its bandwidth.
  std::map<std::pair<int32_t, int32_t>, int32_t> Sharers;
};

void Simulation::countChannelsPerLink() {
  std::map<std::pair<int32_t, int32_t>, std::set<int32_t>> Users;
  for (size_t I = 0; I < Lanes.size(); ++I)
    for (const Step &St : stepsOf(I))
      if (sched::opSends(St.Op))
        Users[{static_cast<int32_t>(I / S.NChannels), St.sendTarget()}].insert(
            static_cast<int32_t>(I % S.NChannels));
  for (const auto &[Pair, Channels] : Users)
    Sharers[Pair] = static_cast<int32_t>(Channels.size());
}

bool Simulation::tryReceive(int32_t Rank, int32_t Channel, const Step &St, Lane &L, size_t I) {
  Connection &C = connection(St.Peer, Rank, Channel);
  size_t Index = C.Consumed.size();
  if (Index >= C.Arrival.size())
    return false;
  bool Reduces = St.Op == OpKind::RecvReduce || St.Op == OpKind::RecvReduceSend;
  double Done = std::max(L.Clock, C.Arrival[Index]) +
                (Reduces ? bytesOf(St.Dst) / (topo::LocBw * 1e3) : 0.0);
  C.Consumed.push_back(Done);
  L.Ready[I] = Done;
  L.Phases[I] = sched::opSends(St.Op) ? Phase::Received : Phase::Done;
  L.Finish[I] = Done;
  return true;
}

bool Simulation::trySend(int32_t Rank, int32_t Channel, const Step &St, Lane &L, size_t I) {
  int32_t To = St.sendTarget();
  Connection &C = connection(Rank, To, Channel);
  size_t Index = C.Arrival.size();
  double Start = L.Ready[I];
  if (Index >= static_cast<size_t>(S.BufferSlots)) {
    size_t Frees = Index - S.BufferSlots;
    if (Frees >= C.Consumed.size())
      return false; // The FIFO is full until the receiver takes message Frees.
    Start = std::max(Start, C.Consumed[Frees]);
  }
  const RankLink &Link = Links.link(Rank, To);
  double Bw = Link.BwGBs * 1e3 / Sharers[{Rank, To}]; // Bytes per us.
  if (ChannelBw > 0)
    Bw = std::min(Bw, ChannelBw);
  // Alpha-beta per message: the sender is busy for the latency and the
  // transfer, so consecutive messages on one connection pay both.
  double Done = Start + linkLatencyUs(Link.Type) + bytesOf(St.sentSlice()) / Bw;
  C.Arrival.push_back(Done);
  L.Phases[I] = Phase::Done;
  L.Finish[I] = Done;
  return true;
}

bool Simulation::advance(size_t LaneIndex) {
  Lane &L = Lanes[LaneIndex];
  const std::vector<Step> &Steps = stepsOf(LaneIndex);
  int32_t Rank = static_cast<int32_t>(LaneIndex / S.NChannels);
  int32_t Channel = static_cast<int32_t>(LaneIndex % S.NChannels);
  bool Progress = false;
  while (L.Pc < Steps.size()) {
    if (L.GroupEnd == 0) {
      L.GroupEnd = L.Pc + 1;
      while (Steps[L.GroupEnd - 1].WithNext && L.GroupEnd < Steps.size())
        ++L.GroupEnd;
      size_t Size = L.GroupEnd - L.Pc;
      L.Phases.assign(Size, Phase::Waiting);
      L.Ready.assign(Size, L.Clock);
      L.Finish.assign(Size, L.Clock);
    }
    // Every step of the group may move, except behind an earlier step of the
    // group that still waits on the same connection (FIFO order).
    bool Moved = false;
    std::set<std::tuple<int32_t, int32_t, bool>> Stalled;
    for (size_t I = 0; I < L.Phases.size(); ++I) {
      const Step &St = Steps[L.Pc + I];
      if (L.Phases[I] == Phase::Waiting && sched::opReceives(St.Op)) {
        auto Key = std::tuple(St.Peer, Rank, true);
        if (!Stalled.count(Key) && tryReceive(Rank, Channel, St, L, I))
          Moved = true;
        else
          Stalled.insert(Key);
      }
      bool SendsNow = (L.Phases[I] == Phase::Waiting && !sched::opReceives(St.Op)) ||
                      L.Phases[I] == Phase::Received;
      if (SendsNow && sched::opSends(St.Op)) {
        auto Key = std::tuple(Rank, St.sendTarget(), false);
        if (!Stalled.count(Key) && trySend(Rank, Channel, St, L, I))
          Moved = true;
        else
          Stalled.insert(Key);
      } else if (SendsNow) {
        // A local copy or reduction.
        L.Finish[I] = L.Clock + bytesOf(St.Dst) / (topo::LocBw * 1e3);
        L.Phases[I] = Phase::Done;
        Moved = true;
      }
    }
    Progress |= Moved;
    if (!std::all_of(L.Phases.begin(), L.Phases.end(),
                     [](Phase P) { return P == Phase::Done; }))
      return Progress;
    L.Clock = *std::max_element(L.Finish.begin(), L.Finish.end());
    L.Pc = L.GroupEnd;
    L.GroupEnd = 0;
    Progress = true;
  }
  return Progress;
}

double Simulation::run() {
  bool Progress = true;
  while (Progress) {
    Progress = false;
    for (size_t I = 0; I < Lanes.size(); ++I)
      Progress |= advance(I);
  }
  double End = 0;
  for (size_t I = 0; I < Lanes.size(); ++I) {
    CCLC_ASSERT(Lanes[I].Pc == stepsOf(I).size(),
                "the cost model's simulation deadlocked on a verified schedule");
    End = std::max(End, Lanes[I].Clock);
  }
  return End;
}

} // namespace

double CostModel::simulate(const Schedule &S, uint64_t Bytes) const {
  return LaunchLatencyUs + Simulation(S, Links, ChannelBwGBs, Bytes).run();
}

std::vector<std::vector<Prediction>>
CostModel::predictEachFactor(const Schedule &S, const std::vector<uint64_t> &Sizes) const {
  std::vector<std::vector<Prediction>> PerFactor;
  int32_t Largest = std::min(MaxChunkFactor, passes::maxChunkingFactor(S));
  double Factor = plan::busBwFactor(S.Collective, S.NRanks);
  for (int32_t F = 1; F <= Largest; F *= 2) {
    Schedule Chunked = S;
    if (F > 1)
      passes::chunkSchedule(Chunked, F);
    std::vector<Prediction> &Points = PerFactor.emplace_back();
    for (uint64_t Size : Sizes) {
      double Time = simulate(Chunked, Size);
      double AlgBw = static_cast<double>(Size) / (Time * 1e3);
      Points.push_back({Size, Time, AlgBw, AlgBw * Factor, F});
    }
  }
  return PerFactor;
}

std::vector<Prediction> CostModel::predict(const Schedule &S,
                                           const std::vector<uint64_t> &Sizes) const {
  std::vector<std::vector<Prediction>> PerFactor = predictEachFactor(S, Sizes);
  std::vector<Prediction> Best = PerFactor.front();
  for (const std::vector<Prediction> &Points : PerFactor)
    for (size_t I = 0; I < Sizes.size(); ++I)
      if (Points[I].TimeUs < Best[I].TimeUs)
        Best[I] = Points[I];
  return Best;
}

std::vector<uint64_t> explainSizes() {
  std::vector<uint64_t> Sizes;
  for (uint64_t Size = 1 << 10; Size <= (uint64_t(1) << 30); Size *= 4)
    Sizes.push_back(Size);
  return Sizes;
}

} // namespace cclc::cost
