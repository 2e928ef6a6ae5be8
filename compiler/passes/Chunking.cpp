//===- Chunking.cpp - Finer chunks and software pipelining ----------------===//

#include "compiler/passes/Chunking.h"
#include "plan/MessageMatch.h"
#include "plan/Assert.h"

#include <algorithm>
#include <climits>
#include <deque>
#include <tuple>
#include <unordered_map>

namespace cclc::passes {

using sched::BufferKind;
using sched::OpKind;
using sched::Schedule;
using sched::Slice;
using sched::Step;

std::string ChunkingResult::summary() const {
  std::string Text = "factor " + std::to_string(Factor) + ", ";
  Text += Pipelined ? std::to_string(Stages) + " stages" : "not pipelined";
  return Text + ", " + std::to_string(StepsBefore) + " -> " + std::to_string(StepsAfter) +
         " steps";
}

int32_t maxChunkingFactor(const Schedule &S) {
  int32_t Largest = std::max({S.bufferChunks(BufferKind::Input),
                              S.bufferChunks(BufferKind::Output),
                              S.bufferChunks(BufferKind::Scratch), 1});
  return INT32_MAX / Largest;
}

namespace {

constexpr int32_t NoMessage = -1;
constexpr int32_t NoBuffers = 3;

/// The messages a step takes part in, as indices into the message table.
struct StepMessages {
  int32_t Received = NoMessage;
  int32_t Sent = NoMessage;
};

struct Message {
  int32_t Sender = -1;   ///< Program index of the sending step.
  int32_t Receiver = -1; ///< Program index of the receiving step.
  int32_t Stage = 0;
};

/// A slice a step reads or writes.
struct Access {
  Slice Data;
  bool Writes;
};

/// What a step reads and writes. A write also orders the step after earlier
/// readers, so read-modify-write operations list only the write.
int accessesOf(const Step &St, Access Out[2]) {
  switch (St.Op) {
  case OpKind::Send: Out[0] = {St.Src, false}; return 1;
  case OpKind::Copy:
  case OpKind::Reduce:
    Out[0] = {St.Src, false};
    Out[1] = {St.Dst, true};
    return 2;
  case OpKind::Recv:
  case OpKind::RecvReduce:
  case OpKind::RecvReduceSend:
  case OpKind::RecvCopySend: Out[0] = {St.Dst, true}; return 1;
  case OpKind::Exchange:
  case OpKind::ExchangeReduce: break;
  }
  CCLC_UNREACHABLE("unknown op");
}

/// Sub-chunk Piece of Factor equal parts of X.
Slice pieceOf(const Slice &X, int32_t Piece, int32_t Factor) {
  int32_t Size = X.Count / Factor;
  return Slice{X.Buffer, X.Chunk + Piece * Size, Size};
}

/// Finds the stage of every step (see the file comment) by propagating the
/// constraints to their least solution: programs are solved one at a time,
/// and a program is solved again whenever the stage of one of its messages
/// rises at the other end.
class StageSolver {
public:
  StageSolver(const Schedule &S, int32_t Factor);
  /// False when the messages do not match or the constraints have no
  /// solution.
  bool solve();
  const std::vector<int32_t> &stagesOf(int32_t Program) const { return Stages[Program]; }
  int32_t largestStage() const;

private:
  const std::vector<Step> &stepsOf(int32_t Program) const {
    return S.Ranks[Program / S.NChannels].Channels[Program % S.NChannels].Steps;
  }
  bool matchMessages();
  void solveProgram(int32_t Program);
  /// The earliest stage at which St's accesses see the sub-chunks they need.
  int32_t dataBound(const Step &St) const;
  void recordAccesses(const Step &St, int32_t Stage);
  /// Sets message Id's stage to at least Stage, queueing the other end
  /// (From is the program that raises it) when it rises.
  void raiseMessage(int32_t Id, int32_t Stage, int32_t From);

  const Schedule &S;
  int32_t Factor;
  int32_t NPrograms;
  std::vector<Message> Messages;
  std::vector<std::vector<StepMessages>> StepMsgs;
  std::vector<std::vector<int32_t>> Stages;
  std::deque<int32_t> Worklist;
  std::vector<bool> Queued;

  /// Per buffer chunk: the latest time (stage + piece) at which the program
  /// solved so far wrote it / accessed it; -1 when untouched.
  std::vector<int32_t> LastWrite[NoBuffers];
  std::vector<int32_t> LastAccess[NoBuffers];
  /// The accesses recorded, so that only they are cleared between programs.
  std::vector<Slice> Touched;
  /// The slice this program last sent to each peer, and that send's stage.
  std::unordered_map<int32_t, std::pair<Slice, int32_t>> LastSendTo;
};

StageSolver::StageSolver(const Schedule &S, int32_t Factor)
    : S(S), Factor(Factor), NPrograms(S.NRanks * S.NChannels) {
  StepMsgs.resize(NPrograms);
  Stages.resize(NPrograms);
  for (int32_t P = 0; P < NPrograms; ++P) {
    StepMsgs[P].resize(stepsOf(P).size());
    Stages[P].assign(stepsOf(P).size(), 0);
  }
  for (int32_t B = 0; B < NoBuffers; ++B) {
    LastWrite[B].assign(S.bufferChunks(static_cast<BufferKind>(B)), -1);
    LastAccess[B].assign(S.bufferChunks(static_cast<BufferKind>(B)), -1);
  }
}

bool StageSolver::matchMessages() {
  plan::MessageMatch Match(S);
  for (int32_t P = 0; P < NPrograms; ++P) {
    const std::vector<Step> &Steps = stepsOf(P);
    for (size_t I = 0; I < Steps.size(); ++I)
      if (sched::opSends(Steps[I].Op)) {
        StepMsgs[P][I].Sent = static_cast<int32_t>(Messages.size());
        Messages.push_back({P, -1, 0});
      }
  }
  for (int32_t P = 0; P < NPrograms; ++P) {
    const std::vector<Step> &Steps = stepsOf(P);
    for (size_t I = 0; I < Steps.size(); ++I) {
      if (!sched::opReceives(Steps[I].Op))
        continue;
      std::optional<plan::StepRef> Send =
          Match.senderOf({P / S.NChannels, P % S.NChannels, static_cast<int32_t>(I)});
      if (!Send)
        return false;
      int32_t Id = StepMsgs[Send->Rank * S.NChannels + Send->Channel][Send->Index].Sent;
      StepMsgs[P][I].Received = Id;
      Messages[Id].Receiver = P;
    }
  }
  return std::all_of(Messages.begin(), Messages.end(),
                     [](const Message &M) { return M.Receiver >= 0; });
}

bool StageSolver::solve() {
  if (!matchMessages())
    return false;
  Queued.assign(NPrograms, true);
  for (int32_t P = 0; P < NPrograms; ++P)
    Worklist.push_back(P);
  // A solution exists within a few rounds per program for every algorithm in
  // the library; running much longer means the stages are chasing a cycle.
  int64_t Budget = 64 * static_cast<int64_t>(NPrograms) + 1024;
  while (!Worklist.empty()) {
    if (Budget-- == 0)
      return false;
    int32_t P = Worklist.front();
    Worklist.pop_front();
    Queued[P] = false;
    solveProgram(P);
  }
  return true;
}

int32_t StageSolver::dataBound(const Step &St) const {
  Access Acc[2];
  int32_t Bound = 0;
  for (int K = 0, N = accessesOf(St, Acc); K < N; ++K) {
    const Slice &X = Acc[K].Data;
    const std::vector<int32_t> &Last =
        (Acc[K].Writes ? LastAccess : LastWrite)[static_cast<int>(X.Buffer)];
    int32_t PieceSize = X.Count / Factor;
    for (int32_t C = 0; C < X.Count; ++C)
      Bound = std::max(Bound, Last[X.Chunk + C] - C / PieceSize);
  }
  return Bound;
}

void StageSolver::recordAccesses(const Step &St, int32_t Stage) {
  Access Acc[2];
  for (int K = 0, N = accessesOf(St, Acc); K < N; ++K) {
    const Slice &X = Acc[K].Data;
    int B = static_cast<int>(X.Buffer);
    int32_t PieceSize = X.Count / Factor;
    for (int32_t C = 0; C < X.Count; ++C) {
      int32_t Time = Stage + C / PieceSize;
      LastAccess[B][X.Chunk + C] = std::max(LastAccess[B][X.Chunk + C], Time);
      if (Acc[K].Writes)
        LastWrite[B][X.Chunk + C] = std::max(LastWrite[B][X.Chunk + C], Time);
    }
    Touched.push_back(X);
  }
}

void StageSolver::raiseMessage(int32_t Id, int32_t Stage, int32_t From) {
  Message &M = Messages[Id];
  if (Stage <= M.Stage)
    return;
  M.Stage = Stage;
  int32_t Other = M.Sender == From ? M.Receiver : M.Sender;
  if (!Queued[Other]) {
    Queued[Other] = true;
    Worklist.push_back(Other);
  }
}

void StageSolver::solveProgram(int32_t Program) {
  const std::vector<Step> &Steps = stepsOf(Program);
  const std::vector<StepMessages> &Msgs = StepMsgs[Program];
  std::vector<int32_t> &Stage = Stages[Program];
  int32_t Current = 0;
  for (size_t First = 0; First < Steps.size();) {
    // A step and the steps it runs together with (an exchange) share a stage.
    size_t End = First + 1;
    while (Steps[End - 1].WithNext && End < Steps.size())
      ++End;
    bool Exchange = End - First > 1;
    for (size_t I = First; I < End; ++I) {
      const Step &St = Steps[I];
      Current = std::max(Current, dataBound(St));
      if (Msgs[I].Sent != NoMessage)
        Current = std::max(Current, Messages[Msgs[I].Sent].Stage);
      if (Msgs[I].Received == NoMessage)
        continue;
      Current = std::max(Current, Messages[Msgs[I].Received].Stage);
      auto Last = LastSendTo.find(St.Peer);
      if (!Exchange && Last != LastSendTo.end() && Last->second.first.overlaps(St.Dst))
        Current = std::max(Current, Last->second.second + 1);
    }
    for (size_t I = First; I < End; ++I) {
      Stage[I] = Current;
      recordAccesses(Steps[I], Current);
      if (Msgs[I].Sent != NoMessage) {
        LastSendTo[Steps[I].sendTarget()] = {Steps[I].sentSlice(), Current};
        raiseMessage(Msgs[I].Sent, Current, Program);
      }
      if (Msgs[I].Received != NoMessage)
        raiseMessage(Msgs[I].Received, Current, Program);
    }
    First = End;
  }
  for (const Slice &X : Touched) {
    int B = static_cast<int>(X.Buffer);
    std::fill_n(LastWrite[B].begin() + X.Chunk, X.Count, -1);
    std::fill_n(LastAccess[B].begin() + X.Chunk, X.Count, -1);
  }
  Touched.clear();
  LastSendTo.clear();
}

int32_t StageSolver::largestStage() const {
  int32_t Largest = 0;
  for (const std::vector<int32_t> &Program : Stages)
    for (int32_t St : Program)
      Largest = std::max(Largest, St);
  return Largest;
}

/// Steps split into Factor sub-steps, in pipeline order: by time
/// (stage + piece), then stage, then original position.
std::vector<Step> pipelineSteps(const std::vector<Step> &Steps,
                                const std::vector<int32_t> &Stage, int32_t Factor) {
  std::vector<std::tuple<int32_t, int32_t, uint32_t>> Order;
  Order.reserve(Steps.size() * Factor);
  for (size_t I = 0; I < Steps.size(); ++I)
    for (int32_t J = 0; J < Factor; ++J)
      Order.emplace_back(Stage[I] + J, Stage[I], static_cast<uint32_t>(I));
  std::sort(Order.begin(), Order.end());
  std::vector<Step> Out;
  Out.reserve(Order.size());
  for (const auto &[Time, StepStage, I] : Order) {
    Step Sub = Steps[I];
    int32_t Piece = Time - StepStage;
    Sub.Src = pieceOf(Sub.Src, Piece, Factor);
    Sub.Dst = pieceOf(Sub.Dst, Piece, Factor);
    Out.push_back(Sub);
  }
  return Out;
}

void rescale(Slice &X, int32_t Factor) {
  X.Chunk *= Factor;
  X.Count *= Factor;
}

} // namespace

ChunkingResult chunkSchedule(Schedule &S, int32_t Factor) {
  CCLC_ASSERT(Factor >= 1 && Factor <= maxChunkingFactor(S), "chunking factor out of range");
  ChunkingResult Result;
  Result.Factor = Factor;
  Result.StepsBefore = Result.StepsAfter = S.stepCount();
  if (Factor == 1)
    return Result;
  S.ChunksPerChannel *= Factor;
  for (sched::RankProgram &R : S.Ranks)
    for (sched::ChannelProgram &C : R.Channels)
      for (Step &St : C.Steps) {
        rescale(St.Src, Factor);
        rescale(St.Dst, Factor);
      }
  StageSolver Solver(S, Factor);
  if (!Solver.solve())
    return Result;
  for (int32_t R = 0; R < S.NRanks; ++R)
    for (int32_t C = 0; C < S.NChannels; ++C) {
      std::vector<Step> &Steps = S.Ranks[R].Channels[C].Steps;
      Steps = pipelineSteps(Steps, Solver.stagesOf(R * S.NChannels + C), Factor);
    }
  Result.Pipelined = true;
  Result.Stages = Solver.largestStage() + 1;
  Result.StepsAfter = S.stepCount();
  return Result;
}

} // namespace cclc::passes
