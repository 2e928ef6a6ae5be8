//===- Chunking.cpp - Finer chunks and software pipelining ----------------===//

#include "compiler/passes/Chunking.h"
#include "plan/MessageMatch.h"
#include "plan/Assert.h"

#include <algorithm>
#include <climits>
#include <deque>
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
  case OpKind::RecvReduceCopy:
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

/// X in the grid refined by Factor.
Slice refined(const Slice &X, int32_t Factor) {
  return Slice{X.Buffer, X.Chunk * Factor, X.Count * Factor};
}

} // namespace

/// Which sends and receives make each message: the same for every factor.
struct PipelinePlanner::MessageTable {
  std::vector<Message> Messages;
  std::vector<std::vector<StepMessages>> StepMsgs;
};

namespace {

/// Finds the stage of every step (see the file comment) by propagating the
/// constraints to their least solution: programs are solved one at a time,
/// and a program is solved again whenever the stage of one of its messages
/// rises at the other end. It reads the schedule before refinement and
/// refines each slice as it looks at it, so that the cost model can ask for
/// the stages of every factor without copying the schedule. Only the
/// programs of representative channels are solved (see
/// PipelinePlanner::representative); the others repeat them.
class StageSolver {
public:
  StageSolver(const Schedule &S, const PipelinePlanner::MessageTable &Table,
              const std::vector<int32_t> &Representative, int32_t Factor);
  /// False when the constraints have no solution.
  bool solve();
  const std::vector<int32_t> &stagesOf(int32_t Program) const {
    return Stages[Program - Program % S.NChannels + Representative[Program % S.NChannels]];
  }
  int32_t largestStage() const;

private:
  const std::vector<Step> &stepsOf(int32_t Program) const {
    return S.Ranks[Program / S.NChannels].Channels[Program % S.NChannels].Steps;
  }
  bool solved(int32_t Program) const {
    return Representative[Program % S.NChannels] == Program % S.NChannels;
  }
  void solveProgram(int32_t Program);
  /// The earliest stage at which St's accesses see the sub-chunks they need.
  int32_t dataBound(const Step &St) const;
  void recordAccesses(const Step &St, int32_t Stage);
  /// Sets message Id's stage to at least Stage, queueing the other end
  /// (From is the program that raises it) when it rises.
  void raiseMessage(int32_t Id, int32_t Stage, int32_t From);

  const Schedule &S;
  const std::vector<std::vector<StepMessages>> &StepMsgs;
  const std::vector<int32_t> &Representative;
  int32_t Factor;
  int32_t NPrograms;
  std::vector<Message> Messages;
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

StageSolver::StageSolver(const Schedule &S, const PipelinePlanner::MessageTable &Table,
                         const std::vector<int32_t> &Representative, int32_t Factor)
    : S(S), StepMsgs(Table.StepMsgs), Representative(Representative), Factor(Factor),
      NPrograms(S.NRanks * S.NChannels), Messages(Table.Messages) {
  Stages.resize(NPrograms);
  for (int32_t P = 0; P < NPrograms; ++P)
    if (solved(P))
      Stages[P].assign(stepsOf(P).size(), 0);
  for (int32_t B = 0; B < NoBuffers; ++B) {
    LastWrite[B].assign(S.bufferChunks(static_cast<BufferKind>(B)) * Factor, -1);
    LastAccess[B].assign(S.bufferChunks(static_cast<BufferKind>(B)) * Factor, -1);
  }
}

bool StageSolver::solve() {
  Queued.assign(NPrograms, false);
  for (int32_t P = 0; P < NPrograms; ++P)
    if (solved(P)) {
      Queued[P] = true;
      Worklist.push_back(P);
    }
  // Each channel's programs meet only each other, so a channel that repeats
  // another would be solved in the same number of rounds: a round of a
  // representative counts once for every channel it stands for.
  std::vector<int64_t> Weight(S.NChannels, 0);
  for (int32_t C = 0; C < S.NChannels; ++C)
    ++Weight[Representative[C]];
  // A solution exists within a few rounds per program for every algorithm in
  // the library; running much longer means the stages are chasing a cycle.
  int64_t Budget = 64 * static_cast<int64_t>(NPrograms) + 1024;
  while (!Worklist.empty()) {
    int32_t P = Worklist.front();
    Budget -= Weight[P % S.NChannels];
    if (Budget < 0)
      return false;
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
    const Slice X = refined(Acc[K].Data, Factor);
    const std::vector<int32_t> &Last =
        (Acc[K].Writes ? LastAccess : LastWrite)[static_cast<int>(X.Buffer)];
    // Piece P of the slice is needed at time Stage + P.
    const int32_t PieceSize = X.Count / Factor;
    const int32_t *Chunk = Last.data() + X.Chunk;
    for (int32_t P = 0; P < Factor; ++P, Chunk += PieceSize) {
      int32_t Latest = -1;
      for (int32_t C = 0; C < PieceSize; ++C)
        Latest = std::max(Latest, Chunk[C]);
      if (PieceSize > 0)
        Bound = std::max(Bound, Latest - P);
    }
  }
  return Bound;
}

void StageSolver::recordAccesses(const Step &St, int32_t Stage) {
  Access Acc[2];
  for (int K = 0, N = accessesOf(St, Acc); K < N; ++K) {
    const Slice X = refined(Acc[K].Data, Factor);
    int B = static_cast<int>(X.Buffer);
    const int32_t PieceSize = X.Count / Factor;
    int32_t *Accessed = LastAccess[B].data() + X.Chunk;
    int32_t *Written = LastWrite[B].data() + X.Chunk;
    for (int32_t P = 0; P < Factor; ++P, Accessed += PieceSize, Written += PieceSize) {
      const int32_t Time = Stage + P;
      for (int32_t C = 0; C < PieceSize; ++C)
        Accessed[C] = std::max(Accessed[C], Time);
      if (Acc[K].Writes)
        for (int32_t C = 0; C < PieceSize; ++C)
          Written[C] = std::max(Written[C], Time);
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

/// Steps split into Factor sub-steps, in pipeline order.
std::vector<Step> pipelineSteps(const std::vector<Step> &Steps,
                                const std::vector<int32_t> &Stage, int32_t Factor) {
  std::vector<Step> Out;
  Out.reserve(Steps.size() * Factor);
  for (const SubStep &Sub : pipelineOrder(Stage, Factor)) {
    Step Piece = Steps[Sub.Step];
    Piece.Src = pieceOf(Piece.Src, Sub.Piece, Factor);
    Piece.Dst = pieceOf(Piece.Dst, Sub.Piece, Factor);
    Out.push_back(Piece);
  }
  return Out;
}

void rescale(Slice &X, int32_t Factor) {
  X.Chunk *= Factor;
  X.Count *= Factor;
}

} // namespace

std::vector<SubStep> pipelineOrder(const std::vector<int32_t> &Stage, int32_t Factor) {
  // Stages never fall along a program, so the steps running at one time
  // (stage <= time < stage + Factor) are a contiguous range, already in
  // (stage, position) order.
  std::vector<SubStep> Order;
  Order.reserve(Stage.size() * Factor);
  const size_t N = Stage.size();
  size_t Lo = 0, Hi = 0;
  for (int64_t Time = N ? Stage[0] : 0; Lo < N; ++Time) {
    for (; Hi < N && Stage[Hi] <= Time; ++Hi)
      CCLC_ASSERT(Hi == 0 || Stage[Hi - 1] <= Stage[Hi], "a stage falls along a program");
    while (Lo < Hi && Stage[Lo] + Factor <= Time)
      ++Lo;
    for (size_t I = Lo; I < Hi; ++I)
      Order.push_back({static_cast<uint32_t>(I), static_cast<int32_t>(Time - Stage[I])});
  }
  return Order;
}

namespace {

/// Whether channel C runs channel D's steps on other chunks: the same
/// operations with the same peers on slices of the same sizes, every slice
/// of a buffer moved by one amount. Its stages are then D's, and it moves
/// its data in the same time.
bool repeatsChannel(const Schedule &S, int32_t C, int32_t D) {
  std::optional<int64_t> Shift[NoBuffers];
  auto Moved = [&](const Slice &A, const Slice &B) {
    if (A.Buffer != B.Buffer || A.Count != B.Count)
      return false;
    if (A.Count == 0)
      return true;
    std::optional<int64_t> &By = Shift[static_cast<int>(A.Buffer)];
    if (!By)
      By = int64_t(A.Chunk) - B.Chunk;
    return *By == int64_t(A.Chunk) - B.Chunk;
  };
  for (const sched::RankProgram &R : S.Ranks) {
    const std::vector<Step> &A = R.Channels[C].Steps, &B = R.Channels[D].Steps;
    if (A.size() != B.size())
      return false;
    for (size_t I = 0; I < A.size(); ++I)
      if (A[I].Op != B[I].Op || A[I].Peer != B[I].Peer || A[I].SendPeer != B[I].SendPeer ||
          A[I].WithNext != B[I].WithNext || !Moved(A[I].Src, B[I].Src) ||
          !Moved(A[I].Dst, B[I].Dst))
        return false;
  }
  return true;
}

} // namespace

PipelinePlanner::PipelinePlanner(const Schedule &S) : S(S) {
  for (int32_t C = 0; C < S.NChannels; ++C) {
    int32_t Rep = C;
    for (int32_t D = 0; D < C && Rep == C; ++D)
      if (Representative[D] == D && repeatsChannel(S, C, D))
        Rep = D;
    Representative.push_back(Rep);
  }
  auto Table = std::make_unique<MessageTable>();
  const int32_t NPrograms = S.NRanks * S.NChannels;
  auto StepsOf = [&](int32_t P) -> const std::vector<Step> & {
    return S.Ranks[P / S.NChannels].Channels[P % S.NChannels].Steps;
  };
  Table->StepMsgs.resize(NPrograms);
  for (int32_t P = 0; P < NPrograms; ++P) {
    const std::vector<Step> &Steps = StepsOf(P);
    Table->StepMsgs[P].resize(Steps.size());
    for (size_t I = 0; I < Steps.size(); ++I)
      if (sched::opSends(Steps[I].Op)) {
        Table->StepMsgs[P][I].Sent = static_cast<int32_t>(Table->Messages.size());
        Table->Messages.push_back({P, -1, 0});
      }
  }
  plan::MessageMatch Match(S);
  for (int32_t P = 0; P < NPrograms; ++P) {
    const std::vector<Step> &Steps = StepsOf(P);
    for (size_t I = 0; I < Steps.size(); ++I) {
      if (!sched::opReceives(Steps[I].Op))
        continue;
      std::optional<plan::StepRef> Send =
          Match.senderOf({P / S.NChannels, P % S.NChannels, static_cast<int32_t>(I)});
      if (!Send)
        return;
      int32_t Id = Table->StepMsgs[Send->Rank * S.NChannels + Send->Channel][Send->Index].Sent;
      Table->StepMsgs[P][I].Received = Id;
      Table->Messages[Id].Receiver = P;
    }
  }
  if (std::all_of(Table->Messages.begin(), Table->Messages.end(),
                  [](const Message &M) { return M.Receiver >= 0; }))
    Messages = std::move(Table);
}

PipelinePlanner::~PipelinePlanner() = default;

std::optional<PipelineStages> PipelinePlanner::stages(int32_t Factor) const {
  CCLC_ASSERT(Factor >= 1 && Factor <= maxChunkingFactor(S), "chunking factor out of range");
  if (!Messages)
    return std::nullopt;
  StageSolver Solver(S, *Messages, Representative, Factor);
  if (!Solver.solve())
    return std::nullopt;
  PipelineStages Result;
  Result.Stages.reserve(static_cast<size_t>(S.NRanks) * S.NChannels);
  for (int32_t P = 0; P < S.NRanks * S.NChannels; ++P)
    Result.Stages.push_back(Solver.stagesOf(P));
  Result.Largest = Solver.largestStage();
  return Result;
}

ChunkingResult chunkSchedule(Schedule &S, int32_t Factor) {
  CCLC_ASSERT(Factor >= 1 && Factor <= maxChunkingFactor(S), "chunking factor out of range");
  ChunkingResult Result;
  Result.Factor = Factor;
  Result.StepsBefore = Result.StepsAfter = S.stepCount();
  if (Factor == 1)
    return Result;
  std::optional<PipelineStages> Stages = PipelinePlanner(S).stages(Factor);
  S.ChunksPerChannel *= Factor;
  for (sched::RankProgram &R : S.Ranks)
    for (sched::ChannelProgram &C : R.Channels)
      for (Step &St : C.Steps) {
        rescale(St.Src, Factor);
        rescale(St.Dst, Factor);
      }
  if (!Stages)
    return Result;
  for (int32_t R = 0; R < S.NRanks; ++R)
    for (int32_t C = 0; C < S.NChannels; ++C) {
      std::vector<Step> &Steps = S.Ranks[R].Channels[C].Steps;
      Steps = pipelineSteps(Steps, Stages->Stages[R * S.NChannels + C], Factor);
    }
  Result.Pipelined = true;
  Result.Stages = Stages->Largest + 1;
  Result.StepsAfter = S.stepCount();
  return Result;
}

} // namespace cclc::passes
