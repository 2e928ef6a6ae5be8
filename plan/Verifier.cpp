//===- Verifier.cpp - Proves an instantiated schedule correct -------------===//

#include "plan/Verifier.h"
#include "plan/Contents.h"
#include "plan/Postcondition.h"
#include "plan/Program.h"
#include "plan/Symmetry.h"
#include "plan/Assert.h"

#include <algorithm>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace cclc::verify {

using namespace sched;

namespace {

/// Errors past this many are counted, not printed: one wrong step in a large
/// ring would otherwise be reported once per rank.
constexpr unsigned MaxShownErrors = 20;
/// A deadlock message names this many waiting steps and notes fewer.
constexpr size_t MaxNamedWaits = 6;
constexpr size_t MaxWaitNotes = 3;

/// A step, by position.
struct Site {
  int32_t Rank = -1;
  int32_t Channel = -1;
  int32_t Index = -1;
};

/// The last step that wrote a chunk; it runs on the chunk's own rank.
struct Writer {
  int32_t Channel = -1;
  int32_t Index = -1;
};

/// A writable buffer of one rank.
struct Buffer {
  ContentArray Contents;
  std::vector<Writer> Writers;
};

/// How far a step of the running WithNext group has got.
enum class Phase : uint8_t {
  Waiting, ///< Its receive has not happened yet.
  Staged,  ///< Its send's data is captured, waiting for a free FIFO slot.
  Done,
};

/// A message a connection holds.
struct Message {
  int32_t Count = 0;
  int32_t SendIndex = -1; ///< The sending step, on the sender's channel.
  Protocol Proto = Protocol::Simple; ///< How the sending step sends it.
};

/// One (sender, receiver, channel) FIFO. Its storage is a ring of Capacity
/// slots holding, from Head, the Committed messages the receiver may take and
/// then the Staged ones: captured by the sender's running group, but not yet
/// in the FIFO because its BufferSlots are full.
struct Connection {
  int32_t Sender = -1;
  int32_t Receiver = -1;
  int32_t Channel = -1;
  int32_t MaxCount = 0;   ///< The largest message, in chunks.
  int32_t MaxStaged = 0;  ///< The most sends one group stages here.
  int32_t Sends = 0;      ///< Every message the connection carries.
  /// BufferSlots + MaxStaged, or Sends where fewer: the most messages it
  /// can hold at once. A halving-doubling connection carries two messages
  /// of up to n / 2 chunks, so the bound saves a third of n^2 records.
  int32_t Capacity = 0;
  size_t SlotBase = 0;    ///< First slot in the message table.
  size_t PayloadBase = 0; ///< First chunk in the payload store.
  int32_t Head = 0;
  int32_t Committed = 0;
  int32_t Staged = 0;
  /// Sizing only: the group whose sends GroupSends counts.
  uint64_t Group = 0;
  int32_t GroupSends = 0;
  bool ReceiverWaiting = false;
  bool SenderWaiting = false;
};

/// One rank's program on one channel.
struct Actor {
  int32_t Rank = 0;
  int32_t Channel = 0;
  const std::vector<Step> *Steps = nullptr;
  size_t PhaseBase = 0;  ///< Where its steps' phases start in the phase table.
  int32_t Pc = 0;        ///< First step of the running group.
  int32_t GroupEnd = -1; ///< One past the group's last step; -1 until it starts.
  bool Queued = false;
  /// The last peer looked up per direction (0 in, 1 out) and its connection:
  /// ring and tree programs talk to one or two peers, so lookups rarely hash.
  int32_t LastPeer[2] = {-1, -1};
  int32_t LastConnection[2] = {-1, -1};

  bool finished() const { return Pc == static_cast<int32_t>(Steps->size()); }
};

/// What a blocked actor waits for: the first unfinished step of its group.
struct Wait {
  int32_t Index = -1;
  int32_t Peer = -1;
  bool Sending = false;
};

bool writesDestination(OpKind Op) { return Op != OpKind::Send; }

/// True for steps that write their Dst from their Src chunk for chunk
/// (copy, reduce, recv_reduce_copy).
bool writesFromSource(OpKind Op) { return plan::opReadsSource(Op) && writesDestination(Op); }

/// One past the last step of the WithNext group starting at First.
int32_t groupEnd(const std::vector<Step> &Steps, int32_t First) {
  int32_t Last = First;
  while (Steps[Last].WithNext && Last + 1 < static_cast<int32_t>(Steps.size()))
    ++Last;
  return Last + 1;
}

std::string chunkName(BufferKind Buf, int32_t Chunk) {
  return std::string(bufferName(Buf)) + "[" + std::to_string(Chunk) + "]";
}

/// A slice in the .ccl syntax: output[3], or output[3..5] (half-open).
std::string sliceName(const Slice &Sl) {
  if (Sl.Count == 1)
    return chunkName(Sl.Buffer, Sl.Chunk);
  return std::string(bufferName(Sl.Buffer)) + "[" + std::to_string(Sl.Chunk) + ".." +
         std::to_string(Sl.Chunk + Sl.Count) + "]";
}

std::string chunkCount(int32_t Count) {
  return std::to_string(Count) + (Count == 1 ? " chunk" : " chunks");
}

class Verifier {
public:
  /// With Sym, runs its representative alone (the quotient of the schedule by its
  /// symmetry) and, unless Report, reports nothing: a failure there is
  /// reported by the exhaustive run that follows it. With Report it names
  /// the representative's steps, for schedules too large to run rank by rank.
  Verifier(const Schedule &S, DiagnosticEngine &Diags, const Symmetry *Sym, bool Report = false)
      : S(S), Diags(Diags), Sym(Sym), Report(!Sym || Report), Sets(S.NRanks) {}
  bool run();

private:
  // Reporting.
  /// The step at At; in a rotated schedule, the rotation of rank 0's.
  Step step(const Site &At) const {
    if (S.Rotated)
      return rotatedStep(S, S.Ranks[0].Channels[At.Channel].Steps[At.Index], At.Rank);
    return S.Ranks[At.Rank].Channels[At.Channel].Steps[At.Index];
  }
  std::string op(const Site &At) const { return std::string(opName(step(At).Op)); }
  std::string iterationOf(const Step &St) const;
  /// An error at St's statement, naming the loop iteration that ran it.
  void errorAt(const Step &St, const std::string &Msg);
  void errorAt(SourceLoc Loc, const std::string &Msg);
  void error(const Site &At, const std::string &Msg);
  void note(const Site &At, const std::string &Msg);

  // Structure: what must hold before anything runs.
  void checkStructure();
  void checkPeer(const Site &At, int32_t Peer, const char *Direction);
  void checkSlice(const Site &At, const Slice &Sl, const char *Access);
  void checkGroup(const Site &First, int32_t End);

  // Set-up: actors, connections sized for the largest message and every
  // buffer allocated once, so that running allocates nothing.
  void setUp();
  int32_t connection(Actor &A, int32_t Peer, bool Outgoing);
  int32_t actorIndex(int32_t Rank, int32_t Channel) const {
    return Sym ? Channel : Rank * S.NChannels + Channel;
  }
  /// The ranks that run: all, or the representative alone under a
  /// symmetry; I counts them from 0, and indexes their buffers.
  int32_t runningRanks() const { return Sym ? 1 : S.NRanks; }
  int32_t runningRank(int32_t I) const { return Sym ? Sym->representative() : I; }
  int32_t bufferIndex(int32_t Rank) const { return Sym ? 0 : Rank; }

  // Running.
  void simulate();
  void wake(int32_t Index);
  void advance(Actor &A);
  void startGroup(Actor &A);
  void stage(Actor &A, int32_t Index, const Slice &Data);
  void receive(Actor &A, int32_t Index, Connection &C);
  /// Under a symmetry: the message rank Peer sent, as the image of what
  /// the representative sent at the same step, in the order Peer's slice lays
  /// it out.
  const ContentArray &peerMessage(int32_t Peer, int32_t Channel, const Message &M,
                                  size_t Base);
  void commit(Connection &C);
  Buffer &buffer(int32_t Rank, BufferKind Buf);
  bool raced(const Site &At, BufferKind Buf, int32_t Chunk, const Writer &W, bool &Reported);
  void read(const Site &At, const Slice &Src, ContentArray &Into, size_t Base);
  void write(const Site &At, const Slice &Dst, const ContentArray &From, size_t Base);
  void reduce(const Site &At, const Slice &Dst, const ContentArray &From, size_t Base,
              const Site *Origin);

  // The end state.
  Wait waitOf(const Actor &A) const;
  std::string waitText(const Wait &W) const;
  void reportStalls();
  void reportCycle(std::vector<int32_t> Cycle);
  void reportLeftovers();
  void checkPostcondition();

  const Schedule &S;
  DiagnosticEngine &Diags;
  const Symmetry *Sym;
  /// Whether errors are printed.
  const bool Report;
  unsigned Errors = 0;
  /// Whether the last error was printed, so that its notes follow it.
  bool LastShown = false;

  /// Every rank set the contents below hold.
  RankSets Sets;
  std::vector<Actor> Actors;
  std::vector<int32_t> Ready;
  std::vector<Phase> Phases;
  std::vector<Connection> Connections;
  std::unordered_map<uint64_t, int32_t> ConnectionIndex;
  std::vector<Message> Messages;
  ContentArray Payloads;
  std::vector<Buffer> Outputs;
  std::vector<Buffer> Scratches; ///< Empty for ranks that never use scratch.
  /// A local copy or reduce reads its source here first, so that overlapping
  /// source and destination behave as a copy through a temporary would.
  ContentArray Temp;
  /// Under a symmetry, where a received message is renamed into.
  ContentArray Renamed;
};

void Verifier::errorAt(SourceLoc Loc, const std::string &Msg) {
  LastShown = ++Errors <= MaxShownErrors && Report;
  if (LastShown)
    Diags.error(Loc, Msg);
}

/// " (in iteration s = 2 of the loop at ring.ccl:9:3)", outermost loop first,
/// so that a step maps back to the source without --emit=schedule; empty
/// outside loops.
std::string Verifier::iterationOf(const Step &St) const {
  std::vector<const LoopIteration *> Chain;
  for (uint32_t Id = St.Iteration; Id != 0; Id = S.iteration(Id).Parent)
    Chain.push_back(&S.iteration(Id));
  if (Chain.empty())
    return "";
  const SourceManager &SM = Diags.getSourceManager();
  std::string Text = " (in iteration ";
  for (auto It = Chain.rbegin(); It != Chain.rend(); ++It) {
    const SourceLoop &Loop = S.Loops[(*It)->Loop];
    if (It != Chain.rbegin())
      Text += ", ";
    Text += Loop.Var + " = " + std::to_string((*It)->Value) + " of the loop at " +
            SM.getName(Loop.Loc.FileId) + ":" + std::to_string(Loop.Loc.Line) + ":" +
            std::to_string(Loop.Loc.Col);
  }
  return Text + ")";
}

void Verifier::errorAt(const Step &St, const std::string &Msg) {
  errorAt(St.Loc, Msg + iterationOf(St));
}

void Verifier::error(const Site &At, const std::string &Msg) {
  errorAt(step(At), "rank " + std::to_string(At.Rank) + " channel " +
                        std::to_string(At.Channel) + " step " + std::to_string(At.Index) +
                        ": " + Msg);
}

void Verifier::note(const Site &At, const std::string &Msg) {
  if (LastShown)
    Diags.note(step(At).Loc, "rank " + std::to_string(At.Rank) + " channel " +
                                 std::to_string(At.Channel) + " step " +
                                 std::to_string(At.Index) + ": " + Msg +
                                 iterationOf(step(At)));
}

//===----------------------------------------------------------------------===//
// Structure
//===----------------------------------------------------------------------===//

void Verifier::checkPeer(const Site &At, int32_t Peer, const char *Direction) {
  if (Peer >= 0 && Peer < S.NRanks && Peer != At.Rank)
    return;
  std::string Msg = op(At) + " " + Direction + " rank " + std::to_string(Peer);
  if (Peer == At.Rank)
    error(At, Msg + ", its own rank: a rank does not communicate with itself");
  else
    error(At, Msg + ", which does not exist (" + std::to_string(S.NRanks) + " ranks)");
}

void Verifier::checkSlice(const Site &At, const Slice &Sl, const char *Access) {
  const int32_t Size = S.bufferChunks(Sl.Buffer);
  if (Sl.Count < 1)
    error(At, op(At) + " " + Access + " an empty slice of " + std::string(bufferName(Sl.Buffer)));
  else if (Sl.Chunk < 0 || Sl.Chunk + Sl.Count > Size)
    error(At, op(At) + " " + Access + " " + sliceName(Sl) + ", outside " +
                  std::string(bufferName(Sl.Buffer)) + "'s " + chunkCount(Size));
}

void Verifier::checkGroup(const Site &First, int32_t End) {
  const std::vector<Step> &Steps = S.Ranks[First.Rank].Channels[First.Channel].Steps;
  if (End - First.Index > 1 && !plan::sendsWithReceive(Steps, size_t(First.Index))) {
    const Step &Next = Steps[First.Index + 1];
    error(First, op(First) + " runs together with a " + std::string(opName(Next.Op)) +
                     ", which no primitive does; only a send followed by recv, recv_reduce or "
                     "recv_reduce_copy runs together (an exchange)");
    return;
  }
  for (int32_t I = First.Index; I < End; ++I) {
    if (!opSends(Steps[I].Op))
      continue;
    const Slice &Sent = Steps[I].sentSlice();
    for (int32_t J = First.Index; J < End; ++J) {
      const Slice &Received = Steps[J].Dst;
      if (J == I || !opReceives(Steps[J].Op) || !Sent.overlaps(Received) || Sent == Received)
        continue;
      Site SendSite{First.Rank, First.Channel, I};
      error(SendSite, op(SendSite) + " of " + sliceName(Sent) + " runs together with a receive into " +
                          sliceName(Received) + ", which overlaps it without being the same slice");
      note(Site{First.Rank, First.Channel, J}, "the receive");
    }
  }
}

void Verifier::checkStructure() {
  // A rotated schedule holds rank 0's program alone: the others are its
  // rotations, whose peers and slices stay in range with rank 0's.
  const int32_t Held = S.Rotated ? 1 : S.NRanks;
  CCLC_ASSERT(static_cast<int32_t>(S.Ranks.size()) == Held, "one program per rank");
  CCLC_ASSERT(S.BufferSlots >= 1, "a connection holds at least one message");
  for (int32_t R = 0; R < Held; ++R) {
    CCLC_ASSERT(static_cast<int32_t>(S.Ranks[R].Channels.size()) == S.NChannels,
                "one program per channel");
    for (int32_t C = 0; C < S.NChannels; ++C) {
      const std::vector<Step> &Steps = S.Ranks[R].Channels[C].Steps;
      for (int32_t I = 0; I < static_cast<int32_t>(Steps.size()); ++I) {
        const Step &St = Steps[I];
        Site At{R, C, I};
        if (St.Op == OpKind::Exchange || St.Op == OpKind::ExchangeReduce) {
          error(At, op(At) + " is not a schedule step: write a send that runs with the "
                             "receive after it");
          continue;
        }
        if (opReceives(St.Op))
          checkPeer(At, St.Peer, "from");
        if (opSends(St.Op))
          checkPeer(At, St.sendTarget(), "to");
        if (plan::opReadsSource(St.Op))
          checkSlice(At, St.Src, "reads");
        if (writesDestination(St.Op)) {
          checkSlice(At, St.Dst, "writes");
          if (St.Dst.Buffer == BufferKind::Input)
            error(At, op(At) + " writes " + sliceName(St.Dst) + ", but input is read-only");
        }
        if (writesFromSource(St.Op) && St.Src.Count != St.Dst.Count)
          error(At, op(At) + " reads " + chunkCount(St.Src.Count) + " (" + sliceName(St.Src) +
                        ") but writes " + chunkCount(St.Dst.Count) + " (" + sliceName(St.Dst) +
                        ")");
        if (I == 0 || !Steps[I - 1].WithNext)
          checkGroup(At, groupEnd(Steps, I));
      }
    }
  }
}

//===----------------------------------------------------------------------===//
// Set-up
//===----------------------------------------------------------------------===//

int32_t Verifier::connection(Actor &A, int32_t Peer, bool Outgoing) {
  const int Dir = Outgoing ? 1 : 0;
  if (A.LastPeer[Dir] == Peer)
    return A.LastConnection[Dir];
  // Under a symmetry, what rank Peer sends the representative is the image
  // of what the representative sends the rank that Peer's inverse renaming
  // takes it to: one queue, which the representative fills as the sender
  // and empties as the receiver.
  const int32_t Sender = Outgoing || Sym ? A.Rank : Peer;
  const int32_t Receiver = Outgoing ? Peer : Sym ? Sym->inverse(Peer) : A.Rank;
  const uint64_t Key =
      (static_cast<uint64_t>(Sender) * S.NRanks + Receiver) * S.NChannels + A.Channel;
  auto [It, Inserted] =
      ConnectionIndex.try_emplace(Key, static_cast<int32_t>(Connections.size()));
  if (Inserted) {
    Connection C;
    C.Sender = Sender;
    C.Receiver = Receiver;
    C.Channel = A.Channel;
    Connections.push_back(C);
  }
  A.LastPeer[Dir] = Peer;
  A.LastConnection[Dir] = It->second;
  return It->second;
}

void Verifier::setUp() {
  std::vector<bool> UsesScratch(runningRanks(), false);
  size_t PhaseCount = 0;
  int32_t MaxLocal = 1;
  uint64_t Group = 0;
  Actors.reserve(static_cast<size_t>(runningRanks()) * S.NChannels);
  for (int32_t Running = 0; Running < runningRanks(); ++Running) {
    const int32_t R = runningRank(Running);
    for (int32_t Ch = 0; Ch < S.NChannels; ++Ch) {
      Actor A;
      A.Rank = R;
      A.Channel = Ch;
      A.Steps = &S.Ranks[R].Channels[Ch].Steps;
      A.PhaseBase = PhaseCount;
      const std::vector<Step> &Steps = *A.Steps;
      PhaseCount += Steps.size();
      for (int32_t First = 0, End; First < static_cast<int32_t>(Steps.size()); First = End) {
        End = groupEnd(Steps, First);
        ++Group;
        for (int32_t I = First; I < End; ++I) {
          const Step &St = Steps[I];
          if ((plan::opReadsSource(St.Op) && St.Src.Buffer == BufferKind::Scratch) ||
              (writesDestination(St.Op) && St.Dst.Buffer == BufferKind::Scratch))
            UsesScratch[size_t(Running)] = true;
          if (writesFromSource(St.Op))
            MaxLocal = std::max(MaxLocal, St.Src.Count);
          if (opReceives(St.Op)) {
            Connection &In = Connections[connection(A, St.Peer, false)];
            In.MaxCount = std::max(In.MaxCount, St.Dst.Count);
          }
          if (opSends(St.Op)) {
            Connection &Out = Connections[connection(A, St.sendTarget(), true)];
            Out.MaxCount = std::max(Out.MaxCount, St.sentSlice().Count);
            ++Out.Sends;
            if (Out.Group != Group) {
              Out.Group = Group;
              Out.GroupSends = 0;
            }
            Out.MaxStaged = std::max(Out.MaxStaged, ++Out.GroupSends);
          }
        }
      }
      Actors.push_back(A);
    }
  }

  size_t Slots = 0, Payload = 0;
  int32_t MaxMessage = 1;
  for (Connection &C : Connections) {
    MaxMessage = std::max(MaxMessage, C.MaxCount);
    C.Capacity = std::max(1, std::min(S.BufferSlots + C.MaxStaged, C.Sends));
    C.SlotBase = Slots;
    C.PayloadBase = Payload;
    Slots += C.Capacity;
    Payload += static_cast<size_t>(C.Capacity) * C.MaxCount;
  }
  Messages.resize(Slots);
  Payloads = ContentArray(Payload, Sets);
  Phases.assign(PhaseCount, Phase::Done);
  Temp = ContentArray(MaxLocal, Sets);
  if (Sym)
    Renamed = ContentArray(MaxMessage, Sets);

  const int32_t OutputChunks = S.bufferChunks(BufferKind::Output);
  const int32_t ScratchChunks = S.bufferChunks(BufferKind::Scratch);
  Outputs.resize(runningRanks());
  Scratches.resize(runningRanks());
  for (int32_t I = 0; I < runningRanks(); ++I) {
    Outputs[I] = {ContentArray(OutputChunks, Sets), std::vector<Writer>(OutputChunks)};
    if (UsesScratch[I])
      Scratches[I] = {ContentArray(ScratchChunks, Sets), std::vector<Writer>(ScratchChunks)};
  }
}

//===----------------------------------------------------------------------===//
// Running
//===----------------------------------------------------------------------===//

Buffer &Verifier::buffer(int32_t Rank, BufferKind Buf) {
  CCLC_ASSERT(Buf != BufferKind::Input, "input is not tracked: it never changes");
  return Buf == BufferKind::Output ? Outputs[bufferIndex(Rank)] : Scratches[bufferIndex(Rank)];
}

void Verifier::wake(int32_t Index) {
  Actor &A = Actors[Index];
  if (A.Queued || A.finished())
    return;
  A.Queued = true;
  Ready.push_back(Index);
}

void Verifier::simulate() {
  for (int32_t I = static_cast<int32_t>(Actors.size()); I-- > 0;)
    wake(I);
  while (!Ready.empty()) {
    Actor &A = Actors[Ready.back()];
    Ready.pop_back();
    A.Queued = false;
    advance(A);
  }
}

void Verifier::advance(Actor &A) {
  const std::vector<Step> &Steps = *A.Steps;
  while (!A.finished()) {
    if (A.GroupEnd < 0)
      startGroup(A);
    bool Blocked = false;
    for (int32_t I = A.Pc; I < A.GroupEnd; ++I) {
      const Step &St = Steps[I];
      Phase &P = Phases[A.PhaseBase + I];
      if (P == Phase::Waiting) {
        Connection &In = Connections[connection(A, St.Peer, false)];
        if (In.Committed == 0) {
          In.ReceiverWaiting = true;
          Blocked = true;
          continue;
        }
        receive(A, I, In);
        P = Phase::Done;
        if (opSends(St.Op)) {
          stage(A, I, St.Dst);
          P = Phase::Staged;
        }
      }
      if (P == Phase::Staged) {
        Connection &Out = Connections[connection(A, St.sendTarget(), true)];
        if (Out.Committed == S.BufferSlots) {
          Out.SenderWaiting = true;
          Blocked = true;
          continue;
        }
        commit(Out);
        P = Phase::Done;
      }
    }
    if (Blocked)
      return;
    A.Pc = A.GroupEnd;
    A.GroupEnd = -1;
  }
}

void Verifier::startGroup(Actor &A) {
  A.GroupEnd = groupEnd(*A.Steps, A.Pc);
  // Sends read their data when the group starts: an exchange sends what the
  // slice held before its receive lands there.
  for (int32_t I = A.Pc; I < A.GroupEnd; ++I) {
    const Step &St = (*A.Steps)[I];
    Phase &P = Phases[A.PhaseBase + I];
    const Site At{A.Rank, A.Channel, I};
    switch (St.Op) {
    case OpKind::Send:
      stage(A, I, St.Src);
      P = Phase::Staged;
      break;
    case OpKind::Copy:
      read(At, St.Src, Temp, 0);
      write(At, St.Dst, Temp, 0);
      P = Phase::Done;
      break;
    case OpKind::Reduce:
      read(At, St.Src, Temp, 0);
      reduce(At, St.Dst, Temp, 0, nullptr);
      P = Phase::Done;
      break;
    case OpKind::Recv:
    case OpKind::RecvReduce:
    case OpKind::RecvReduceSend:
    case OpKind::RecvCopySend:
    case OpKind::RecvReduceCopy:
      P = Phase::Waiting;
      break;
    case OpKind::Exchange:
    case OpKind::ExchangeReduce: CCLC_UNREACHABLE("the structure check refuses exchange steps");
    }
  }
}

void Verifier::stage(Actor &A, int32_t Index, const Slice &Data) {
  Connection &C = Connections[connection(A, (*A.Steps)[Index].sendTarget(), true)];
  CCLC_ASSERT(C.Committed + C.Staged < C.Capacity, "connection storage sized too small");
  const int32_t Slot = (C.Head + C.Committed + C.Staged) % C.Capacity;
  ++C.Staged;
  Messages[C.SlotBase + Slot] = {Data.Count, Index, (*A.Steps)[Index].Proto};
  read(Site{A.Rank, A.Channel, Index}, Data, Payloads,
       C.PayloadBase + static_cast<size_t>(Slot) * C.MaxCount);
}

void Verifier::commit(Connection &C) {
  --C.Staged;
  ++C.Committed;
  if (C.ReceiverWaiting) {
    C.ReceiverWaiting = false;
    wake(actorIndex(C.Receiver, C.Channel));
  }
}

void Verifier::receive(Actor &A, int32_t Index, Connection &C) {
  const Step &St = (*A.Steps)[Index];
  const Site At{A.Rank, A.Channel, Index};
  const Message &M = Messages[C.SlotBase + C.Head];
  const Site From{St.Peer, C.Channel, M.SendIndex};
  size_t Base = C.PayloadBase + static_cast<size_t>(C.Head) * C.MaxCount;
  const ContentArray *Data = &Payloads;
  if (Sym && M.Count == St.Dst.Count) {
    Data = &peerMessage(St.Peer, C.Channel, M, Base);
    Base = 0;
  }
  // A message of another size, or one the two ends would look for in
  // different places, is refused and poisons what it would have written.
  std::string Refused;
  if (M.Count != St.Dst.Count)
    Refused = op(At) + " receives " + chunkCount(St.Dst.Count) + " from rank " +
              std::to_string(St.Peer) + ", but the matching send sends " + chunkCount(M.Count);
  else if (M.Proto != St.Proto)
    Refused = op(At) + " receives from rank " + std::to_string(St.Peer) + " by the " +
              std::string(plan::protocolName(St.Proto)) +
              " protocol, but the matching send sends by " + std::string(plan::protocolName(M.Proto));
  if (!Refused.empty()) {
    error(At, Refused);
    note(From, "the matching send");
    Buffer &B = buffer(A.Rank, St.Dst.Buffer);
    for (int32_t I = 0; I < St.Dst.Count; ++I)
      B.Contents.poison(St.Dst.Chunk + I);
  } else if (St.Op == OpKind::Recv || St.Op == OpKind::RecvCopySend) {
    write(At, St.Dst, *Data, Base);
  } else if (St.Op == OpKind::RecvReduceCopy) {
    // What a copy of Src into Dst and a recv_reduce into it would leave.
    read(At, St.Src, Temp, 0);
    write(At, St.Dst, Temp, 0);
    reduce(At, St.Dst, *Data, Base, &From);
  } else {
    reduce(At, St.Dst, *Data, Base, &From);
  }
  C.Head = (C.Head + 1) % C.Capacity;
  --C.Committed;
  if (C.SenderWaiting) {
    C.SenderWaiting = false;
    wake(actorIndex(C.Sender, C.Channel));
  }
}

const ContentArray &Verifier::peerMessage(int32_t Peer, int32_t Channel, const Message &M,
                                          size_t Base) {
  // Element J of Peer's message is Peer's chunk Sent.Chunk + J, which holds
  // the image of what the representative's chunk chunkBack(Sent.Chunk + J)
  // held when it ran the same send.
  const Step &MyStep = S.Ranks[Sym->representative()].Channels[Channel].Steps[M.SendIndex];
  const Slice &Mine = MyStep.sentSlice();
  const Slice Sent = S.Rotated ? rotatedStep(S, MyStep, Peer).sentSlice()
                               : S.Ranks[Peer].Channels[Channel].Steps[M.SendIndex].sentSlice();
  for (int32_t J = 0; J < M.Count; ++J) {
    const size_t From = Base + size_t(Sym->chunkBack(Peer, Sent.Chunk + J) - Mine.Chunk);
    if (Payloads.isPoisoned(From)) {
      Renamed.poison(size_t(J));
      continue;
    }
    Renamed.setContent(size_t(J), Sym->chunk(Peer, Payloads.label(From)),
                       Sym->ranks(Sets, Payloads.rankSet(From), Peer));
  }
  return Renamed;
}

/// True when another channel of the rank last wrote the chunk: channels run
/// unordered, so which access comes first is not defined. Reported once per
/// step (Reported).
bool Verifier::raced(const Site &At, BufferKind Buf, int32_t Chunk, const Writer &W,
                     bool &Reported) {
  if (W.Channel < 0 || W.Channel == At.Channel)
    return false;
  if (!Reported) {
    error(At, op(At) + " touches " + chunkName(Buf, Chunk) + ", which channel " +
                  std::to_string(W.Channel) + " writes: channels run unordered");
    note(Site{At.Rank, W.Channel, W.Index}, "the write on the other channel");
    Reported = true;
  }
  return true;
}

void Verifier::read(const Site &At, const Slice &Src, ContentArray &Into, size_t Base) {
  if (Src.Buffer == BufferKind::Input) {
    for (int32_t I = 0; I < Src.Count; ++I)
      Into.setSingle(Base + I, Src.Chunk + I, At.Rank);
    return;
  }
  Buffer &B = buffer(At.Rank, Src.Buffer);
  bool Reported = false;
  for (int32_t I = 0; I < Src.Count; ++I) {
    const int32_t Chunk = Src.Chunk + I;
    if (!B.Contents.isDefined(Chunk)) {
      if (!Reported)
        error(At, op(At) + " reads " + chunkName(Src.Buffer, Chunk) +
                      " before any data arrived there");
      Reported = true;
      Into.poison(Base + I);
    } else if (!B.Contents.isPoisoned(Chunk) &&
               raced(At, Src.Buffer, Chunk, B.Writers[Chunk], Reported)) {
      Into.poison(Base + I);
    } else {
      Into.copyFrom(Base + I, B.Contents, Chunk);
    }
  }
}

void Verifier::write(const Site &At, const Slice &Dst, const ContentArray &From, size_t Base) {
  Buffer &B = buffer(At.Rank, Dst.Buffer);
  bool Reported = false;
  for (int32_t I = 0; I < Dst.Count; ++I) {
    const int32_t Chunk = Dst.Chunk + I;
    Writer &W = B.Writers[Chunk];
    if (B.Contents.isDefined(Chunk) && !B.Contents.isPoisoned(Chunk) &&
        raced(At, Dst.Buffer, Chunk, W, Reported))
      B.Contents.poison(Chunk);
    else
      B.Contents.copyFrom(Chunk, From, Base + I);
    W = {At.Channel, At.Index};
  }
}

void Verifier::reduce(const Site &At, const Slice &Dst, const ContentArray &From, size_t Base,
                      const Site *Origin) {
  Buffer &B = buffer(At.Rank, Dst.Buffer);
  ContentArray &Acc = B.Contents;
  bool Reported = false;
  // The other step involved: the sender of received data, else the step that
  // last wrote the accumulator.
  auto explain = [&](const Writer &Previous, int32_t Chunk) {
    if (Origin)
      note(*Origin, "the data was sent here");
    else if (Previous.Channel >= 0)
      note(Site{At.Rank, Previous.Channel, Previous.Index},
           chunkName(Dst.Buffer, Chunk) + " was last written here");
  };
  for (int32_t I = 0; I < Dst.Count; ++I) {
    const int32_t Chunk = Dst.Chunk + I;
    const size_t J = Base + I;
    Writer &W = B.Writers[Chunk];
    const Writer Previous = W;
    W = {At.Channel, At.Index};
    if (!Acc.isDefined(Chunk)) {
      if (!Reported)
        error(At, op(At) + " reduces into " + chunkName(Dst.Buffer, Chunk) +
                      " before any data arrived there");
      Reported = true;
      Acc.poison(Chunk);
    } else if (Acc.isPoisoned(Chunk) || From.isPoisoned(J)) {
      Acc.poison(Chunk);
    } else if (raced(At, Dst.Buffer, Chunk, Previous, Reported)) {
      Acc.poison(Chunk);
    } else if (Acc.label(Chunk) != From.label(J)) {
      if (!Reported) {
        error(At, op(At) + " adds " + From.describe(J) + " to " + chunkName(Dst.Buffer, Chunk) +
                      ", which holds " + Acc.describe(Chunk) + ": different elements");
        explain(Previous, Chunk);
      }
      Reported = true;
      Acc.poison(Chunk);
    } else if (int32_t Twice = Acc.firstSharedRank(Chunk, From, J); Twice >= 0) {
      if (!Reported) {
        error(At, op(At) + " counts rank " + std::to_string(Twice) + "'s contribution to " +
                      chunkName(Dst.Buffer, Chunk) + " twice: it adds " + From.describe(J) +
                      " to " + Acc.describe(Chunk));
        explain(Previous, Chunk);
      }
      Reported = true;
      Acc.poison(Chunk);
    } else {
      Acc.mergeFrom(Chunk, From, J);
    }
  }
}

//===----------------------------------------------------------------------===//
// The end state
//===----------------------------------------------------------------------===//

Wait Verifier::waitOf(const Actor &A) const {
  for (int32_t I = A.Pc; I < A.GroupEnd; ++I) {
    const Step &St = (*A.Steps)[I];
    switch (Phases[A.PhaseBase + I]) {
    case Phase::Waiting: return {I, St.Peer, false};
    case Phase::Staged: return {I, St.sendTarget(), true};
    case Phase::Done: break;
    }
  }
  CCLC_UNREACHABLE("a blocked actor waits for something");
}

std::string Verifier::waitText(const Wait &W) const {
  if (W.Sending)
    return "to send to rank " + std::to_string(W.Peer) + " (all " +
           std::to_string(S.BufferSlots) + " buffer slots full)";
  return "to receive from rank " + std::to_string(W.Peer);
}

void Verifier::reportStalls() {
  // Each blocked actor waits for one other; following the waits from every
  // actor not yet seen finds each cycle once, and each wait on a finished
  // program (a receive nobody sends) once.
  std::vector<uint32_t> Seen(Actors.size(), 0);
  uint32_t Walk = 0;
  std::vector<int32_t> Path;
  for (int32_t Start = 0; Start < static_cast<int32_t>(Actors.size()); ++Start) {
    if (Actors[Start].finished() || Seen[Start] != 0)
      continue;
    ++Walk;
    Path.clear();
    for (int32_t I = Start;;) {
      if (Seen[I] != 0) {
        if (Seen[I] == Walk)
          reportCycle(std::vector<int32_t>(std::find(Path.begin(), Path.end(), I), Path.end()));
        break;
      }
      Seen[I] = Walk;
      Path.push_back(I);
      const Actor &A = Actors[I];
      const Wait W = waitOf(A);
      const int32_t Next = actorIndex(W.Peer, A.Channel);
      if (!Actors[Next].finished()) {
        I = Next;
        continue;
      }
      // A send blocked on a finished receiver shows as a leftover message.
      if (!W.Sending) {
        const Site At{A.Rank, A.Channel, W.Index};
        error(At, op(At) + " from rank " + std::to_string(W.Peer) +
                      " never completes: rank " + std::to_string(W.Peer) + "'s channel " +
                      std::to_string(A.Channel) + " program ends without sending it");
      }
      break;
    }
  }
}

void Verifier::reportCycle(std::vector<int32_t> Cycle) {
  std::rotate(Cycle.begin(), std::min_element(Cycle.begin(), Cycle.end()), Cycle.end());
  const Actor &First = Actors[Cycle[0]];
  const Wait FirstWait = waitOf(First);
  const Site FirstSite{First.Rank, First.Channel, FirstWait.Index};
  std::string Msg = "deadlock: rank " + std::to_string(First.Rank) + " channel " +
                    std::to_string(First.Channel) + " step " + std::to_string(FirstWait.Index) +
                    " waits " + waitText(FirstWait);
  for (size_t K = 1; K < Cycle.size(); ++K) {
    if (K == MaxNamedWaits) {
      Msg += ", ... (" + std::to_string(Cycle.size()) + " ranks wait in a cycle)";
      break;
    }
    const Wait W = waitOf(Actors[Cycle[K]]);
    Msg += ", which waits at step " + std::to_string(W.Index) + " " + waitText(W);
  }
  // The representative's peers are its images, stalled where it is.
  if (Sym)
    Msg += ", and every rank waits at this step alike (each runs rank " +
           std::to_string(First.Rank) + "'s program renamed)";
  errorAt(step(FirstSite), Msg);
  for (size_t K = 1; K < Cycle.size() && K <= MaxWaitNotes; ++K) {
    const Actor &A = Actors[Cycle[K]];
    const Wait W = waitOf(A);
    note(Site{A.Rank, A.Channel, W.Index}, "waits here " + waitText(W));
  }
}

void Verifier::reportLeftovers() {
  for (const Connection &C : Connections) {
    const int32_t Left = C.Committed + C.Staged;
    if (Left == 0 || !Actors[actorIndex(C.Receiver, C.Channel)].finished())
      continue;
    const Site At{C.Sender, C.Channel, Messages[C.SlotBase + C.Head].SendIndex};
    std::string Msg = op(At) + " to rank " + std::to_string(C.Receiver) +
                      " is never received: rank " + std::to_string(C.Receiver) + "'s channel " +
                      std::to_string(C.Channel) + " program ends first";
    if (Left > 1)
      Msg += " (and " + std::to_string(Left - 1) + " later messages on this connection)";
    error(At, Msg);
  }
}

void Verifier::checkPostcondition() {
  const std::string Collective(plan::collectiveName(S.Collective));
  const int32_t OutputChunks = S.bufferChunks(BufferKind::Output);
  ContentArray Want(1, Sets);
  // Under a symmetry every rank's output is the image of the
  // representative's, and so is allreduce's promise for it: proving the
  // representative proves them all.
  for (int32_t I = 0; I < runningRanks(); ++I) {
    const int32_t R = runningRank(I);
    const Buffer &Out = Outputs[size_t(I)];
    for (int32_t Chunk = 0; Chunk < OutputChunks; ++Chunk) {
      const OutputExpectation E = expectedOutput(S, R, Chunk);
      if (!E.Constrained)
        continue;
      if (E.Rank < 0)
        Want.setAllRanks(0, E.Label);
      else
        Want.setSingle(0, E.Label, E.Rank);
      if (Out.Contents.isDefined(Chunk) && Out.Contents.sameAs(Chunk, Want, 0))
        continue;
      if (Errors >= MaxShownErrors) {
        // Counted, not described: a wrong large schedule has millions.
        ++Errors;
        continue;
      }
      const std::string Name = "rank " + std::to_string(R) + " " +
                               chunkName(BufferKind::Output, Chunk);
      const std::string Needs = Collective + " needs " + Want.describe(0) + " there";
      const Writer &W = Out.Writers[Chunk];
      if (W.Channel < 0) {
        // Nothing wrote it: point at the end of the channel that owns it.
        const int32_t Owner = S.channelOfChunk(BufferKind::Output, Chunk);
        const std::vector<Step> &Steps = S.Ranks[R].Channels[Owner].Steps;
        const std::string Msg = Name + " ends without data, but " + Needs + " (channel " +
                                std::to_string(Owner) + " ends here)";
        if (Steps.empty())
          errorAt(SourceLoc{}, Msg);
        else
          errorAt(Steps.back(), Msg);
        continue;
      }
      std::string Msg = Name + " ends holding " + Out.Contents.describe(Chunk) + ", but " + Needs;
      std::string Missing = Out.Contents.describeMissing(Chunk, Want, 0);
      if (Out.Contents.label(Chunk) == E.Label && !Missing.empty())
        Msg += " (missing " + Missing + ")";
      errorAt(S.Ranks[R].Channels[W.Channel].Steps[W.Index],
              Msg + "; channel " + std::to_string(W.Channel) + " step " +
                  std::to_string(W.Index) + " wrote it last");
    }
  }
}

bool Verifier::run() {
  checkStructure();
  if (Errors == 0) {
    setUp();
    simulate();
    if (!Report) {
      // A stall or a leftover here is one at every rank; the exhaustive
      // run names them.
      for (const Actor &A : Actors)
        Errors += !A.finished();
      for (const Connection &C : Connections)
        Errors += C.Committed + C.Staged != 0;
    } else {
      // Under a symmetry a stalled representative waits on a peer stalled
      // at the same step: the cycle reported is the representative's wait.
      reportStalls();
      reportLeftovers();
    }
    if (Errors == 0)
      checkPostcondition();
  }
  if (Errors > MaxShownErrors && Report)
    Diags.note(SourceLoc{}, std::to_string(Errors - MaxShownErrors) +
                                " more verification errors not shown");
  return Errors == 0;
}

} // namespace

const char *proofName(ProofKind Proof) {
  switch (Proof) {
  case ProofKind::Exhaustive: return "every rank's program run";
  case ProofKind::Rotation: return "one rank's program run under a rotation of the ranks";
  case ProofKind::Xor: return "one rank's program run under a flip of rank bits";
  }
  CCLC_UNREACHABLE("every proof has a name");
}

bool verifySchedule(const Schedule &S, DiagnosticEngine &Diags, const VerifyOptions &Options,
                    ProofKind *Proof) {
  if (S.Rotated) {
    // Built as rank 0's program rotated: the rotation needs no proof, and
    // only a failure costs every rank's program, to report it, up to
    // Options.ReportSteps of them; past that, rank 0's run reports.
    Symmetry Sym = Symmetry::ofRotation(S);
    if (Options.UseSymmetry && Verifier(S, Diags, &Sym).run()) {
      if (Proof)
        *Proof = ProofKind::Rotation;
      return true;
    }
    if (Proof)
      *Proof = ProofKind::Rotation;
    if (int64_t(S.stepCount()) * S.NRanks > Options.ReportSteps)
      return Verifier(S, Diags, &Sym, /*Report=*/true).run();
    Schedule Every = S;
    sched::expandRotation(Every);
    if (Proof)
      *Proof = ProofKind::Exhaustive;
    return Verifier(Every, Diags, nullptr).run();
  }
  if (Options.UseSymmetry)
    if (std::optional<Symmetry> Sym = findSymmetry(S); Sym && Verifier(S, Diags, &*Sym).run()) {
      if (Proof)
        *Proof = Sym->kind() == SymmetryKind::Xor ? ProofKind::Xor : ProofKind::Rotation;
      return true;
    }
  if (Proof)
    *Proof = ProofKind::Exhaustive;
  return Verifier(S, Diags, nullptr).run();
}

} // namespace cclc::verify
