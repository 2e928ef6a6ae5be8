//===- CostModel.cpp - Predicted time of a schedule -----------------------===//

#include "compiler/cost/CostModel.h"
#include "common/Protocol.h"
#include "compiler/passes/Chunking.h"
#include "compiler/passes/ProtocolSelection.h"
#include "compiler/topology/System.h"
#include "plan/Assert.h"

#include <algorithm>
#include <bit>
#include <map>
#include <optional>
#include <unordered_map>

namespace cclc::cost {

using sched::OpKind;
using sched::Schedule;
using sched::Step;
using topo::PathType;

double linkLatencyUs(PathType Type, sched::Protocol P) {
  // {simple, LL, LL128}, indexed by the protocol.
  auto By = [P](double Simple, double LL, double LL128) {
    return P == sched::Protocol::LL ? LL : P == sched::Protocol::LL128 ? LL128 : Simple;
  };
  switch (Type) {
  case PathType::LOC: return 0.0;
  case PathType::NVL:
  case PathType::NVB:
  case PathType::C2C: return By(3.4, 0.6, 1.9);
  case PathType::NET: return By(14.0, 2.7, 4.0);
  default: return By(5.7, 1.0, 2.5); // Every PCI and CPU path: NCCL's PCI latency.
  }
}

double bandwidthShare(sched::Protocol P) {
  const kern::LineFormat F = kern::lineFormat(P);
  return P == sched::Protocol::Simple ? 1.0 : double(F.Payload) / double(F.LineBytes);
}

sched::Protocol protocolUsed(PathType Type, sched::Protocol P, double Message) {
  if (P == sched::Protocol::Simple || Message > double(kern::lineFormat(P).MaxBytes))
    return sched::Protocol::Simple;
  const bool WholeLines = Type == PathType::LOC || Type == PathType::NVL ||
                          Type == PathType::NVB || Type == PathType::C2C;
  return P == sched::Protocol::LL128 && !WholeLines ? sched::Protocol::Simple : P;
}

/// Units of the larger of the input and output buffers.
static int32_t messageUnits(const Schedule &S) { return std::max(S.Units.Input, S.Units.Output); }

uint64_t messageBytes(const Schedule &S, uint64_t UnitBytes) {
  return UnitBytes * static_cast<uint64_t>(messageUnits(S));
}

namespace {

/// One step as the simulation needs it: its connections and what its parts
/// cost, resolved once so that simulating is arithmetic.
struct SimStep {
  int32_t RecvConn = -1; ///< The connection it receives on, -1 when it does not.
  int32_t SendConn = -1; ///< The connection it sends on, -1 when it does not.
  int32_t Send = -1;     ///< Its entry in SimProgram::Sends, -1 when it does not send.
  int32_t Local = -1;    ///< Its entry in SimProgram::Locals, -1 when its local work is free.
  bool Reduces = false;  ///< Its receive reduces into Dst.
  bool WithNext = false;
};

/// A send's cost: its path and protocol (which give alpha), and what beta
/// multiplies. An Open send takes the protocol a simulation is asked for,
/// as the protocol pass would give it; the others keep their step's.
struct SendCost {
  int32_t Chunks = 0;
  PathType Path = PathType::LOC;
  sched::Protocol Proto = sched::Protocol::Simple;
  bool Open = false;
  /// It sends from input, which nothing writes, to a receive that reduces
  /// it: on a host the receiver combines it straight from the sender's
  /// buffer, which the sender leaves where it lies (plan/StableSends.h).
  bool ReadInPlace = false;
  double Bw = 0; ///< Bytes per us.
  auto operator<=>(const SendCost &) const = default;
};

/// A schedule resolved for the simulation, once for every chunk factor.
/// Channels never meet in the execution model (every connection belongs to
/// one channel), so a channel that repeats an earlier one on other chunks
/// (PipelinePlanner::representative) finishes at the same time and is not
/// simulated again: flat algorithms replicated on every channel simulate one.
class SimProgram {
public:
  SimProgram(const Schedule &S, const passes::PipelinePlanner &Planner, const LinkTable &Links,
             float ChannelBwGBs);

  /// The order of the lanes' steps when S is chunked by Factor with Stages:
  /// per lane, the step each piece comes from.
  std::vector<std::vector<uint32_t>> pieces(int32_t Factor,
                                            const passes::PipelineStages &Stages) const;

  /// The (rank, channel) programs simulated, rank-major as the execution
  /// model visits them, unchunked.
  std::vector<std::vector<SimStep>> Lanes;
  /// The distinct sends, and the distinct chunk counts written locally
  /// (copies, reductions, received reductions): their times are computed
  /// once per column (size and protocol).
  std::vector<SendCost> Sends;
  std::vector<int32_t> Locals;
  /// Per connection, the lanes at its two ends.
  std::vector<int32_t> SenderLane, ReceiverLane;
  int32_t BufferSlots = 2;
  /// Units of the message, and chunks per unit before chunking.
  int32_t Units = 1;
  int32_t ChunksPerUnit = 1;

private:
  int32_t connection(int32_t From, int32_t To, int32_t Channel);
  /// What names the (sender, receiver, channel) FIFO in maps.
  uint64_t connectionKey(int32_t From, int32_t To, int32_t Channel) const {
    return (static_cast<uint64_t>(From) * NRanks + To) * NChannels + Channel;
  }
  /// The index of Value in List, appended when new.
  template <typename T>
  static int32_t intern(std::map<T, int32_t> &Ids, std::vector<T> &List, const T &Value);

  int32_t NRanks = 0;
  int32_t NChannels = 1;
  /// Channels simulated, and the lane index of each within a rank.
  std::vector<int32_t> Channels;
  std::vector<int32_t> LaneOfChannel;
  std::unordered_map<uint64_t, int32_t> ConnectionIds;
};

int32_t SimProgram::connection(int32_t From, int32_t To, int32_t Channel) {
  auto [It, Added] = ConnectionIds.try_emplace(connectionKey(From, To, Channel),
                                               static_cast<int32_t>(SenderLane.size()));
  if (Added) {
    int32_t PerRank = static_cast<int32_t>(Channels.size());
    SenderLane.push_back(From * PerRank + LaneOfChannel[Channel]);
    ReceiverLane.push_back(To * PerRank + LaneOfChannel[Channel]);
  }
  return It->second;
}

template <typename T>
int32_t SimProgram::intern(std::map<T, int32_t> &Ids, std::vector<T> &List, const T &Value) {
  auto [It, Added] = Ids.try_emplace(Value, static_cast<int32_t>(List.size()));
  if (Added)
    List.push_back(Value);
  return It->second;
}

SimProgram::SimProgram(const Schedule &S, const passes::PipelinePlanner &Planner,
                       const LinkTable &Links, float ChannelBwGBs)
    : BufferSlots(S.BufferSlots), Units(messageUnits(S)), ChunksPerUnit(S.chunksPerUnit()),
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
  std::map<SendCost, int32_t> SendIds;
  std::map<int32_t, int32_t> LocalIds;
  // Messages on a connection are taken in the order they are sent: per
  // connection, whether each receive reduces, and how many sends are matched.
  std::unordered_map<uint64_t, std::vector<bool>> ReceivesReduce;
  std::unordered_map<uint64_t, size_t> Matched;
  for (int32_t R = 0; R < S.NRanks; ++R)
    for (int32_t C : Channels)
      for (const Step &St : S.Ranks[R].Channels[C].Steps)
        if (sched::opReceives(St.Op))
          ReceivesReduce[connectionKey(St.Peer, R, C)].push_back(St.Op == OpKind::RecvReduce ||
                                                       St.Op == OpKind::RecvReduceCopy);
  for (int32_t R = 0; R < S.NRanks; ++R)
    for (int32_t C : Channels) {
      std::vector<SimStep> &Lane = Lanes.emplace_back();
      for (const Step &St : S.Ranks[R].Channels[C].Steps) {
        SimStep &Sim = Lane.emplace_back();
        Sim.WithNext = St.WithNext;
        Sim.Reduces = St.Op == OpKind::RecvReduce || St.Op == OpKind::RecvReduceSend ||
                      St.Op == OpKind::RecvReduceCopy;
        if (Sim.Reduces || (!sched::opSends(St.Op) && !sched::opReceives(St.Op)))
          Sim.Local = intern(LocalIds, Locals, St.Dst.Count);
        if (sched::opReceives(St.Op))
          Sim.RecvConn = connection(St.Peer, R, C);
        if (!sched::opSends(St.Op))
          continue;
        int32_t To = St.sendTarget();
        Sim.SendConn = connection(R, To, C);
        const RankLink &Link = Links.link(R, To);
        const uint64_t Fifo = connectionKey(R, To, C);
        const std::vector<bool> &Reduces = ReceivesReduce[Fifo];
        const size_t Message = Matched[Fifo]++;
        bool ReadInPlace = St.Op == OpKind::Send && St.Src.Buffer == plan::BufferKind::Input &&
                           Message < Reduces.size() && Reduces[Message];
        SendCost Cost{St.sentSlice().Count, Link.Type, St.Proto, passes::takesProtocol(St),
                      ReadInPlace,
                      Link.BwGBs * 1e3 / Sharers[static_cast<uint64_t>(R) * S.NRanks + To]};
        if (ChannelBw > 0)
          Cost.Bw = std::min(Cost.Bw, ChannelBw);
        Sim.Send = intern(SendIds, Sends, Cost);
      }
    }
}

std::vector<std::vector<uint32_t>> SimProgram::pieces(int32_t Factor,
                                                      const passes::PipelineStages &Stages) const {
  std::vector<std::vector<uint32_t>> Order(Lanes.size());
  const int32_t PerRank = static_cast<int32_t>(Channels.size());
  for (size_t I = 0; I < Lanes.size(); ++I) {
    int32_t Program = static_cast<int32_t>(I) / PerRank * NChannels + Channels[I % PerRank];
    for (const passes::SubStep &Sub : passes::pipelineOrder(Stages.Stages[Program], Factor))
      Order[I].push_back(Sub.Step);
  }
  return Order;
}

/// One run of the execution model with times attached, for several message
/// sizes and protocols at once: which step moves when depends only on the
/// order of messages, never on their sizes or protocols, so every time is a
/// vector with one entry per column, a (protocol, size) pair, and each entry
/// goes through the arithmetic a run for that size and protocol alone would
/// do.
class Simulation {
public:
  /// P chunked by Factor: its lanes' steps split into pieces in the order
  /// Pieces gives, or, without pieces, left whole on the refined grid (what
  /// chunkSchedule makes). A piece moves as many chunks of the refined grid
  /// as its step did of the grid before; a whole step, Factor times as many.
  /// The columns are Sizes for each of Protocols in turn, the open sends
  /// (SendCost::Open) by that protocol; without Protocols, Sizes with every
  /// send by its step's protocol.
  /// With Cpu, a send costs its latency and a local pass its rate instead of
  /// the path's latency and a GPU's local bandwidth.
  Simulation(const SimProgram &P, int32_t Factor, const std::vector<std::vector<uint32_t>> *Pieces,
             const std::vector<uint64_t> &Sizes, std::span<const sched::Protocol> Protocols,
             const std::optional<target::CpuCosts> &Cpu);

  /// Per column, the time the last rank finishes, in us, without launch
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
    /// Per step of the group, per column: when it finished its receive, and
    /// when it finished.
    std::vector<double> Ready, Finish;
  };

  /// A (sender, receiver, channel) FIFO. At most BufferSlots messages are in
  /// flight, so only the last BufferSlots arrivals and consumptions are kept,
  /// per column, message M in slot M % BufferSlots. The message a full FIFO
  /// waits to be taken is BufferSlots before the next one, in its slot.
  struct Connection {
    int64_t Arrived = 0;
    int64_t Consumed = 0;
    int32_t ArrivedSlot = 0;
    int32_t ConsumedSlot = 0;
  };

  double *clock(size_t Lane) { return &Clocks[Lane * K]; }
  size_t stepCount(size_t Lane) const {
    return Pieces ? (*Pieces)[Lane].size() : P.Lanes[Lane].size();
  }
  const SimStep &step(size_t Lane, size_t Index) const {
    return P.Lanes[Lane][Pieces ? (*Pieces)[Lane][Index] : Index];
  }
  size_t slot(int32_t Conn, int32_t Slot) const {
    return (static_cast<size_t>(Conn) * P.BufferSlots + Slot) * K;
  }
  /// Advances one lane as far as it goes.
  void advance(size_t LaneIndex);
  bool tryReceive(const SimStep &St, Lane &L, size_t LaneIndex, size_t I);
  bool trySend(const SimStep &St, Lane &L, size_t I);
  /// Something Lane may wait on changed: it runs again (see run()).
  void wake(int32_t Lane);

  const SimProgram &P;
  const std::vector<std::vector<uint32_t>> *Pieces;
  size_t K;
  /// Per entry of P.Sends and P.Locals, per column: the time to send (alpha
  /// and beta) and to write locally.
  std::vector<double> SendTimes, LocalTimes;
  std::vector<Lane> Lanes;
  std::vector<double> Clocks; ///< Per lane, per column: when its previous group finished.
  std::vector<Connection> Connections;
  std::vector<double> Arrivals, Consumptions;
  /// Bit sets of the lanes to run in this sweep and in the next one.
  std::vector<uint64_t> ThisSweep, NextSweep;
  int32_t Running = -1;
  /// The FIFOs an earlier step of the group waits on (see advance()).
  std::vector<int32_t> Stalled;
};

Simulation::Simulation(const SimProgram &P, int32_t Factor,
                       const std::vector<std::vector<uint32_t>> *Pieces,
                       const std::vector<uint64_t> &Sizes,
                       std::span<const sched::Protocol> Protocols,
                       const std::optional<target::CpuCosts> &Cpu)
    : P(P), Pieces(Pieces), K(Sizes.size() * std::max<size_t>(Protocols.size(), 1)),
      Lanes(P.Lanes.size()), Clocks(P.Lanes.size() * K, 0.0),
      Connections(P.SenderLane.size()), Arrivals(P.SenderLane.size() * P.BufferSlots * K),
      Consumptions(P.SenderLane.size() * P.BufferSlots * K), ThisSweep((P.Lanes.size() + 63) / 64),
      NextSweep((P.Lanes.size() + 63) / 64) {
  const int32_t Scale = Pieces ? 1 : Factor;
  std::vector<double> ChunkBytes;
  for (size_t Column = 0; Column < K; ++Column)
    ChunkBytes.push_back(static_cast<double>(Sizes[Column % Sizes.size()]) / P.Units /
                         (P.ChunksPerUnit * Factor));
  for (const SendCost &Cost : P.Sends)
    for (size_t Column = 0; Column < K; ++Column) {
      sched::Protocol Proto =
          Cost.Open && !Protocols.empty() ? Protocols[Column / Sizes.size()] : Cost.Proto;
      double Message = Cost.Chunks * Scale * ChunkBytes[Column];
      // A host executor sends every message the simple way.
      sched::Protocol Used =
          Cpu ? sched::Protocol::Simple : protocolUsed(Cost.Path, Proto, Message);
      // A message its receiver combines from the sender's buffer moves in
      // the receiver's reduction (its rate counts the read across ranks).
      SendTimes.push_back(Cpu && Cost.ReadInPlace
                              ? Cpu->MessageUs
                              : (Cpu ? Cpu->MessageUs : linkLatencyUs(Cost.Path, Used)) +
                                    Message / (Cost.Bw * bandwidthShare(Used)));
    }
  const double LocalBw = (Cpu ? Cpu->ReduceGBs : topo::LocBw) * 1e3; // Bytes per us.
  for (int32_t Chunks : P.Locals)
    for (double Bytes : ChunkBytes)
      LocalTimes.push_back(Chunks * Scale * Bytes / LocalBw);
}

void Simulation::wake(int32_t Lane) {
  std::vector<uint64_t> &Sweep = Lane > Running ? ThisSweep : NextSweep;
  Sweep[Lane / 64] |= uint64_t(1) << (Lane % 64);
}

bool Simulation::tryReceive(const SimStep &St, Lane &L, size_t LaneIndex, size_t I) {
  Connection &C = Connections[St.RecvConn];
  if (C.Consumed >= C.Arrived)
    return false;
  const double *Arrival = &Arrivals[slot(St.RecvConn, C.ConsumedSlot)];
  double *Done = &Consumptions[slot(St.RecvConn, C.ConsumedSlot)];
  const double *Clock = clock(LaneIndex);
  const double *Reduce = St.Reduces ? &LocalTimes[St.Local * K] : nullptr;
  for (size_t J = 0; J < K; ++J) {
    Done[J] = std::max(Clock[J], Arrival[J]) + (Reduce ? Reduce[J] : 0.0);
    L.Ready[I * K + J] = L.Finish[I * K + J] = Done[J];
  }
  ++C.Consumed;
  C.ConsumedSlot = C.ConsumedSlot + 1 == P.BufferSlots ? 0 : C.ConsumedSlot + 1;
  L.Phases[I] = St.SendConn >= 0 ? Phase::Received : Phase::Done;
  wake(P.SenderLane[St.RecvConn]);
  return true;
}

bool Simulation::trySend(const SimStep &St, Lane &L, size_t I) {
  Connection &C = Connections[St.SendConn];
  const bool Full = C.Arrived >= P.BufferSlots;
  if (Full && C.Arrived - P.BufferSlots >= C.Consumed)
    return false; // The FIFO is full until the receiver takes that message.
  const double *Freed = &Consumptions[slot(St.SendConn, C.ArrivedSlot)];
  double *Done = &Arrivals[slot(St.SendConn, C.ArrivedSlot)];
  const double *Transfer = &SendTimes[St.Send * K];
  for (size_t J = 0; J < K; ++J) {
    double Start = L.Ready[I * K + J];
    if (Full)
      Start = std::max(Start, Freed[J]);
    // Alpha-beta per message: the sender is busy for the latency and the
    // transfer, so consecutive messages on one connection pay both.
    Done[J] = Start + Transfer[J];
    L.Finish[I * K + J] = Done[J];
  }
  ++C.Arrived;
  C.ArrivedSlot = C.ArrivedSlot + 1 == P.BufferSlots ? 0 : C.ArrivedSlot + 1;
  L.Phases[I] = Phase::Done;
  wake(P.ReceiverLane[St.SendConn]);
  return true;
}

void Simulation::advance(size_t LaneIndex) {
  Lane &L = Lanes[LaneIndex];
  const size_t Count = stepCount(LaneIndex);
  double *Clock = clock(LaneIndex);
  while (L.Pc < Count) {
    if (L.GroupEnd == 0) {
      L.GroupEnd = L.Pc + 1;
      while (step(LaneIndex, L.GroupEnd - 1).WithNext && L.GroupEnd < Count)
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
      const SimStep &St = step(LaneIndex, L.Pc + I);
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
        const double *Write = &LocalTimes[St.Local * K];
        for (size_t J = 0; J < K; ++J)
          L.Finish[I * K + J] = Clock[J] + Write[J];
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
  for (size_t I = 0; I < Lanes.size(); ++I)
    wake(static_cast<int32_t>(I));
  for (;;) {
    for (size_t Word = 0; Word < ThisSweep.size(); ++Word)
      while (ThisSweep[Word]) {
        int Bit = std::countr_zero(ThisSweep[Word]);
        ThisSweep[Word] &= ThisSweep[Word] - 1;
        Running = static_cast<int32_t>(Word * 64 + Bit);
        advance(static_cast<size_t>(Running));
      }
    Running = -1;
    if (std::all_of(NextSweep.begin(), NextSweep.end(), [](uint64_t W) { return W == 0; }))
      break;
    std::swap(ThisSweep, NextSweep);
  }
  std::vector<double> End(K, 0.0);
  for (size_t I = 0; I < Lanes.size(); ++I) {
    CCLC_ASSERT(Lanes[I].Pc == stepCount(I),
                "the cost model's simulation deadlocked on a verified schedule");
    for (size_t J = 0; J < K; ++J)
      End[J] = std::max(End[J], clock(I)[J]);
  }
  return End;
}

/// Predictions at Sizes of P's schedule chunked by Factor into Pieces, one
/// list for each of Protocols, or, without Protocols, one list of the steps'
/// own protocols, labelled Own (see Simulation); each call costs LaunchUs.
void predictions(const SimProgram &P, int32_t Factor,
                 const std::vector<std::vector<uint32_t>> *Pieces, double BusFactor,
                 const std::vector<uint64_t> &Sizes, std::span<const sched::Protocol> Protocols,
                 sched::Protocol Own, const std::optional<target::CpuCosts> &Cpu, double LaunchUs,
                 std::vector<std::vector<Prediction>> &Out) {
  std::vector<double> Ends = Simulation(P, Factor, Pieces, Sizes, Protocols, Cpu).run();
  for (size_t Column = 0; Column < Ends.size(); ++Column) {
    if (Column % Sizes.size() == 0)
      Out.emplace_back();
    uint64_t Bytes = Sizes[Column % Sizes.size()];
    double Time = LaunchUs + Ends[Column];
    double AlgBw = static_cast<double>(Bytes) / (Time * 1e3);
    sched::Protocol Proto = Protocols.empty() ? Own : Protocols[Column / Sizes.size()];
    Out.back().push_back({Bytes, Time, AlgBw, AlgBw * BusFactor, Factor, Proto});
  }
}

/// What S's sends say of protocols: whether one takes the protocol the
/// protocol pass gives, and the line protocol one sends by now, if any.
struct SendProtocols {
  bool Open = false;
  sched::Protocol Lines = sched::Protocol::Simple;
};

SendProtocols sendProtocols(const Schedule &S) {
  SendProtocols Found;
  for (const sched::RankProgram &Rank : S.Ranks)
    for (const sched::ChannelProgram &Channel : Rank.Channels)
      for (const Step &St : Channel.Steps)
        if (sched::opSends(St.Op)) {
          Found.Open |= passes::takesProtocol(St);
          if (St.Proto != sched::Protocol::Simple)
            Found.Lines = St.Proto;
        }
  return Found;
}

} // namespace

double CostModel::simulate(const Schedule &S, uint64_t Bytes) const {
  SimProgram Program(S, passes::PipelinePlanner(S), Links, ChannelBwGBs);
  return launchUs() + Simulation(Program, 1, nullptr, {Bytes}, {}, Cpu).run().front();
}

double CostModel::launchUs() const { return Cpu ? Cpu->CallUs : LaunchLatencyUs; }

std::vector<std::vector<Prediction>>
CostModel::predictEachFactor(const Schedule &S, const std::vector<uint64_t> &Sizes,
                             std::span<const sched::Protocol> Protocols) const {
  std::vector<std::vector<Prediction>> PerFactor;
  int32_t Largest = std::min(MaxChunkFactor, passes::maxChunkingFactor(S));
  double BusFactor = plan::busBwFactor(S.Collective, S.NRanks);
  passes::PipelinePlanner Planner(S);
  SimProgram Program(S, Planner, Links, ChannelBwGBs);
  const SendProtocols Sends = sendProtocols(S);
  if (!Sends.Open)
    Protocols = {};
  const sched::Protocol Own = Sends.Lines;
  predictions(Program, 1, nullptr, BusFactor, Sizes, Protocols, Own, Cpu, launchUs(), PerFactor);
  for (int32_t F = 2; F <= Largest; F *= 2) {
    std::optional<passes::PipelineStages> Stages = Planner.stages(F);
    std::optional<std::vector<std::vector<uint32_t>>> Pieces;
    if (Stages)
      Pieces = Program.pieces(F, *Stages);
    predictions(Program, F, Pieces ? &*Pieces : nullptr, BusFactor, Sizes, Protocols, Own, Cpu,
                launchUs(), PerFactor);
  }
  return PerFactor;
}

std::vector<Prediction> CostModel::predict(const Schedule &S,
                                           const std::vector<uint64_t> &Sizes) const {
  return fastestOf(predictEachFactor(S, Sizes));
}

std::vector<Prediction> fastestOf(const std::vector<std::vector<Prediction>> &Curves) {
  std::vector<Prediction> Best = Curves.front();
  for (const std::vector<Prediction> &Points : Curves)
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
