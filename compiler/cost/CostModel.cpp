//===- CostModel.cpp - Predicted time of a schedule -----------------------===//

#include "compiler/cost/CostModel.h"
#include "compiler/passes/Chunking.h"
#include "compiler/topology/System.h"
#include "plan/Assert.h"

#include <algorithm>
#include <functional>
#include <optional>
#include <unordered_map>

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

/// One step as the simulation needs it: its connections, its link and its
/// sizes in chunks, resolved once so that simulating is arithmetic.
struct SimStep {
  int32_t RecvConn = -1; ///< The connection it receives on, -1 when it does not.
  int32_t SendConn = -1; ///< The connection it sends on, -1 when it does not.
  bool Reduces = false;  ///< Its receive reduces into Dst.
  bool WithNext = false;
  int32_t DstCount = 0;  ///< Chunks it writes (receives, copies, reduces).
  int32_t SentCount = 0; ///< Chunks it sends.
  double LatencyUs = 0;  ///< Of the link it sends over.
  double Bw = 0;         ///< Bytes per us it sends at.
};

/// A schedule, chunked by a factor, resolved for the simulation. Channels
/// never meet in the execution model (every connection belongs to one
/// channel), so a channel that repeats an earlier one on other chunks
/// (PipelinePlanner::representative) finishes at the same time and is not
/// simulated again: flat algorithms replicated on every channel simulate one.
class SimProgram {
public:
  /// S chunked by Factor: split in the order Stages gives, or, without
  /// stages, left whole on the refined grid (what chunkSchedule makes).
  SimProgram(const Schedule &S, const passes::PipelinePlanner &Planner, const LinkTable &Links,
             float ChannelBwGBs, int32_t Factor, const passes::PipelineStages *Stages);

  /// The (rank, channel) programs simulated, rank-major as the execution
  /// model visits them.
  std::vector<std::vector<SimStep>> Lanes;
  /// Per connection, the lanes at its two ends.
  std::vector<int32_t> SenderLane, ReceiverLane;
  int32_t BufferSlots = 2;
  /// Units of the message, and chunks per unit after chunking.
  int32_t Units = 1;
  int32_t ChunksPerUnit = 1;

private:
  int32_t connection(int32_t From, int32_t To, int32_t Channel);

  int32_t NRanks = 0;
  int32_t NChannels = 1;
  /// Channels simulated, and the lane index of each within a rank.
  std::vector<int32_t> Channels;
  std::vector<int32_t> LaneOfChannel;
  std::unordered_map<uint64_t, int32_t> ConnectionIds;
};

int32_t SimProgram::connection(int32_t From, int32_t To, int32_t Channel) {
  uint64_t Key = (static_cast<uint64_t>(From) * NRanks + To) * NChannels + Channel;
  auto [It, Added] = ConnectionIds.try_emplace(Key, static_cast<int32_t>(SenderLane.size()));
  if (Added) {
    int32_t Lanes = static_cast<int32_t>(Channels.size());
    SenderLane.push_back(From * Lanes + LaneOfChannel[Channel]);
    ReceiverLane.push_back(To * Lanes + LaneOfChannel[Channel]);
  }
  return It->second;
}

SimProgram::SimProgram(const Schedule &S, const passes::PipelinePlanner &Planner,
                       const LinkTable &Links, float ChannelBwGBs, int32_t Factor,
                       const passes::PipelineStages *Stages)
    : BufferSlots(S.BufferSlots), Units(messageUnits(S)), ChunksPerUnit(S.chunksPerUnit() * Factor),
      NRanks(S.NRanks), NChannels(S.NChannels) {
  // Channels sending over each directed pair of ranks share its bandwidth.
  std::unordered_map<uint64_t, int32_t> Sharers;
  std::vector<int32_t> LastChannel(S.NRanks, -1);
  for (int32_t R = 0; R < S.NRanks; ++R) {
    std::fill(LastChannel.begin(), LastChannel.end(), -1);
    for (int32_t C = 0; C < S.NChannels; ++C)
      for (const Step &St : S.Ranks[R].Channels[C].Steps)
        if (sched::opSends(St.Op) && LastChannel[St.sendTarget()] != C) {
          LastChannel[St.sendTarget()] = C;
          ++Sharers[static_cast<uint64_t>(R) * S.NRanks + St.sendTarget()];
        }
  }
  for (int32_t C = 0; C < S.NChannels; ++C)
    if (Planner.representative(C) == C)
      Channels.push_back(C);
  LaneOfChannel.assign(S.NChannels, -1);
  for (size_t I = 0; I < Channels.size(); ++I)
    LaneOfChannel[Channels[I]] = static_cast<int32_t>(I);
  const double ChannelBw = ChannelBwGBs * 1e3; // Bytes per us; 0 for no limit.
  // Whole steps keep their slices on the refined grid; split ones move a
  // piece each, as many chunks of the refined grid as the step had before.
  const int32_t WholeScale = Stages ? 1 : Factor;
  for (int32_t R = 0; R < S.NRanks; ++R)
    for (int32_t C : Channels) {
      const std::vector<Step> &Steps = S.Ranks[R].Channels[C].Steps;
      std::vector<SimStep> &Lane = Lanes.emplace_back();
      Lane.reserve(Steps.size() * Factor);
      auto Add = [&](const Step &St) {
        SimStep Sim;
        Sim.WithNext = St.WithNext;
        Sim.DstCount = St.Dst.Count * WholeScale;
        Sim.Reduces = St.Op == OpKind::RecvReduce || St.Op == OpKind::RecvReduceSend;
        if (sched::opReceives(St.Op))
          Sim.RecvConn = connection(St.Peer, R, C);
        if (sched::opSends(St.Op)) {
          int32_t To = St.sendTarget();
          Sim.SendConn = connection(R, To, C);
          Sim.SentCount = St.sentSlice().Count * WholeScale;
          const RankLink &Link = Links.link(R, To);
          Sim.LatencyUs = linkLatencyUs(Link.Type);
          Sim.Bw = Link.BwGBs * 1e3 / Sharers[static_cast<uint64_t>(R) * S.NRanks + To];
          if (ChannelBw > 0)
            Sim.Bw = std::min(Sim.Bw, ChannelBw);
        }
        Lane.push_back(Sim);
      };
      if (Stages)
        for (const passes::SubStep &Sub : passes::pipelineOrder(Stages->Stages[R * S.NChannels + C], Factor))
          Add(Steps[Sub.Step]);
      else
        for (const Step &St : Steps)
          Add(St);
    }
}

/// One run of the execution model with times attached, for several message
/// sizes at once: which step moves when depends only on the order of
/// messages, never on their sizes, so every time is a vector with one entry
/// per size and each entry goes through the arithmetic a run for that size
/// alone would do.
class Simulation {
public:
  Simulation(const SimProgram &P, const std::vector<uint64_t> &Sizes);

  /// Per size, the time the last rank finishes, in us, without launch
  /// latency.
  std::vector<double> run();

private:
  /// Where a step is in its group: waiting, received (a fused step still
  /// to forward), or done.
  enum class Phase : uint8_t { Waiting, Received, Done };

  /// One (rank, channel) program.
  struct Lane {
    size_t Pc = 0;       ///< First step of the current group.
    size_t GroupEnd = 0; ///< One past its last step; 0 before the group starts.
    std::vector<Phase> Phases;
    /// Per step of the group, per size: when it finished its receive, and
    /// when it finished.
    std::vector<double> Ready, Finish;
  };

  /// A (sender, receiver, channel) FIFO. At most BufferSlots messages are in
  /// flight, so only the last BufferSlots arrivals and consumptions are kept,
  /// per size, message I at I % BufferSlots.
  struct Connection {
    int64_t Arrived = 0;
    int64_t Consumed = 0;
  };

  double *clock(size_t Lane) { return &Clocks[Lane * K]; }
  double *arrival(int32_t Conn, int64_t Message) {
    return &Arrivals[(static_cast<size_t>(Conn) * P.BufferSlots + Message % P.BufferSlots) * K];
  }
  double *consumption(int32_t Conn, int64_t Message) {
    return &Consumptions[(static_cast<size_t>(Conn) * P.BufferSlots + Message % P.BufferSlots) *
                         K];
  }
  /// Advances one lane as far as it goes.
  void advance(size_t LaneIndex);
  bool tryReceive(const SimStep &St, Lane &L, size_t LaneIndex, size_t I);
  bool trySend(const SimStep &St, Lane &L, size_t I);
  /// Something Lane may wait on changed: it runs again (see run()).
  void wake(int32_t Lane);

  const SimProgram &P;
  size_t K;
  std::vector<double> ChunkBytes; ///< Per size.
  std::vector<Lane> Lanes;
  std::vector<double> Clocks; ///< Per lane, per size: when its previous group finished.
  std::vector<Connection> Connections;
  std::vector<double> Arrivals, Consumptions;
  /// The lanes to run in this sweep (a min-heap) and in the next one.
  std::vector<int32_t> ThisSweep, NextSweep;
  std::vector<bool> InThisSweep, InNextSweep;
  int32_t Running = -1;
  /// The FIFOs an earlier step of the group waits on (see advance()).
  std::vector<int32_t> Stalled;
};

Simulation::Simulation(const SimProgram &P, const std::vector<uint64_t> &Sizes)
    : P(P), K(Sizes.size()), Lanes(P.Lanes.size()), Clocks(P.Lanes.size() * Sizes.size(), 0.0),
      Connections(P.SenderLane.size()),
      Arrivals(P.SenderLane.size() * P.BufferSlots * Sizes.size()),
      Consumptions(P.SenderLane.size() * P.BufferSlots * Sizes.size()),
      InThisSweep(P.Lanes.size()), InNextSweep(P.Lanes.size()) {
  for (uint64_t Bytes : Sizes)
    ChunkBytes.push_back(static_cast<double>(Bytes) / P.Units / P.ChunksPerUnit);
}

void Simulation::wake(int32_t Lane) {
  if (Lane > Running) {
    if (!InThisSweep[Lane]) {
      InThisSweep[Lane] = true;
      ThisSweep.push_back(Lane);
      std::push_heap(ThisSweep.begin(), ThisSweep.end(), std::greater<>());
    }
  } else if (!InNextSweep[Lane]) {
    InNextSweep[Lane] = true;
    NextSweep.push_back(Lane);
  }
}

bool Simulation::tryReceive(const SimStep &St, Lane &L, size_t LaneIndex, size_t I) {
  Connection &C = Connections[St.RecvConn];
  if (C.Consumed >= C.Arrived)
    return false;
  const double *Arrival = arrival(St.RecvConn, C.Consumed);
  double *Done = consumption(St.RecvConn, C.Consumed);
  const double *Clock = clock(LaneIndex);
  for (size_t J = 0; J < K; ++J) {
    Done[J] = std::max(Clock[J], Arrival[J]) +
              (St.Reduces ? St.DstCount * ChunkBytes[J] / (topo::LocBw * 1e3) : 0.0);
    L.Ready[I * K + J] = L.Finish[I * K + J] = Done[J];
  }
  ++C.Consumed;
  L.Phases[I] = St.SendConn >= 0 ? Phase::Received : Phase::Done;
  wake(P.SenderLane[St.RecvConn]);
  return true;
}

bool Simulation::trySend(const SimStep &St, Lane &L, size_t I) {
  Connection &C = Connections[St.SendConn];
  const double *Freed = nullptr;
  if (C.Arrived >= P.BufferSlots) {
    int64_t Frees = C.Arrived - P.BufferSlots;
    if (Frees >= C.Consumed)
      return false; // The FIFO is full until the receiver takes message Frees.
    Freed = consumption(St.SendConn, Frees);
  }
  double *Done = arrival(St.SendConn, C.Arrived);
  for (size_t J = 0; J < K; ++J) {
    double Start = L.Ready[I * K + J];
    if (Freed)
      Start = std::max(Start, Freed[J]);
    // Alpha-beta per message: the sender is busy for the latency and the
    // transfer, so consecutive messages on one connection pay both.
    Done[J] = Start + St.LatencyUs + St.SentCount * ChunkBytes[J] / St.Bw;
    L.Finish[I * K + J] = Done[J];
  }
  ++C.Arrived;
  L.Phases[I] = Phase::Done;
  wake(P.ReceiverLane[St.SendConn]);
  return true;
}

void Simulation::advance(size_t LaneIndex) {
  Lane &L = Lanes[LaneIndex];
  const std::vector<SimStep> &Steps = P.Lanes[LaneIndex];
  double *Clock = clock(LaneIndex);
  while (L.Pc < Steps.size()) {
    if (L.GroupEnd == 0) {
      L.GroupEnd = L.Pc + 1;
      while (Steps[L.GroupEnd - 1].WithNext && L.GroupEnd < Steps.size())
        ++L.GroupEnd;
      size_t Size = L.GroupEnd - L.Pc;
      L.Phases.assign(Size, Phase::Waiting);
      L.Ready.resize(Size * K);
      L.Finish.resize(Size * K);
      for (size_t I = 0; I < Size; ++I)
        for (size_t J = 0; J < K; ++J)
          L.Ready[I * K + J] = L.Finish[I * K + J] = Clock[J];
    }
    // Every step of the group may move, except behind an earlier step of the
    // group that still waits on the same connection (FIFO order). A FIFO is
    // 2 * connection + 1 for receiving, 2 * connection for sending.
    Stalled.clear();
    auto Blocked = [&](int32_t Fifo) {
      return std::find(Stalled.begin(), Stalled.end(), Fifo) != Stalled.end();
    };
    for (size_t I = 0; I < L.Phases.size(); ++I) {
      const SimStep &St = Steps[L.Pc + I];
      if (L.Phases[I] == Phase::Waiting && St.RecvConn >= 0) {
        int32_t Fifo = 2 * St.RecvConn + 1;
        if (Blocked(Fifo) || !tryReceive(St, L, LaneIndex, I))
          Stalled.push_back(Fifo);
      }
      bool SendsNow = (L.Phases[I] == Phase::Waiting && St.RecvConn < 0) ||
                      L.Phases[I] == Phase::Received;
      if (SendsNow && St.SendConn >= 0) {
        int32_t Fifo = 2 * St.SendConn;
        if (Blocked(Fifo) || !trySend(St, L, I))
          Stalled.push_back(Fifo);
      } else if (SendsNow) {
        // A local copy or reduction.
        for (size_t J = 0; J < K; ++J)
          L.Finish[I * K + J] = Clock[J] + St.DstCount * ChunkBytes[J] / (topo::LocBw * 1e3);
        L.Phases[I] = Phase::Done;
      }
    }
    if (!std::all_of(L.Phases.begin(), L.Phases.end(),
                     [](Phase Ph) { return Ph == Phase::Done; }))
      return;
    for (size_t J = 0; J < K; ++J) {
      Clock[J] = L.Finish[J];
      for (size_t I = 1; I < L.Phases.size(); ++I)
        Clock[J] = std::max(Clock[J], L.Finish[I * K + J]);
    }
    L.Pc = L.GroupEnd;
    L.GroupEnd = 0;
  }
}

std::vector<double> Simulation::run() {
  // The execution model runs the lanes in sweeps, each lane in order, until
  // a sweep moves nothing. A lane that could not move stays stuck until a
  // message arrives on a connection it receives from or leaves one it sends
  // on, so only lanes woken that way run: a lane woken by a lane before it
  // in this sweep, and every other one in the next sweep, as a full sweep
  // would run them, so that messages go in the same order.
  for (int32_t I = 0; I < static_cast<int32_t>(Lanes.size()); ++I) {
    ThisSweep.push_back(I);
    InThisSweep[I] = true;
  }
  while (!ThisSweep.empty()) {
    std::make_heap(ThisSweep.begin(), ThisSweep.end(), std::greater<>());
    while (!ThisSweep.empty()) {
      std::pop_heap(ThisSweep.begin(), ThisSweep.end(), std::greater<>());
      Running = ThisSweep.back();
      ThisSweep.pop_back();
      InThisSweep[Running] = false;
      advance(Running);
    }
    Running = -1;
    std::swap(ThisSweep, NextSweep);
    for (int32_t Lane : ThisSweep) {
      InNextSweep[Lane] = false;
      InThisSweep[Lane] = true;
    }
  }
  std::vector<double> End(K, 0.0);
  for (size_t I = 0; I < Lanes.size(); ++I) {
    CCLC_ASSERT(Lanes[I].Pc == P.Lanes[I].size(),
                "the cost model's simulation deadlocked on a verified schedule");
    for (size_t J = 0; J < K; ++J)
      End[J] = std::max(End[J], clock(I)[J]);
  }
  return End;
}

/// Predictions of S chunked by Factor (with Stages, split as chunking does).
std::vector<Prediction> predictions(const Schedule &S, const passes::PipelinePlanner &Planner,
                                    const LinkTable &Links, float ChannelBwGBs, int32_t Factor,
                                    const passes::PipelineStages *Stages,
                                    const std::vector<uint64_t> &Sizes) {
  SimProgram Program(S, Planner, Links, ChannelBwGBs, Factor, Stages);
  std::vector<double> Ends = Simulation(Program, Sizes).run();
  double BusFactor = plan::busBwFactor(S.Collective, S.NRanks);
  std::vector<Prediction> Points;
  for (size_t I = 0; I < Sizes.size(); ++I) {
    double Time = LaunchLatencyUs + Ends[I];
    double AlgBw = static_cast<double>(Sizes[I]) / (Time * 1e3);
    Points.push_back({Sizes[I], Time, AlgBw, AlgBw * BusFactor, Factor});
  }
  return Points;
}

} // namespace

double CostModel::simulate(const Schedule &S, uint64_t Bytes) const {
  return predictions(S, passes::PipelinePlanner(S), Links, ChannelBwGBs, 1, nullptr, {Bytes})
      .front()
      .TimeUs;
}

std::vector<std::vector<Prediction>>
CostModel::predictEachFactor(const Schedule &S, const std::vector<uint64_t> &Sizes) const {
  std::vector<std::vector<Prediction>> PerFactor;
  int32_t Largest = std::min(MaxChunkFactor, passes::maxChunkingFactor(S));
  passes::PipelinePlanner Planner(S);
  for (int32_t F = 1; F <= Largest; F *= 2) {
    std::optional<passes::PipelineStages> Stages;
    if (F > 1)
      Stages = Planner.stages(F);
    PerFactor.push_back(
        predictions(S, Planner, Links, ChannelBwGBs, F, Stages ? &*Stages : nullptr, Sizes));
  }
  return PerFactor;
}

std::vector<Prediction> CostModel::predict(const Schedule &S,
                                           const std::vector<uint64_t> &Sizes) const {
  return fastestFactor(predictEachFactor(S, Sizes));
}

std::vector<Prediction> fastestFactor(const std::vector<std::vector<Prediction>> &PerFactor) {
  std::vector<Prediction> Best = PerFactor.front();
  for (const std::vector<Prediction> &Points : PerFactor)
    for (size_t I = 0; I < Best.size(); ++I)
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
