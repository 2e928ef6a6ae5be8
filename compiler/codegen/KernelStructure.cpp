//===- KernelStructure.cpp - One kernel's code for every rank -------------===//

#include "compiler/codegen/KernelStructure.h"
#include "plan/Assert.h"

#include <algorithm>

namespace cclc::codegen {

using sched::BufferKind;
using sched::OpKind;
using sched::Step;

bool effectUses(OpKind E, Field F) {
  switch (F) {
  case Field::RecvPeer: return plan::opReceives(E);
  case Field::SendPeer: return plan::opSends(E);
  case Field::SrcChunk:
  case Field::SrcCount: return plan::opReadsSource(E);
  case Field::DstChunk:
  case Field::DstCount: return E != OpKind::Send;
  }
  CCLC_UNREACHABLE("unknown field");
}

bool isSliceField(Field F) { return F != Field::RecvPeer && F != Field::SendPeer; }

bool isSourceField(Field F) { return F == Field::SrcChunk || F == Field::SrcCount; }

int32_t Call::field(Field F) const {
  switch (F) {
  case Field::RecvPeer: return RecvPeer;
  case Field::SendPeer: return SendPeer;
  case Field::SrcChunk: return Src.Chunk;
  case Field::DstChunk: return Dst.Chunk;
  case Field::SrcCount: return Src.Count;
  case Field::DstCount: return Dst.Count;
  }
  CCLC_UNREACHABLE("unknown field");
}

namespace {

constexpr Field AllFields[] = {Field::RecvPeer, Field::SendPeer, Field::SrcChunk,
                               Field::DstChunk, Field::SrcCount, Field::DstCount};

CallShape shapeOf(const Call &C) {
  CallShape Shape;
  Shape.Kind = C.Kind;
  Shape.Primitive = C.Primitive;
  Shape.Proto = C.Proto;
  if (effectUses(C.Kind, Field::SrcChunk))
    Shape.SrcBuffer = C.Src.Buffer;
  if (effectUses(C.Kind, Field::DstChunk))
    Shape.DstBuffer = C.Dst.Buffer;
  return Shape;
}

/// Calls are equal when they run the same code with the same values.
bool sameCall(const Call &A, const Call &B) {
  if (!(shapeOf(A) == shapeOf(B)))
    return false;
  for (Field F : AllFields)
    if (effectUses(A.Kind, F) && A.field(F) != B.field(F))
      return false;
  return true;
}

/// The calls of one rank's channel, chunks made relative to the channel's
/// own block so that equal channels compare equal.
std::vector<Call> callsOf(const sched::Schedule &S, int32_t Channel,
                          const std::vector<Step> &Steps) {
  auto Local = [&](sched::Slice Sl) {
    Sl.Chunk -= Channel * S.channelChunks(Sl.Buffer);
    return Sl;
  };
  std::vector<Call> Calls;
  for (plan::LoweredStep &L : plan::lowerChannel(Steps)) {
    Call C;
    C.Kind = L.Call.Op;
    C.Primitive = std::move(L.Primitive);
    C.Proto = L.Call.Proto;
    C.Loc = L.Loc;
    C.RecvPeer = L.Call.RecvPeer;
    C.SendPeer = L.Call.SendPeer;
    if (effectUses(C.Kind, Field::SrcChunk))
      C.Src = Local(L.Call.Src);
    if (effectUses(C.Kind, Field::DstChunk))
      C.Dst = Local(L.Call.Dst);
    Calls.push_back(std::move(C));
  }
  return Calls;
}

/// The order in which a channel's ranks pass data around a ring, when each
/// rank sends to one peer at most and the sends form one cycle or one path
/// through every rank: Order[position] = rank, from rank 0 on a cycle and
/// from the path's head otherwise (a broadcast's last rank sends nothing).
std::optional<std::vector<int32_t>> ringOrder(const std::vector<std::vector<Call>> &Calls) {
  int32_t N = int32_t(Calls.size());
  std::vector<int32_t> Next(N, -1), Incoming(N, 0);
  for (int32_t R = 0; R < N; ++R)
    for (const Call &C : Calls[R]) {
      if (!effectUses(C.Kind, Field::SendPeer))
        continue;
      if (Next[R] >= 0 && Next[R] != C.SendPeer)
        return std::nullopt;
      if (Next[R] < 0)
        ++Incoming[C.SendPeer];
      Next[R] = C.SendPeer;
    }
  auto Head = std::find(Incoming.begin(), Incoming.end(), 0);
  int32_t Start = Head == Incoming.end() ? 0 : int32_t(Head - Incoming.begin());
  std::vector<int32_t> Order;
  std::vector<bool> Seen(N, false);
  for (int32_t R = Start; R >= 0 && !Seen[R]; R = Next[R]) {
    Seen[R] = true;
    Order.push_back(R);
  }
  if (int32_t(Order.size()) != N)
    return std::nullopt;
  return Order;
}

/// The numberings a program's expressions may read: physical, logical when
/// the algorithm remaps, and ring positions when the sends form a ring in
/// neither of those orders.
std::vector<Numbering> numberings(const sched::Schedule &S, int32_t Program,
                                  const std::vector<std::vector<Call>> &Calls) {
  std::vector<Numbering> Nums(1);
  Nums[0].Var = "Rank";
  for (int32_t R = 0; R < S.NRanks; ++R)
    Nums[0].Of.push_back(R);
  Numbering Logical{"L", "LogicalRank", "Remap",
                    {},  S.Remap,       "the rank the algorithm calls `rank`"};
  for (const sched::RankProgram &RP : S.Ranks)
    Logical.Of.push_back(RP.LogicalRank);
  if (Logical.Of != Nums[0].Of)
    Nums.push_back(std::move(Logical));
  if (std::optional<std::vector<int32_t>> Order = ringOrder(Calls)) {
    Numbering Ring{"Pos",
                   "RingPos" + std::to_string(Program),
                   "RingOrder" + std::to_string(Program),
                   std::vector<int32_t>(S.NRanks),
                   *Order,
                   "the rank's position on the ring channel program " + std::to_string(Program) +
                       " sends around"};
    for (int32_t P = 0; P < S.NRanks; ++P)
      Ring.Of[(*Order)[P]] = P;
    bool Known =
        std::any_of(Nums.begin(), Nums.end(), [&](const Numbering &N) { return N.Of == Ring.Of; });
    if (!Known)
      Nums.push_back(std::move(Ring));
  }
  return Nums;
}

/// The most calls a rolled loop's body holds.
constexpr int32_t MaxLoopBody = 8;

/// Cuts the calls of one rank class into runs and fits their fields.
class RunBuilder {
public:
  RunBuilder(const sched::Schedule &S, const std::vector<std::vector<Call>> &Calls,
             const RankClass &Class, ChannelProgram &Program)
      : S(S), Calls(Calls), Class(Class), Program(Program) {}

  /// The blocks of the class, in call order.
  std::vector<RunBlock> build() {
    const std::vector<Call> &First = Calls[Class.Ranks[0]];
    std::vector<RunBlock> Blocks;
    for (int32_t Begin = 0; Begin < int32_t(First.size());) {
      int32_t End = Begin + 1;
      while (End < int32_t(First.size()) && shapeOf(First[End]) == shapeOf(First[Begin]))
        ++End;
      if (std::optional<RunBlock> Loop = rolled(Begin, End - Begin)) {
        Begin += int32_t(Loop->Body.size()) * Loop->steps();
        Blocks.push_back(std::move(*Loop));
        continue;
      }
      splitSegment(Begin, End, Blocks);
      Begin = End;
    }
    return Blocks;
  }

private:
  const sched::Schedule &S;
  const std::vector<std::vector<Call>> &Calls;
  const RankClass &Class;
  ChannelProgram &Program;

  /// Field F of calls First, First + Stride, ... (Steps of them) of every
  /// rank of the class, rank-major.
  std::vector<int32_t> values(Field F, int32_t First, int32_t Steps, int32_t Stride) const {
    std::vector<int32_t> Values;
    for (int32_t R : Class.Ranks)
      for (int32_t I = 0; I < Steps; ++I)
        Values.push_back(Calls[R][First + I * Stride].field(F));
    return Values;
  }

  /// What affine forms of field F may wrap at: the rank count, and for a
  /// chunk index or slice size the chunks of the channel's block first.
  std::vector<int32_t> moduli(const CallShape &Shape, Field F) const {
    std::vector<int32_t> Moduli = {S.NRanks};
    if (isSliceField(F)) {
      int32_t Chunks = S.channelChunks(Shape.bufferOf(F));
      if (Chunks != S.NRanks)
        Moduli.insert(Moduli.begin(), Chunks);
    }
    return Moduli;
  }

  /// The run of Steps calls from First, Stride apart; without tables,
  /// nullopt unless every field has a closed form.
  std::optional<Run> fit(int32_t First, int32_t Steps, bool AllowTables, int32_t Stride = 1) {
    Run R;
    R.Shape = shapeOf(Calls[Class.Ranks[0]][First]);
    R.Domain = {Class.Ranks, Steps};
    R.Loc = Calls[Class.Ranks[0]][First].Loc;
    for (Field F : AllFields) {
      if (!effectUses(R.Shape.Kind, F))
        continue;
      std::vector<int32_t> Values = values(F, First, Steps, Stride);
      FieldCode &Code = R.Fields[size_t(F)];
      Code.Expr = fitIndex(R.Domain, Values, Program.Numberings, moduli(R.Shape, F));
      if (Code.Expr)
        continue;
      if (!AllowTables)
        return std::nullopt;
      Code.Table = table(F, R.Loc, Values, Steps);
    }
    return R;
  }

  /// The table of a field's values: one entry per rank when they do not
  /// change along the run, and shared with an equal table of the program.
  int32_t table(Field F, SourceLoc Loc, const std::vector<int32_t> &Values, int32_t Steps) {
    bool SameEachStep = true;
    for (size_t I = 0; I < Values.size(); ++I)
      SameEachStep &= Values[I] == Values[I - I % Steps];
    int32_t Width = SameEachStep ? 1 : Steps;
    IndexTable Table;
    Table.Of = F;
    Table.Steps = Width;
    Table.Loc = Loc;
    Table.Values.assign(size_t(S.NRanks) * Width, 0);
    for (size_t I = 0; I < Class.Ranks.size(); ++I)
      std::copy_n(Values.begin() + I * Steps, Width,
                  Table.Values.begin() + size_t(Class.Ranks[I]) * Width);
    auto Same =
        std::find_if(Program.Tables.begin(), Program.Tables.end(), [&](const IndexTable &T) {
          return T.Steps == Table.Steps && T.Values == Table.Values;
        });
    if (Same != Program.Tables.end()) {
      Same->Shared = true;
      return int32_t(Same - Program.Tables.begin());
    }
    Program.Tables.push_back(std::move(Table));
    return int32_t(Program.Tables.size() - 1);
  }

  bool fits(int32_t First, int32_t Steps) { return fit(First, Steps, false).has_value(); }

  /// The loop of Rounds rounds of Period calls from Begin, when every call
  /// of its body has closed forms over the rounds.
  std::optional<RunBlock> loop(int32_t Begin, int32_t Period, int32_t Rounds) {
    RunBlock Loop;
    for (int32_t Call = 0; Call < Period; ++Call) {
      std::optional<Run> R = fit(Begin + Call, Rounds, false, Period);
      if (!R)
        return std::nullopt;
      Loop.Body.push_back(std::move(*R));
    }
    return Loop;
  }

  /// The loop from call Begin that covers the most calls, rounds of a few
  /// calls of several shapes whose fields have closed forms over the round;
  /// nullopt unless it runs more rounds than are unrolled and covers more
  /// than the SameShape calls of one shape from Begin, which form a run.
  std::optional<RunBlock> rolled(int32_t Begin, int32_t SameShape) {
    const std::vector<Call> &First = Calls[Class.Ranks[0]];
    const int32_t Left = int32_t(First.size()) - Begin;
    std::optional<RunBlock> Best;
    int32_t Covered = SameShape;
    for (int32_t Period = 2; Period <= MaxLoopBody && Period * (MaxUnrolledSteps + 1) <= Left;
         ++Period) {
      // Rounds whose calls have the first round's shapes; the class's ranks
      // share their shapes, so its first rank's calls tell.
      int32_t Rounds = 1;
      while ((Rounds + 1) * Period <= Left &&
             std::equal(First.begin() + Begin, First.begin() + Begin + Period,
                        First.begin() + Begin + Rounds * Period, [](const Call &A, const Call &B) {
                          return shapeOf(A) == shapeOf(B);
                        }))
        ++Rounds;
      if (Rounds * Period <= Covered || Rounds <= MaxUnrolledSteps)
        continue;
      // The longest prefix of rounds that fits: fitting is monotone.
      std::optional<RunBlock> Found = loop(Begin, Period, Rounds);
      if (!Found) {
        int32_t Good = MaxUnrolledSteps, Bad = Rounds;
        while (Bad - Good > 1) {
          int32_t Mid = (Good + Bad) / 2;
          (loop(Begin, Period, Mid) ? Good : Bad) = Mid;
        }
        if (Good == MaxUnrolledSteps || Good * Period <= Covered)
          continue;
        Found = loop(Begin, Period, Good);
      }
      Covered = Found->steps() * Period;
      Best = std::move(Found);
    }
    return Best;
  }

  /// Runs for calls [Begin, End) of one shape: whole when it fits, else its
  /// longest fitting prefix (fitting is monotone: what fits a prefix fits
  /// every shorter one), and tables only for stretches where no two
  /// consecutive calls fit together.
  void splitSegment(int32_t Begin, int32_t End, std::vector<RunBlock> &Blocks) {
    while (Begin < End) {
      if (std::optional<Run> Whole = fit(Begin, End - Begin, false)) {
        Blocks.push_back(RunBlock{{std::move(*Whole)}});
        return;
      }
      int32_t Good = 0, Bad = End - Begin;
      while (Bad - Good > 1) {
        int32_t Mid = (Good + Bad) / 2;
        (fits(Begin, Mid) ? Good : Bad) = Mid;
      }
      int32_t Length = Good;
      if (Good == 0) {
        Length = 1;
        while (Begin + Length < End && !(Begin + Length + 1 < End && fits(Begin + Length, 2)))
          ++Length;
      }
      Blocks.push_back(RunBlock{{*fit(Begin, Length, true)}});
      Begin += Length;
    }
  }
};

} // namespace

KernelStructure analyzeKernel(const sched::Schedule &S) {
  KernelStructure K;
  kern::ProgramShape Shape = plan::scheduleShape(S);
  K.MaxMessageChunks = Shape.Grid.MaxSliceChunks;
  K.ScratchUnits = Shape.ScratchUnits;

  // Calls[Channel][Rank].
  std::vector<std::vector<std::vector<Call>>> Calls(S.NChannels);
  for (int32_t H = 0; H < S.NChannels; ++H)
    for (int32_t R = 0; R < S.NRanks; ++R)
      Calls[H].push_back(callsOf(S, H, S.Ranks[R].Channels[H].Steps));

  std::vector<int32_t> ProgramOf(S.NChannels, -1);
  for (int32_t H = 0; H < S.NChannels; ++H) {
    if (ProgramOf[H] >= 0)
      continue;
    ChannelProgram P;
    for (int32_t Other = H; Other < S.NChannels; ++Other) {
      bool Same = true;
      for (int32_t R = 0; R < S.NRanks && Same; ++R)
        Same = std::equal(Calls[H][R].begin(), Calls[H][R].end(), Calls[Other][R].begin(),
                          Calls[Other][R].end(), sameCall);
      if (Same) {
        ProgramOf[Other] = int32_t(K.Programs.size());
        P.Channels.push_back(Other);
      }
    }
    // Rank classes, numbered in order of their first rank.
    std::vector<std::vector<CallShape>> ClassShapes;
    for (int32_t R = 0; R < S.NRanks; ++R) {
      std::vector<CallShape> Shapes;
      for (const Call &C : Calls[H][R])
        Shapes.push_back(shapeOf(C));
      auto It = std::find(ClassShapes.begin(), ClassShapes.end(), Shapes);
      P.ClassOfRank.push_back(int32_t(It - ClassShapes.begin()));
      if (It == ClassShapes.end()) {
        ClassShapes.push_back(std::move(Shapes));
        P.Classes.emplace_back();
      }
      P.Classes[P.ClassOfRank.back()].Ranks.push_back(R);
    }
    P.Numberings = numberings(S, int32_t(K.Programs.size()), Calls[H]);
    for (RankClass &Class : P.Classes)
      Class.Blocks = RunBuilder(S, Calls[H], Class, P).build();
    K.Programs.push_back(std::move(P));
  }
  return K;
}

} // namespace cclc::codegen
