//===- Instantiate.cpp - From a checked algorithm to a schedule -----------===//

#include "compiler/instantiate/Instantiate.h"
#include "compiler/instantiate/RankForm.h"
#include "dsl/Arith.h"
#include "plan/Assert.h"
#include "dsl/Builtins.h"

#include <algorithm>
#include <array>
#include <unordered_map>

namespace cclc::inst {

using namespace sched;

using namespace dsl;

namespace {

/// A runtime value: an integer (booleans are 0/1) or a slice of a buffer in
/// the algorithm's own chunk coordinates (chunk i of this channel's share).
struct Value {
  enum class Kind : uint8_t { Int, Slice };
  Kind K = Kind::Int;
  BufferKind Buffer = BufferKind::Output;
  int64_t Int = 0;
  int64_t First = 0;
  int64_t Count = 0;

  static Value integer(int64_t V) { return Value{Kind::Int, BufferKind::Output, V, 0, 0}; }
  static Value slice(BufferKind B, int64_t First, int64_t Count) {
    return Value{Kind::Slice, B, 0, First, Count};
  }
};

/// Upper bounds that keep hostile or mistaken algorithms from running away.
constexpr uint64_t MaxStatements = 200'000'000;
constexpr int64_t MaxChunks = 1 << 20;

class Instantiator {
public:
  /// Rotating: run rank 0 alone, tracking how values depend on the rank
  /// (Instantiate.h's RankZeroOnly).
  Instantiator(const Algorithm &Algo, const Target &T, const InstantiateOptions &Options,
               DiagnosticEngine &Diags, bool Rotating)
      : Algo(Algo), T(T), Options(Options), Diags(Diags), Rotating(Rotating) {}

  std::optional<Schedule> run();
  /// Whether a rotating run gave up because some rank's program may not be
  /// rank 0's rotated; it has reported nothing then.
  bool declined() const { return Declined; }

private:
  bool checkRequirements();
  bool computeChunks();
  bool computeRemap();
  void enterContext(int32_t Logical, int32_t Channel);

  /// The id of the loop iteration now running (Step::Iteration), interned on
  /// first use so that iterations that emit no step cost nothing.
  uint32_t currentIteration();
  uint32_t loopId(const ForStmt &F);

  /// Counts one statement (or loop iteration) run against MaxStatements.
  bool count(const Stmt &St) {
    return ++Statements <= MaxStatements || failTooManyStatements(St);
  }
  bool failTooManyStatements(const Stmt &St);
  bool exec(const Stmt &S);
  /// Evaluates E into the variable in Slot (and, rotating, its form).
  bool assign(const Expr &E, size_t Slot);
  bool execBlock(const BlockStmt &B);
  bool execFor(const ForStmt &F);
  bool execOp(const OpStmt &Op);
  /// Completes St, a step of Op, with what every step of Op shares, and
  /// appends it to the channel being run.
  void emit(const OpStmt &Op, Step &St);

  // Evaluation runs once per expression, rank, channel and loop iteration,
  // so it is kept lean: integers, the common case, are computed without going
  // through Value, leaves without a call, and each evaluator returns whether
  // it succeeded and writes its result through a reference (a returned
  // std::optional of these small values is built in memory piece by piece and
  // read back whole, which stalls the processor on every call).
  bool eval(const Expr &E, Value &Result);
  bool evalInt(const Expr &E, int64_t &Result) {
    if (E.ConstValue) {
      Result = *E.ConstValue;
      return true;
    }
    if (const auto *Name = dyn_cast<NameExpr>(&E)) {
      const Value &V = nameValue(*Name);
      CCLC_ASSERT(V.K == Value::Kind::Int, "sema guarantees an integer here");
      Result = V.Int;
      return true;
    }
    if (const auto *Member = dyn_cast<MemberExpr>(&E)) {
      CCLC_ASSERT(Member->Info && Member->Ty == Type::Int, "sema resolves integer members");
      Result = Facts[static_cast<size_t>(Member->Info->Fact)];
      return true;
    }
    return evalOperator(E, Result);
  }
  /// Operators, calls and list elements.
  bool evalOperator(const Expr &E, int64_t &Result);
  /// A buffer or slice, in the algorithm's own chunk coordinates.
  bool evalChunks(const Expr &E, Value &Result);
  const Value &nameValue(const NameExpr &E) const;
  bool evalListElement(const IndexExpr &E, const MemberExpr &List, int64_t &Result);
  bool evalPeer(const Expr &E, int32_t &Peer);
  /// A slice argument of an operation, in the schedule's chunk grid.
  bool evalSlice(const Expr &E, Slice &Result);
  const std::vector<int32_t> &listOf(const MemberExpr &E) const;

  // Rotating runs: how rank 0's values vary with the rank (RankForm.h).
  bool rotationApplies() const;
  bool decline() {
    Declined = true;
    return false;
  }
  /// The form of E, an integer expression rank 0 has just evaluated.
  RankForm formOf(const Expr &E);
  /// The form of the buffer or slice E: fixed, or reduced modulo its
  /// buffer's chunks for a single chunk that moves with the rank.
  RankForm sliceForm(const Expr &E);
  /// Whether every rank holds rank 0's Sl, which E gave, rotated: a whole
  /// buffer (not for messages, whose order a rotation would change) or a
  /// chunk moving as every other does.
  bool rotates(const Expr &E, const Slice &Sl, bool Message);
  /// Whether every rank's peer is rank 0's moved one place per rank.
  bool rotatesPeer(const Expr &E);

  /// Reports a problem found while running for the current rank and channel.
  bool fail(SourceRange Range, const std::string &Msg);
  std::string sourceText(SourceRange Range) const;
  std::string where() const;

  const Algorithm &Algo;
  const Target &T;
  const InstantiateOptions &Options;
  DiagnosticEngine &Diags;
  Schedule S;
  const bool Rotating;
  bool Declined = false;
  /// In a rotating run, the forms of Frame's and BuiltinFrame's values.
  std::vector<RankForm> FrameForms, BuiltinForms;
  /// How far a rotating run's chunks move per rank, once a slice says.
  std::optional<int64_t> ChunkStep;

  /// The logical rank of the root: Options.Root until the remap is known.
  int32_t LogicalRoot = 0;
  /// RingPositions[c][r]: physical rank r's position on ring channel c, -1
  /// off the ring; set for ring algorithms once the target context is done.
  std::vector<std::vector<int32_t>> RingPositions;

  // The context of the instance being run.
  bool InTargetContext = true;
  int32_t Logical = 0;
  int32_t Physical = 0;
  int32_t Channel = 0;
  std::vector<Value> Frame;
  std::vector<Value> BuiltinFrame;
  /// The integer topology facts (ring.pos, tree.up, ...) of this rank and
  /// channel, indexed by TopologyFact; the lists' entries are unused.
  std::array<int64_t, NumTopologyFacts> Facts{};
  std::vector<Step> *Out = nullptr;
  uint64_t Statements = 0;

  /// The loops now running, outermost first; Id is 0 until a step needs it.
  struct OpenLoop {
    uint32_t Loop = 0;
    int64_t Value = 0;
    uint32_t Id = 0;
  };
  std::vector<OpenLoop> OpenLoops;
  std::unordered_map<const ForStmt *, uint32_t> LoopIds;
  struct IterationKey {
    uint32_t Parent;
    uint32_t Loop;
    int64_t Value;
    bool operator==(const IterationKey &) const = default;
  };
  struct IterationHash {
    size_t operator()(const IterationKey &K) const {
      return std::hash<uint64_t>()((uint64_t(K.Parent) << 32 | K.Loop) * 0x9E3779B97F4A7C15ull ^
                                   uint64_t(K.Value));
    }
  };
  std::unordered_map<IterationKey, uint32_t, IterationHash> IterationIds;
};

uint32_t Instantiator::loopId(const ForStmt &F) {
  auto [It, Inserted] = LoopIds.try_emplace(&F, static_cast<uint32_t>(S.Loops.size()));
  if (Inserted)
    S.Loops.push_back(SourceLoop{F.Range.Begin, F.Var->Name});
  return It->second;
}

uint32_t Instantiator::currentIteration() {
  uint32_t Parent = 0;
  for (OpenLoop &L : OpenLoops) {
    if (L.Id == 0) {
      auto [It, Inserted] = IterationIds.try_emplace(
          IterationKey{Parent, L.Loop, L.Value}, static_cast<uint32_t>(S.Iterations.size() + 1));
      if (Inserted)
        S.Iterations.push_back(LoopIteration{Parent, L.Loop, L.Value});
      L.Id = It->second;
    }
    Parent = L.Id;
  }
  return Parent;
}

std::string Instantiator::sourceText(SourceRange Range) const {
  std::string_view Line = Diags.getSourceManager().getLine(Range.Begin.FileId, Range.Begin.Line);
  if (Range.End.Line != Range.Begin.Line || Range.End.Col <= Range.Begin.Col ||
      Range.End.Col - 1 > Line.size())
    return std::string(Line);
  return std::string(Line.substr(Range.Begin.Col - 1, Range.End.Col - Range.Begin.Col));
}

std::string Instantiator::where() const {
  if (InTargetContext)
    return " (for " + T.Description + ")";
  std::string Rank = S.Remap.empty() || S.Remap[Logical] == Logical
                         ? "rank " + std::to_string(Logical)
                         : "logical rank " + std::to_string(Logical) + " (physical " +
                               std::to_string(Physical) + ")";
  return " (" + Rank + ", channel " + std::to_string(Channel) + ", " + T.Description + ")";
}

bool Instantiator::fail(SourceRange Range, const std::string &Msg) {
  Diags.error(Range, Msg + where());
  return false;
}

std::optional<Schedule> Instantiator::run() {
  S.Algorithm = Algo.Name;
  S.Collective = Algo.Collective;
  S.Topology = Algo.Topology;
  S.NRanks = T.NRanks;
  S.BufferSlots = Options.BufferSlots;
  S.Units = bufferUnits(Algo.Collective, T.NRanks);
  switch (Algo.Topology) {
  case TopologyKind::None: S.NChannels = 1; break;
  case TopologyKind::Ring: S.NChannels = static_cast<int32_t>(T.Rings.size()); break;
  case TopologyKind::Tree: S.NChannels = static_cast<int32_t>(T.Trees.size()); break;
  }
  if (S.NChannels == 0) {
    Diags.error(Algo.TopologyRange, "the target has no " +
                                        std::string(topologyName(Algo.Topology)) +
                                        " channels" + where());
    return std::nullopt;
  }
  if (Options.Root < 0 || Options.Root >= T.NRanks) {
    Diags.error(SourceLoc{}, "root " + std::to_string(Options.Root) + " is not a rank of " +
                                 T.Description);
    return std::nullopt;
  }
  S.Root = Options.Root;
  LogicalRoot = S.Root;
  Frame.assign(Algo.NumSlots, Value{});
  enterContext(-1, 0);
  if (!checkRequirements() || !computeChunks() || !computeRemap())
    return std::nullopt;
  LogicalRoot = static_cast<int32_t>(std::find(S.Remap.begin(), S.Remap.end(), S.Root) -
                                     S.Remap.begin());
  if (Algo.Topology == TopologyKind::Ring) {
    RingPositions.assign(S.NChannels, std::vector<int32_t>(T.NRanks, -1));
    for (int32_t C = 0; C < S.NChannels; ++C)
      for (size_t I = 0; I < T.Rings[C].size(); ++I)
        RingPositions[C][T.Rings[C][I]] = static_cast<int32_t>(I);
  }

  // A rank's channel mostly runs as many steps as the one before it did, so
  // reserving that many spares the steps from growing (and being copied)
  // again and again.
  size_t Expected = 0;
  if (Rotating && !rotationApplies()) {
    decline();
    return std::nullopt;
  }
  const int32_t Running = Rotating ? 1 : T.NRanks;
  S.Ranks.assign(Running, RankProgram{});
  for (int32_t L = 0; L < Running; ++L) {
    RankProgram &R = S.Ranks[S.Remap[L]];
    R.LogicalRank = L;
    R.Channels.resize(S.NChannels);
    for (int32_t C = 0; C < S.NChannels; ++C) {
      enterContext(L, C);
      Out = &R.Channels[C].Steps;
      Out->reserve(Expected);
      if (!execBlock(*Algo.Body))
        return std::nullopt;
      Expected = Out->size();
    }
  }
  if (Rotating)
    S.Rotated = sched::Rotation{static_cast<int32_t>(ChunkStep.value_or(0))};
  return std::move(S);
}

void Instantiator::enterContext(int32_t L, int32_t C) {
  InTargetContext = L < 0;
  Logical = std::max(L, 0);
  Physical = S.Remap.empty() ? Logical : S.Remap[Logical];
  Channel = C;
  int32_t Chunks = S.ChunksPerChannel;
  BuiltinFrame.clear();
  BuiltinForms.clear();
  for (const BuiltinValue &B : builtinValues()) {
    Value V;
    std::string_view N = B.Name;
    if (N == "rank") V = Value::integer(Logical);
    else if (N == "nranks") V = Value::integer(T.NRanks);
    else if (N == "root") V = Value::integer(LogicalRoot);
    else if (N == "channel") V = Value::integer(C);
    else if (N == "nchannels") V = Value::integer(S.NChannels);
    else if (N == "node") V = Value::integer(T.nodeOf(Physical));
    else if (N == "nnodes") V = Value::integer(T.NNodes);
    else if (N == "local_rank") V = Value::integer(T.localRankOf(Physical));
    else if (N == "local_nranks") V = Value::integer(T.LocalRanks);
    else if (N == "input") V = Value::slice(BufferKind::Input, 0, S.Units.Input * Chunks);
    else if (N == "output") V = Value::slice(BufferKind::Output, 0, S.Units.Output * Chunks);
    else if (N == "scratch") V = Value::slice(BufferKind::Scratch, 0, S.Units.Scratch * Chunks);
    BuiltinFrame.push_back(V);
    if (Rotating) {
      // On a flat target of one node, rank r is logical and physical rank r
      // and its own local rank.
      RankForm F;
      if (N == "rank" || (N == "local_rank" && T.NNodes == 1))
        F = RankForm::exact(1);
      else if (N == "local_rank" || (N == "node" && T.NNodes != 1))
        F = RankForm::unknown();
      BuiltinForms.push_back(F);
    }
  }
  if (Rotating)
    FrameForms.assign(Frame.size(), RankForm::fixed());
  if (InTargetContext)
    return;
  auto Fact = [&](TopologyFact F) -> int64_t & { return Facts[static_cast<size_t>(F)]; };
  if (Algo.Topology == TopologyKind::Ring) {
    const std::vector<int32_t> &Ring = T.Rings[C];
    int64_t N = static_cast<int64_t>(Ring.size());
    int64_t Pos = RingPositions[C][Physical];
    Fact(TopologyFact::Pos) = Pos;
    Fact(TopologyFact::Next) = Ring[(Pos + 1) % N];
    Fact(TopologyFact::Prev) = Ring[(Pos + N - 1) % N];
  } else if (Algo.Topology == TopologyKind::Tree) {
    const target::TreeChannel &Tree = T.Trees[C];
    Fact(TopologyFact::Up) = Tree.Up[Physical];
    Fact(TopologyFact::NDown) = static_cast<int64_t>(Tree.Down[Physical].size());
  }
}

bool Instantiator::checkRequirements() {
  for (const ExprPtr &Req : Algo.Requires) {
    int64_t Holds = 0;
    if (!evalInt(*Req, Holds))
      return false;
    if (!Holds)
      return fail(Req->Range, "requirement '" + sourceText(Req->Range) + "' is not met");
  }
  return true;
}

bool Instantiator::computeChunks() {
  if (!Algo.Chunks)
    return true;
  int64_t K = 0;
  if (!evalInt(*Algo.Chunks->Count, K))
    return false;
  if (K <= 0 || K > MaxChunks)
    return fail(Algo.Chunks->Count->Range, "chunk count " + std::to_string(K) +
                                               " is outside 1.." + std::to_string(MaxChunks));
  if (K * S.Units.Scratch * S.NChannels > MaxChunks)
    return fail(Algo.Chunks->Count->Range,
                "chunk count " + std::to_string(K) + " makes buffers of more than " +
                    std::to_string(MaxChunks) + " chunks");
  S.ChunksPerChannel = static_cast<int32_t>(K);
  return true;
}

bool Instantiator::computeRemap() {
  const RemapStmt *Remap = Algo.Remap;
  S.Remap.resize(T.NRanks);
  if (!Options.Placement.empty()) {
    CCLC_ASSERT(static_cast<int32_t>(Options.Placement.size()) == T.NRanks,
                "placement has the wrong size");
    S.Remap = Options.Placement;
  } else if (!Remap || Remap->TheForm == RemapStmt::Form::Auto) {
    for (int32_t L = 0; L < T.NRanks; ++L)
      S.Remap[L] = L;
  } else if (Remap->TheForm == RemapStmt::Form::Table) {
    if (static_cast<int32_t>(Remap->Table.size()) != T.NRanks)
      return fail(Remap->Range, "remap table has " + std::to_string(Remap->Table.size()) +
                                    " entries but the target has " + std::to_string(T.NRanks) +
                                    " ranks");
    for (int32_t L = 0; L < T.NRanks; ++L)
      S.Remap[L] = static_cast<int32_t>(*Remap->Table[L]->ConstValue);
  } else {
    for (int32_t L = 0; L < T.NRanks; ++L) {
      Frame[Remap->Param->Slot] = Value::integer(L);
      int64_t P = 0;
      if (!evalInt(*Remap->Mapping, P))
        return false;
      if (P < 0 || P >= T.NRanks)
        return fail(Remap->Mapping->Range, "remap sends logical rank " + std::to_string(L) +
                                               " to " + std::to_string(P) +
                                               ", which is not a physical rank");
      S.Remap[L] = static_cast<int32_t>(P);
    }
  }
  std::vector<int32_t> Seen(T.NRanks, -1);
  for (int32_t L = 0; L < T.NRanks; ++L) {
    int32_t P = S.Remap[L];
    if (Seen[P] >= 0)
      return fail(Remap ? Remap->Range : Algo.NameRange,
                  "remap is not a permutation: logical ranks " + std::to_string(Seen[P]) +
                      " and " + std::to_string(L) + " both map to physical rank " +
                      std::to_string(P));
    Seen[P] = L;
  }
  return true;
}

//===----------------------------------------------------------------------===//
// Statements
//===----------------------------------------------------------------------===//

bool Instantiator::execBlock(const BlockStmt &B) {
  for (const StmtPtr &Child : B.Body)
    if (!exec(*Child))
      return false;
  return true;
}

bool Instantiator::failTooManyStatements(const Stmt &St) {
  return fail(St.Range, "instantiation runs more than " + std::to_string(MaxStatements) +
                            " statements; is a loop bound wrong?");
}

bool Instantiator::exec(const Stmt &St) {
  if (!count(St))
    return false;
  switch (St.getKind()) {
  case Stmt::Kind::Block:
    return execBlock(static_cast<const BlockStmt &>(St));
  case Stmt::Kind::Let: {
    const auto &L = static_cast<const LetStmt &>(St);
    return assign(*L.Init, L.Var->Slot);
  }
  case Stmt::Kind::Assign: {
    const auto &A = static_cast<const AssignStmt &>(St);
    return assign(*A.Value, A.Target->Target->Slot);
  }
  case Stmt::Kind::For:
    return execFor(static_cast<const ForStmt &>(St));
  case Stmt::Kind::If: {
    const auto &I = static_cast<const IfStmt &>(St);
    int64_t Cond = 0;
    if (!evalInt(*I.Cond, Cond))
      return false;
    if (Rotating && !formOf(*I.Cond).isFixed())
      return decline();
    if (Cond)
      return execBlock(*I.Then);
    return !I.Else || exec(*I.Else);
  }
  case Stmt::Kind::Chunks:
  case Stmt::Kind::Remap:
    return true; // Applied before the ranks run.
  case Stmt::Kind::Op:
    return execOp(static_cast<const OpStmt &>(St));
  }
  CCLC_UNREACHABLE("unknown statement kind");
}

bool Instantiator::assign(const Expr &E, size_t Slot) {
  if (!eval(E, Frame[Slot]))
    return false;
  if (Rotating)
    FrameForms[Slot] = Frame[Slot].K == Value::Kind::Slice ? sliceForm(E) : formOf(E);
  return true;
}

bool Instantiator::execFor(const ForStmt &F) {
  int64_t Lo = 0, Hi = 0;
  if (!evalInt(*F.Lo, Lo) || !evalInt(*F.Hi, Hi))
    return false;
  if (Rotating) {
    if (!formOf(*F.Lo).isFixed() || !formOf(*F.Hi).isFixed())
      return decline();
    FrameForms[F.Var->Slot] = RankForm::fixed();
  }
  // Every iteration counts, so that a loop with an empty body (or one whose
  // body is skipped) cannot run unbounded.
  OpenLoops.push_back(OpenLoop{loopId(F)});
  for (int64_t I = Lo; I < Hi; ++I) {
    Frame[F.Var->Slot] = Value::integer(I);
    OpenLoops.back().Value = I;
    OpenLoops.back().Id = 0;
    if (!count(F) || !execBlock(*F.Body))
      return false;
  }
  OpenLoops.pop_back();
  return true;
}

bool Instantiator::evalPeer(const Expr &E, int32_t &Peer) {
  int64_t Rank = 0;
  if (!evalInt(E, Rank))
    return false;
  if (Rank < 0 || Rank >= T.NRanks)
    return fail(E.Range, "peer " + std::to_string(Rank) + " is not a rank; '" +
                             sourceText(E.Range) + "' must be in 0.." +
                             std::to_string(T.NRanks - 1));
  if (Rank == Logical)
    return fail(E.Range, "rank would communicate with itself: '" + sourceText(E.Range) +
                             "' is " + std::to_string(Rank));
  Peer = S.Remap[Rank];
  return !Rotating || rotatesPeer(E);
}

bool Instantiator::evalSlice(const Expr &E, Slice &Result) {
  Value V;
  if (!evalChunks(E, V))
    return false;
  int32_t Base = Channel * S.channelChunks(V.Buffer);
  Result = Slice{V.Buffer, static_cast<int32_t>(Base + V.First), static_cast<int32_t>(V.Count)};
  return true;
}

void Instantiator::emit(const OpStmt &Op, Step &St) {
  St.Loc = Op.Range.Begin;
  St.Iteration = currentIteration();
  // A primitive of the template library runs with its effect's meaning; the
  // steps only remember which primitive performs them.
  if (Op.ByPrimitive)
    St.Primitive = Op.Info->Name;
  Out->push_back(St);
}

bool Instantiator::execOp(const OpStmt &Op) {
  CCLC_ASSERT(Op.Info, "sema resolves every operation");
  const std::vector<ExprPtr> &A = Op.Args;
  auto SameSize = [&](const Slice &X, const Slice &Y) {
    if (X.Count == Y.Count)
      return true;
    return fail(Op.Range, "'" + Op.Name + "' moves " + std::to_string(X.Count) +
                              " chunks into a slice of " + std::to_string(Y.Count));
  };
  auto Rotates = [&](const Expr &E, const Slice &Sl, bool Message) {
    return !Rotating || rotates(E, Sl, Message);
  };
  if (!Op.EffectKind)
    return fail(Op.NameRange, "operation '" + Op.Name + "' has effect '" + Op.Info->Effect +
                                  "', which has no lowering to schedule steps");
  Step St;
  St.Op = *Op.EffectKind;
  switch (St.Op) {
  case OpKind::Send:
  case OpKind::Recv:
  case OpKind::RecvReduce:
    if (!evalPeer(*A[0], St.Peer) || !evalSlice(*A[1], St.Op == OpKind::Send ? St.Src : St.Dst) ||
        !Rotates(*A[1], St.Op == OpKind::Send ? St.Src : St.Dst, true))
      return false;
    break;
  case OpKind::Copy:
  case OpKind::Reduce:
    if (!evalSlice(*A[0], St.Src) || !evalSlice(*A[1], St.Dst) || !SameSize(St.Src, St.Dst) ||
        !Rotates(*A[0], St.Src, false) || !Rotates(*A[1], St.Dst, false))
      return false;
    break;
  case OpKind::RecvReduceCopy:
    if (!evalPeer(*A[0], St.Peer) || !evalSlice(*A[1], St.Src) || !evalSlice(*A[2], St.Dst) ||
        !SameSize(St.Src, St.Dst) || !Rotates(*A[1], St.Src, false) ||
        !Rotates(*A[2], St.Dst, true))
      return false;
    break;
  case OpKind::Exchange:
  case OpKind::ExchangeReduce: {
    Step Send;
    Send.Op = OpKind::Send;
    Send.WithNext = true;
    if (!evalPeer(*A[0], St.Peer) || !evalSlice(*A[1], Send.Src) || !evalSlice(*A[2], St.Dst) ||
        !SameSize(Send.Src, St.Dst) || !Rotates(*A[1], Send.Src, true) ||
        !Rotates(*A[2], St.Dst, true))
      return false;
    Send.Peer = St.Peer;
    emit(Op, Send);
    St.Op = St.Op == OpKind::Exchange ? OpKind::Recv : OpKind::RecvReduce;
    break;
  }
  case OpKind::RecvReduceSend:
  case OpKind::RecvCopySend:
    if (!evalPeer(*A[0], St.Peer) || !evalPeer(*A[1], St.SendPeer) ||
        !evalSlice(*A[2], St.Dst) || !Rotates(*A[2], St.Dst, true))
      return false;
    break;
  }
  emit(Op, St);
  return true;
}

//===----------------------------------------------------------------------===//
// Expressions
//===----------------------------------------------------------------------===//

bool Instantiator::eval(const Expr &E, Value &Result) {
  if (E.Ty == Type::Buffer || E.Ty == Type::Slice)
    return evalChunks(E, Result);
  int64_t V = 0;
  if (!evalInt(E, V))
    return false;
  Result = Value::integer(V);
  return true;
}

bool Instantiator::evalOperator(const Expr &E, int64_t &Result) {
  switch (E.getKind()) {
  case Expr::Kind::IntLiteral:
  case Expr::Kind::BoolLiteral:
    CCLC_UNREACHABLE("sema folds literals");
  case Expr::Kind::Name:
  case Expr::Kind::Member:
    CCLC_UNREACHABLE("evalInt reads leaves");
  case Expr::Kind::Unary: {
    const auto &U = static_cast<const UnaryExpr &>(E);
    int64_t Operand = 0;
    if (!evalInt(*U.Operand, Operand))
      return false;
    EvalResult R = evalUnary(U.Op, Operand);
    if (!R.Value)
      return fail(E.Range, R.Error);
    Result = *R.Value;
    return true;
  }
  case Expr::Kind::Binary: {
    const auto &B = static_cast<const BinaryExpr &>(E);
    int64_t L = 0, R = 0;
    if (!evalInt(*B.Lhs, L))
      return false;
    // && and || short-circuit, so guards like `tree.up >= 0 && ...` work.
    if ((B.Op == BinaryOp::LogAnd && !L) || (B.Op == BinaryOp::LogOr && L)) {
      Result = L;
      return true;
    }
    if (!evalInt(*B.Rhs, R))
      return false;
    if (!tryBinary(B.Op, L, R, Result))
      return fail(E.Range, evalBinary(B.Op, L, R).Error + " in '" + sourceText(E.Range) + "'");
    return true;
  }
  case Expr::Kind::Call: {
    const auto &C = static_cast<const CallExpr &>(E);
    int64_t Args[2] = {0, 0};
    for (size_t I = 0; I < C.Args.size(); ++I)
      if (!evalInt(*C.Args[I], Args[I]))
        return false;
    EvalResult R = evalFunction(C.Callee, std::span<const int64_t>(Args, C.Args.size()));
    if (!R.Value)
      return fail(E.Range, R.Error);
    Result = *R.Value;
    return true;
  }
  case Expr::Kind::Index: {
    const auto &I = static_cast<const IndexExpr &>(E);
    const auto *List = dyn_cast<MemberExpr>(I.Base.get());
    CCLC_ASSERT(List, "sema allows indexing only lists and buffers");
    return evalListElement(I, *List, Result);
  }
  }
  CCLC_UNREACHABLE("unknown expression kind");
}

const Value &Instantiator::nameValue(const NameExpr &E) const {
  CCLC_ASSERT(E.Target, "sema binds every name");
  return E.Target->K == Decl::Kind::Builtin ? BuiltinFrame[E.Target->Slot]
                                             : Frame[E.Target->Slot];
}

const std::vector<int32_t> &Instantiator::listOf(const MemberExpr &E) const {
  CCLC_ASSERT(E.Info, "sema resolves every member");
  switch (E.Info->Fact) {
  case TopologyFact::Ranks: return T.Rings[Channel];
  case TopologyFact::Positions: return RingPositions[Channel];
  case TopologyFact::Down: return T.Trees[Channel].Down[Physical];
  case TopologyFact::Pos:
  case TopologyFact::Next:
  case TopologyFact::Prev:
  case TopologyFact::Up:
  case TopologyFact::NDown:
    break;
  }
  CCLC_UNREACHABLE("sema allows indexing only lists and buffers");
}

bool Instantiator::evalListElement(const IndexExpr &E, const MemberExpr &List,
                                   int64_t &Result) {
  int64_t Index = 0;
  if (!evalInt(*E.Index, Index))
    return false;
  const std::vector<int32_t> &Elements = listOf(List);
  if (Index < 0 || Index >= static_cast<int64_t>(Elements.size()))
    return fail(E.Range, "index " + std::to_string(Index) + " is outside '" +
                             sourceText(List.Range) + "', which has " +
                             std::to_string(Elements.size()) + " elements");
  Result = Elements[Index];
  return true;
}

bool Instantiator::evalChunks(const Expr &E, Value &Result) {
  if (const auto *Name = dyn_cast<NameExpr>(&E)) {
    Result = nameValue(*Name);
    CCLC_ASSERT(Result.K == Value::Kind::Slice, "sema guarantees a buffer or slice here");
    return true;
  }
  const auto *Sliced = dyn_cast<IndexExpr>(&E);
  CCLC_ASSERT(Sliced, "only names and indexing give buffers and slices");
  int64_t Index = 0;
  Value Base;
  if (!evalInt(*Sliced->Index, Index) || !evalChunks(*Sliced->Base, Base))
    return false;
  int64_t End = Index + 1;
  if (Sliced->End && !evalInt(*Sliced->End, End))
    return false;
  if (Index < 0 || End > Base.Count || End <= Index)
    return fail(E.Range, "slice '" + sourceText(E.Range) + "' is chunks " +
                             std::to_string(Index) + ".." + std::to_string(End) + ", outside " +
                             std::string(bufferName(Base.Buffer)) + "'s " +
                             std::to_string(Base.Count) + " chunks");
  Result = Value::slice(Base.Buffer, Base.First + Index, End - Index);
  return true;
}

//===----------------------------------------------------------------------===//
// Rotating runs
//===----------------------------------------------------------------------===//

bool Instantiator::rotationApplies() const {
  // The verifier proves a rotated schedule at rank 0 alone, which holds
  // only for allreduce (Symmetry.h); rank r's peers are r places on only
  // when rank numbers are ring positions.
  if (Algo.Collective != CollectiveKind::AllReduce || Algo.Remap || !Options.Placement.empty() ||
      Algo.Topology == TopologyKind::Tree || T.NRanks < 2)
    return false;
  if (Algo.Topology == TopologyKind::Ring)
    for (const std::vector<int32_t> &Ring : T.Rings)
      for (size_t I = 0; I < Ring.size(); ++I)
        if (Ring.size() != size_t(T.NRanks) || Ring[I] != int32_t(I))
          return false;
  return true;
}

RankForm Instantiator::formOf(const Expr &E) {
  if (E.ConstValue)
    return RankForm::fixed();
  switch (E.getKind()) {
  case Expr::Kind::IntLiteral:
  case Expr::Kind::BoolLiteral:
    return RankForm::fixed();
  case Expr::Kind::Name: {
    const Decl &D = *static_cast<const NameExpr &>(E).Target;
    return D.K == Decl::Kind::Builtin ? BuiltinForms[D.Slot] : FrameForms[D.Slot];
  }
  case Expr::Kind::Member:
    switch (static_cast<const MemberExpr &>(E).Info->Fact) {
    case TopologyFact::Pos: return RankForm::exact(1);
    case TopologyFact::Next:
    case TopologyFact::Prev: return RankForm::reduced(1, T.NRanks);
    default: return RankForm::unknown();
    }
  case Expr::Kind::Unary: {
    const auto &U = static_cast<const UnaryExpr &>(E);
    RankForm F = formOf(*U.Operand);
    return F.isFixed() || U.Op == UnaryOp::Neg ? negateForm(F) : RankForm::unknown();
  }
  case Expr::Kind::Binary: {
    const auto &B = static_cast<const BinaryExpr &>(E);
    RankForm L = formOf(*B.Lhs);
    // Look at the right-hand side only where rank 0 evaluated it.
    if (B.Op == BinaryOp::LogAnd || B.Op == BinaryOp::LogOr) {
      int64_t Lhs = 0;
      if (!L.isFixed() || !evalInt(*B.Lhs, Lhs))
        return RankForm::unknown();
      if ((B.Op == BinaryOp::LogAnd) != (Lhs != 0))
        return L;
      return formOf(*B.Rhs).isFixed() ? L : RankForm::unknown();
    }
    RankForm R = formOf(*B.Rhs);
    if (L.isFixed() && R.isFixed())
      return L;
    int64_t Value = 0;
    switch (B.Op) {
    case BinaryOp::Add: return addForms(L, R, 1);
    case BinaryOp::Sub: return addForms(L, R, -1);
    case BinaryOp::Mul:
      if (L.isFixed() && evalInt(*B.Lhs, Value))
        return scaleForm(R, Value);
      if (R.isFixed() && evalInt(*B.Rhs, Value))
        return scaleForm(L, Value);
      return RankForm::unknown();
    case BinaryOp::Rem:
      if (R.isFixed() && evalInt(*B.Rhs, Value))
        return remainderForm(L, Value);
      return RankForm::unknown();
    default: return RankForm::unknown();
    }
  }
  case Expr::Kind::Call:
    for (const ExprPtr &Arg : static_cast<const CallExpr &>(E).Args)
      if (!formOf(*Arg).isFixed())
        return RankForm::unknown();
    return RankForm::fixed();
  case Expr::Kind::Index:
    // A list element: the lists of a flat ring are the same at every rank.
    return formOf(*static_cast<const IndexExpr &>(E).Index).isFixed() ? RankForm::fixed()
                                                                     : RankForm::unknown();
  }
  CCLC_UNREACHABLE("unknown expression kind");
}

RankForm Instantiator::sliceForm(const Expr &E) {
  if (const auto *Name = dyn_cast<NameExpr>(&E)) {
    const Decl &D = *Name->Target;
    return D.K == Decl::Kind::Builtin ? RankForm::fixed() : FrameForms[D.Slot];
  }
  const auto &Sliced = static_cast<const IndexExpr &>(E);
  Value Base;
  if (!sliceForm(*Sliced.Base).isFixed() || !evalChunks(*Sliced.Base, Base))
    return RankForm::unknown();
  RankForm Index = formOf(*Sliced.Index);
  if (Index.isFixed())
    return !Sliced.End || formOf(*Sliced.End).isFixed() ? Index : RankForm::unknown();
  // A single chunk of a whole buffer, reduced modulo its length, moves
  // around the buffer without leaving it.
  if (Sliced.End || Index.K != RankForm::Kind::Reduced || Base.First != 0 ||
      Index.Modulus != Base.Count)
    return RankForm::unknown();
  return Index;
}

bool Instantiator::rotates(const Expr &E, const Slice &Sl, bool Message) {
  const int32_t Region = S.channelChunks(Sl.Buffer);
  RankForm F = sliceForm(E);
  if (F.isFixed())
    return (Sl.Count == Region && (!Message || Region == 1)) || decline();
  if (F.K != RankForm::Kind::Reduced || F.Modulus != Region || Sl.Count != 1)
    return decline();
  if (!ChunkStep)
    ChunkStep = F.Step;
  return *ChunkStep == F.Step || decline();
}

bool Instantiator::rotatesPeer(const Expr &E) {
  return formOf(E) == RankForm::reduced(1, T.NRanks) || decline();
}

} // namespace

std::optional<Schedule> instantiate(const Algorithm &Algo, const Target &T,
                                    const InstantiateOptions &Options, DiagnosticEngine &Diags) {
  if (Options.RankZeroOnly) {
    Instantiator RankZero(Algo, T, Options, Diags, true);
    std::optional<Schedule> S = RankZero.run();
    if (S || !RankZero.declined())
      return S;
  }
  return Instantiator(Algo, T, Options, Diags, false).run();
}

} // namespace cclc::inst
