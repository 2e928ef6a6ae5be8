//===- Instantiate.cpp - From a checked algorithm to a schedule -----------===//

#include "compiler/instantiate/Instantiate.h"
#include "dsl/Arith.h"
#include "plan/Assert.h"
#include "dsl/Builtins.h"

#include <algorithm>
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
  Instantiator(const Algorithm &Algo, const Target &T, const InstantiateOptions &Options,
               DiagnosticEngine &Diags)
      : Algo(Algo), T(T), Options(Options), Diags(Diags) {}

  std::optional<Schedule> run();

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
  bool count(const Stmt &St);
  bool exec(const Stmt &S);
  bool execBlock(const BlockStmt &B);
  bool execOp(const OpStmt &Op);
  std::optional<Value> eval(const Expr &E);
  std::optional<int64_t> evalInt(const Expr &E);
  std::optional<Value> evalName(const NameExpr &E);
  std::optional<Value> evalMember(const MemberExpr &E);
  std::optional<Value> evalIndex(const IndexExpr &E);
  std::optional<int32_t> evalPeer(const Expr &E);
  std::optional<Slice> evalSlice(const Expr &E);
  const std::vector<int32_t> *listOf(const MemberExpr &E);

  /// Reports a problem found while running for the current rank and channel.
  bool fail(SourceRange Range, const std::string &Msg);
  std::string sourceText(SourceRange Range) const;
  std::string where() const;

  const Algorithm &Algo;
  const Target &T;
  const InstantiateOptions &Options;
  DiagnosticEngine &Diags;
  Schedule S;

  // The context of the instance being run.
  bool InTargetContext = true;
  int32_t Logical = 0;
  int32_t Physical = 0;
  int32_t Channel = 0;
  std::vector<Value> Frame;
  std::vector<Value> BuiltinFrame;
  std::vector<int32_t> RingPositions;
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
  Frame.assign(Algo.NumSlots, Value{});
  enterContext(-1, 0);
  if (!checkRequirements() || !computeChunks() || !computeRemap())
    return std::nullopt;

  S.Ranks.assign(T.NRanks, RankProgram{});
  for (int32_t L = 0; L < T.NRanks; ++L) {
    RankProgram &R = S.Ranks[S.Remap[L]];
    R.LogicalRank = L;
    R.Channels.resize(S.NChannels);
    for (int32_t C = 0; C < S.NChannels; ++C) {
      enterContext(L, C);
      Out = &R.Channels[C].Steps;
      if (!execBlock(*Algo.Body))
        return std::nullopt;
    }
  }
  return std::move(S);
}

void Instantiator::enterContext(int32_t L, int32_t C) {
  InTargetContext = L < 0;
  Logical = std::max(L, 0);
  Physical = S.Remap.empty() ? Logical : S.Remap[Logical];
  Channel = C;
  int32_t LogicalRoot = S.Root;
  if (!S.Remap.empty())
    LogicalRoot = static_cast<int32_t>(
        std::find(S.Remap.begin(), S.Remap.end(), S.Root) - S.Remap.begin());
  int32_t Chunks = S.ChunksPerChannel;
  BuiltinFrame.clear();
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
  }
  if (Algo.Topology == TopologyKind::Ring && !InTargetContext) {
    const std::vector<int32_t> &Ring = T.Rings[C];
    RingPositions.assign(T.NRanks, -1);
    for (size_t I = 0; I < Ring.size(); ++I)
      RingPositions[Ring[I]] = static_cast<int32_t>(I);
  }
}

bool Instantiator::checkRequirements() {
  for (const ExprPtr &Req : Algo.Requires) {
    std::optional<int64_t> Holds = evalInt(*Req);
    if (!Holds)
      return false;
    if (!*Holds)
      return fail(Req->Range, "requirement '" + sourceText(Req->Range) + "' is not met");
  }
  return true;
}

bool Instantiator::computeChunks() {
  if (!Algo.Chunks)
    return true;
  std::optional<int64_t> K = evalInt(*Algo.Chunks->Count);
  if (!K)
    return false;
  if (*K <= 0 || *K > MaxChunks)
    return fail(Algo.Chunks->Count->Range, "chunk count " + std::to_string(*K) +
                                               " is outside 1.." + std::to_string(MaxChunks));
  if (*K * S.Units.Scratch * S.NChannels > MaxChunks)
    return fail(Algo.Chunks->Count->Range,
                "chunk count " + std::to_string(*K) + " makes buffers of more than " +
                    std::to_string(MaxChunks) + " chunks");
  S.ChunksPerChannel = static_cast<int32_t>(*K);
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
      std::optional<int64_t> P = evalInt(*Remap->Mapping);
      if (!P)
        return false;
      if (*P < 0 || *P >= T.NRanks)
        return fail(Remap->Mapping->Range, "remap sends logical rank " + std::to_string(L) +
                                               " to " + std::to_string(*P) +
                                               ", which is not a physical rank");
      S.Remap[L] = static_cast<int32_t>(*P);
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

bool Instantiator::count(const Stmt &St) {
  if (++Statements <= MaxStatements)
    return true;
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
    std::optional<Value> V = eval(*L.Init);
    if (!V)
      return false;
    Frame[L.Var->Slot] = *V;
    return true;
  }
  case Stmt::Kind::Assign: {
    const auto &A = static_cast<const AssignStmt &>(St);
    std::optional<Value> V = eval(*A.Value);
    if (!V)
      return false;
    Frame[A.Target->Target->Slot] = *V;
    return true;
  }
  case Stmt::Kind::For: {
    const auto &F = static_cast<const ForStmt &>(St);
    std::optional<int64_t> Lo = evalInt(*F.Lo);
    std::optional<int64_t> Hi = Lo ? evalInt(*F.Hi) : std::nullopt;
    if (!Hi)
      return false;
    // Every iteration counts, so that a loop with an empty body (or one
    // whose body is skipped) cannot run unbounded.
    OpenLoops.push_back(OpenLoop{loopId(F)});
    for (int64_t I = *Lo; I < *Hi; ++I) {
      Frame[F.Var->Slot] = Value::integer(I);
      OpenLoops.back().Value = I;
      OpenLoops.back().Id = 0;
      if (!count(St) || !execBlock(*F.Body))
        return false;
    }
    OpenLoops.pop_back();
    return true;
  }
  case Stmt::Kind::If: {
    const auto &I = static_cast<const IfStmt &>(St);
    std::optional<int64_t> Cond = evalInt(*I.Cond);
    if (!Cond)
      return false;
    if (*Cond)
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

std::optional<int32_t> Instantiator::evalPeer(const Expr &E) {
  std::optional<int64_t> Peer = evalInt(E);
  if (!Peer)
    return std::nullopt;
  if (*Peer < 0 || *Peer >= T.NRanks) {
    fail(E.Range, "peer " + std::to_string(*Peer) + " is not a rank; '" + sourceText(E.Range) +
                      "' must be in 0.." + std::to_string(T.NRanks - 1));
    return std::nullopt;
  }
  if (*Peer == Logical) {
    fail(E.Range, "rank would communicate with itself: '" + sourceText(E.Range) + "' is " +
                      std::to_string(*Peer));
    return std::nullopt;
  }
  return S.Remap[*Peer];
}

std::optional<Slice> Instantiator::evalSlice(const Expr &E) {
  std::optional<Value> V = eval(E);
  if (!V)
    return std::nullopt;
  CCLC_ASSERT(V->K == Value::Kind::Slice, "sema guarantees slice arguments");
  int32_t Base = Channel * S.channelChunks(V->Buffer);
  return Slice{V->Buffer, static_cast<int32_t>(Base + V->First), static_cast<int32_t>(V->Count)};
}

bool Instantiator::execOp(const OpStmt &Op) {
  CCLC_ASSERT(Op.Info, "sema resolves every operation");
  const std::vector<ExprPtr> &A = Op.Args;
  Step St;
  St.Loc = Op.Range.Begin;
  St.Iteration = currentIteration();
  // A primitive of the template library runs with its effect's meaning; the
  // steps only remember which primitive performs them.
  if (Op.Info->Name != Op.Info->Effect)
    St.Primitive = Op.Info->Name;
  auto Emit = [&](Step Next) {
    Out->push_back(Next);
    return true;
  };
  auto SameSize = [&](const Slice &X, const Slice &Y) {
    if (X.Count == Y.Count)
      return true;
    return fail(Op.Range, "'" + Op.Name + "' moves " + std::to_string(X.Count) +
                              " chunks into a slice of " + std::to_string(Y.Count));
  };
  const std::string &N = Op.Info->Effect;
  if (N == "send" || N == "recv" || N == "recv_reduce") {
    std::optional<int32_t> Peer = evalPeer(*A[0]);
    std::optional<Slice> Data = Peer ? evalSlice(*A[1]) : std::nullopt;
    if (!Data)
      return false;
    St.Peer = *Peer;
    St.Op = N == "send" ? OpKind::Send : N == "recv" ? OpKind::Recv : OpKind::RecvReduce;
    (St.Op == OpKind::Send ? St.Src : St.Dst) = *Data;
    return Emit(St);
  }
  if (N == "copy" || N == "reduce") {
    std::optional<Slice> Src = evalSlice(*A[0]);
    std::optional<Slice> Dst = Src ? evalSlice(*A[1]) : std::nullopt;
    if (!Dst || !SameSize(*Src, *Dst))
      return false;
    St.Op = N == "copy" ? OpKind::Copy : OpKind::Reduce;
    St.Src = *Src;
    St.Dst = *Dst;
    return Emit(St);
  }
  if (N == "exchange" || N == "exchange_reduce") {
    std::optional<int32_t> Peer = evalPeer(*A[0]);
    std::optional<Slice> Src = Peer ? evalSlice(*A[1]) : std::nullopt;
    std::optional<Slice> Dst = Src ? evalSlice(*A[2]) : std::nullopt;
    if (!Dst || !SameSize(*Src, *Dst))
      return false;
    Step Send = St;
    Send.Op = OpKind::Send;
    Send.Peer = *Peer;
    Send.Src = *Src;
    Send.WithNext = true;
    St.Op = N == "exchange" ? OpKind::Recv : OpKind::RecvReduce;
    St.Peer = *Peer;
    St.Dst = *Dst;
    return Emit(Send) && Emit(St);
  }
  if (N == "recv_reduce_send" || N == "recv_copy_send") {
    std::optional<int32_t> From = evalPeer(*A[0]);
    std::optional<int32_t> To = From ? evalPeer(*A[1]) : std::nullopt;
    std::optional<Slice> Data = To ? evalSlice(*A[2]) : std::nullopt;
    if (!Data)
      return false;
    St.Op = N == "recv_reduce_send" ? OpKind::RecvReduceSend : OpKind::RecvCopySend;
    St.Peer = *From;
    St.SendPeer = *To;
    St.Dst = *Data;
    return Emit(St);
  }
  return fail(Op.NameRange, "operation '" + Op.Name + "' has effect '" + N +
                                "', which has no lowering to schedule steps");
}

//===----------------------------------------------------------------------===//
// Expressions
//===----------------------------------------------------------------------===//

std::optional<int64_t> Instantiator::evalInt(const Expr &E) {
  std::optional<Value> V = eval(E);
  if (!V)
    return std::nullopt;
  CCLC_ASSERT(V->K == Value::Kind::Int, "sema guarantees an integer here");
  return V->Int;
}

std::optional<Value> Instantiator::eval(const Expr &E) {
  if (E.ConstValue)
    return Value::integer(*E.ConstValue);
  switch (E.getKind()) {
  case Expr::Kind::IntLiteral:
  case Expr::Kind::BoolLiteral:
    CCLC_UNREACHABLE("sema folds literals");
  case Expr::Kind::Name:
    return evalName(static_cast<const NameExpr &>(E));
  case Expr::Kind::Unary: {
    const auto &U = static_cast<const UnaryExpr &>(E);
    std::optional<int64_t> Operand = evalInt(*U.Operand);
    if (!Operand)
      return std::nullopt;
    EvalResult R = evalUnary(U.Op, *Operand);
    if (!R.Value)
      return fail(E.Range, R.Error), std::nullopt;
    return Value::integer(*R.Value);
  }
  case Expr::Kind::Binary: {
    const auto &B = static_cast<const BinaryExpr &>(E);
    std::optional<int64_t> L = evalInt(*B.Lhs);
    if (!L)
      return std::nullopt;
    // && and || short-circuit, so guards like `tree.up >= 0 && ...` work.
    if ((B.Op == BinaryOp::LogAnd && !*L) || (B.Op == BinaryOp::LogOr && *L))
      return Value::integer(*L);
    std::optional<int64_t> R = evalInt(*B.Rhs);
    if (!R)
      return std::nullopt;
    EvalResult Result = evalBinary(B.Op, *L, *R);
    if (!Result.Value)
      return fail(E.Range, Result.Error + " in '" + sourceText(E.Range) + "'"), std::nullopt;
    return Value::integer(*Result.Value);
  }
  case Expr::Kind::Call: {
    const auto &C = static_cast<const CallExpr &>(E);
    int64_t Args[2] = {0, 0};
    for (size_t I = 0; I < C.Args.size(); ++I) {
      std::optional<int64_t> V = evalInt(*C.Args[I]);
      if (!V)
        return std::nullopt;
      Args[I] = *V;
    }
    EvalResult R = evalFunction(C.Callee, std::span<const int64_t>(Args, C.Args.size()));
    if (!R.Value)
      return fail(E.Range, R.Error), std::nullopt;
    return Value::integer(*R.Value);
  }
  case Expr::Kind::Member:
    return evalMember(static_cast<const MemberExpr &>(E));
  case Expr::Kind::Index:
    return evalIndex(static_cast<const IndexExpr &>(E));
  }
  CCLC_UNREACHABLE("unknown expression kind");
}

std::optional<Value> Instantiator::evalName(const NameExpr &E) {
  CCLC_ASSERT(E.Target, "sema binds every name");
  return E.Target->K == Decl::Kind::Builtin ? BuiltinFrame[E.Target->Slot]
                                             : Frame[E.Target->Slot];
}

const std::vector<int32_t> *Instantiator::listOf(const MemberExpr &E) {
  if (E.Member == "ranks")
    return &T.Rings[Channel];
  if (E.Member == "positions")
    return &RingPositions;
  if (E.Member == "down")
    return &T.Trees[Channel].Down[Physical];
  return nullptr;
}

std::optional<Value> Instantiator::evalMember(const MemberExpr &E) {
  const std::string &M = E.Member;
  if (Algo.Topology == TopologyKind::Ring) {
    const std::vector<int32_t> &Ring = T.Rings[Channel];
    int64_t N = static_cast<int64_t>(Ring.size());
    int64_t Pos = RingPositions[Physical];
    if (M == "pos")
      return Value::integer(Pos);
    if (M == "next")
      return Value::integer(Ring[(Pos + 1) % N]);
    if (M == "prev")
      return Value::integer(Ring[(Pos + N - 1) % N]);
  } else {
    const target::TreeChannel &Tree = T.Trees[Channel];
    if (M == "up")
      return Value::integer(Tree.Up[Physical]);
    if (M == "ndown")
      return Value::integer(static_cast<int64_t>(Tree.Down[Physical].size()));
  }
  CCLC_UNREACHABLE("sema checks members against the algorithm's topology");
}

std::optional<Value> Instantiator::evalIndex(const IndexExpr &E) {
  std::optional<int64_t> Index = evalInt(*E.Index);
  if (!Index)
    return std::nullopt;
  if (const auto *Member = dyn_cast<MemberExpr>(E.Base.get())) {
    const std::vector<int32_t> *List = listOf(*Member);
    CCLC_ASSERT(List, "sema allows indexing only lists and buffers");
    if (*Index < 0 || *Index >= static_cast<int64_t>(List->size()))
      return fail(E.Range, "index " + std::to_string(*Index) + " is outside '" +
                               sourceText(Member->Range) + "', which has " +
                               std::to_string(List->size()) + " elements"),
             std::nullopt;
    return Value::integer((*List)[*Index]);
  }
  std::optional<Value> Base = eval(*E.Base);
  if (!Base)
    return std::nullopt;
  int64_t End = *Index + 1;
  if (E.End) {
    std::optional<int64_t> V = evalInt(*E.End);
    if (!V)
      return std::nullopt;
    End = *V;
  }
  if (*Index < 0 || End > Base->Count || End <= *Index)
    return fail(E.Range, "slice '" + sourceText(E.Range) + "' is chunks " +
                             std::to_string(*Index) + ".." + std::to_string(End) + ", outside " +
                             std::string(bufferName(Base->Buffer)) + "'s " +
                             std::to_string(Base->Count) + " chunks"),
           std::nullopt;
  return Value::slice(Base->Buffer, Base->First + *Index, End - *Index);
}

} // namespace

std::optional<Schedule> instantiate(const Algorithm &Algo, const Target &T,
                                    const InstantiateOptions &Options, DiagnosticEngine &Diags) {
  return Instantiator(Algo, T, Options, Diags).run();
}

} // namespace cclc::inst
