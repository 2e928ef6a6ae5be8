//===- KernelStructure.cpp - One kernel's code for every rank -------------===//

#include "compiler/codegen/KernelStructure.h"
#include "dsl/Assert.h"

#include <algorithm>

namespace cclc::codegen {

using sched::BufferKind;
using sched::OpKind;
using sched::Step;

std::string_view effectName(Effect E) {
  switch (E) {
  case Effect::Send: return "send";
  case Effect::Recv: return "recv";
  case Effect::RecvReduce: return "recv_reduce";
  case Effect::Copy: return "copy";
  case Effect::Reduce: return "reduce";
  case Effect::RecvReduceSend: return "recv_reduce_send";
  case Effect::RecvCopySend: return "recv_copy_send";
  case Effect::Exchange: return "exchange";
  case Effect::ExchangeReduce: return "exchange_reduce";
  }
  CCLC_UNREACHABLE("unknown effect");
}

bool effectUses(Effect E, Field F) {
  bool Receives = E != Effect::Send && E != Effect::Copy && E != Effect::Reduce;
  bool Sends = E == Effect::Send || E == Effect::RecvReduceSend || E == Effect::RecvCopySend ||
               E == Effect::Exchange || E == Effect::ExchangeReduce;
  bool HasSrc = E == Effect::Send || E == Effect::Copy || E == Effect::Reduce ||
                E == Effect::Exchange || E == Effect::ExchangeReduce;
  switch (F) {
  case Field::RecvPeer: return Receives;
  case Field::SendPeer: return Sends;
  case Field::SrcChunk: return HasSrc;
  case Field::DstChunk: return E != Effect::Send;
  }
  CCLC_UNREACHABLE("unknown field");
}

bool isChunkField(Field F) { return F == Field::SrcChunk || F == Field::DstChunk; }

int32_t Call::field(Field F) const {
  switch (F) {
  case Field::RecvPeer: return RecvPeer;
  case Field::SendPeer: return SendPeer;
  case Field::SrcChunk: return Src.Chunk;
  case Field::DstChunk: return Dst.Chunk;
  }
  CCLC_UNREACHABLE("unknown field");
}

namespace {

constexpr Field AllFields[] = {Field::RecvPeer, Field::SendPeer, Field::SrcChunk, Field::DstChunk};

CallShape shapeOf(const Call &C) {
  CallShape Shape;
  Shape.Kind = C.Kind;
  Shape.Primitive = C.Primitive;
  if (effectUses(C.Kind, Field::SrcChunk)) {
    Shape.SrcBuffer = C.Src.Buffer;
    Shape.SrcCount = C.Src.Count;
  }
  if (effectUses(C.Kind, Field::DstChunk)) {
    Shape.DstBuffer = C.Dst.Buffer;
    Shape.DstCount = C.Dst.Count;
  }
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

Effect effectOf(OpKind Op) {
  switch (Op) {
  case OpKind::Send: return Effect::Send;
  case OpKind::Recv: return Effect::Recv;
  case OpKind::RecvReduce: return Effect::RecvReduce;
  case OpKind::Copy: return Effect::Copy;
  case OpKind::Reduce: return Effect::Reduce;
  case OpKind::RecvReduceSend: return Effect::RecvReduceSend;
  case OpKind::RecvCopySend: return Effect::RecvCopySend;
  }
  CCLC_UNREACHABLE("unknown op");
}

/// The calls of one rank's channel, chunks made relative to the channel's
/// own block so that equal channels compare equal.
std::optional<std::vector<Call>> callsOf(const sched::Schedule &S, int32_t Channel,
                                         const std::vector<Step> &Steps, DiagnosticEngine &Diags) {
  auto Local = [&](sched::Slice Sl) {
    Sl.Chunk -= Channel * S.channelChunks(Sl.Buffer);
    return Sl;
  };
  std::vector<Call> Calls;
  for (size_t I = 0; I < Steps.size(); ++I) {
    const Step &St = Steps[I];
    Call C;
    C.Kind = effectOf(St.Op);
    C.Primitive = St.Primitive;
    C.Loc = St.Loc;
    if (St.WithNext) {
      const Step *Next = I + 1 < Steps.size() ? &Steps[I + 1] : nullptr;
      bool Exchange = St.Op == OpKind::Send && Next && !Next->WithNext &&
                      (Next->Op == OpKind::Recv || Next->Op == OpKind::RecvReduce);
      if (!Exchange) {
        Diags.error(St.Loc, std::string(sched::opName(St.Op)) + " runs together with " +
                                (Next ? "a " + std::string(sched::opName(Next->Op)) : "nothing") +
                                ", which no kernel primitive does; only a send followed by "
                                "recv or recv_reduce runs together (an exchange)");
        return std::nullopt;
      }
      C.Kind = Next->Op == OpKind::Recv ? Effect::Exchange : Effect::ExchangeReduce;
      C.SendPeer = St.Peer;
      C.RecvPeer = Next->Peer;
      C.Src = Local(St.Src);
      C.Dst = Local(Next->Dst);
      Calls.push_back(std::move(C));
      ++I;
      continue;
    }
    switch (St.Op) {
    case OpKind::Send:
      C.SendPeer = St.Peer;
      C.Src = Local(St.Src);
      break;
    case OpKind::Recv:
    case OpKind::RecvReduce:
      C.RecvPeer = St.Peer;
      C.Dst = Local(St.Dst);
      break;
    case OpKind::Copy:
    case OpKind::Reduce:
      C.Src = Local(St.Src);
      C.Dst = Local(St.Dst);
      break;
    case OpKind::RecvReduceSend:
    case OpKind::RecvCopySend:
      C.RecvPeer = St.Peer;
      C.SendPeer = St.SendPeer;
      C.Dst = Local(St.Dst);
      break;
    }
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

/// Cuts the calls of one rank class into runs and fits their fields.
class RunBuilder {
public:
  RunBuilder(const sched::Schedule &S, const std::vector<std::vector<Call>> &Calls,
             const RankClass &Class, ChannelProgram &Program)
      : S(S), Calls(Calls), Class(Class), Program(Program) {}

  /// The runs of the class, in call order.
  std::vector<Run> build() {
    const std::vector<Call> &First = Calls[Class.Ranks[0]];
    std::vector<Run> Runs;
    for (size_t Begin = 0; Begin < First.size();) {
      size_t End = Begin + 1;
      while (End < First.size() && shapeOf(First[End]) == shapeOf(First[Begin]))
        ++End;
      splitSegment(int32_t(Begin), int32_t(End), Runs);
      Begin = End;
    }
    return Runs;
  }

private:
  const sched::Schedule &S;
  const std::vector<std::vector<Call>> &Calls;
  const RankClass &Class;
  ChannelProgram &Program;

  std::vector<int32_t> values(Field F, int32_t First, int32_t Steps) const {
    std::vector<int32_t> Values;
    for (int32_t R : Class.Ranks)
      for (int32_t I = 0; I < Steps; ++I)
        Values.push_back(Calls[R][First + I].field(F));
    return Values;
  }

  /// What affine forms of field F may wrap at: the rank count, and for a
  /// chunk index the chunks of the channel's block first.
  std::vector<int32_t> moduli(const CallShape &Shape, Field F) const {
    std::vector<int32_t> Moduli = {S.NRanks};
    if (isChunkField(F)) {
      int32_t Chunks = S.channelChunks(F == Field::SrcChunk ? Shape.SrcBuffer : Shape.DstBuffer);
      if (Chunks != S.NRanks)
        Moduli.insert(Moduli.begin(), Chunks);
    }
    return Moduli;
  }

  /// The run of Steps calls from First; without tables, nullopt unless every
  /// field has a closed form.
  std::optional<Run> fit(int32_t First, int32_t Steps, bool AllowTables) {
    Run R;
    R.Shape = shapeOf(Calls[Class.Ranks[0]][First]);
    R.Domain = {Class.Ranks, Steps};
    R.Loc = Calls[Class.Ranks[0]][First].Loc;
    for (Field F : AllFields) {
      if (!effectUses(R.Shape.Kind, F))
        continue;
      std::vector<int32_t> Values = values(F, First, Steps);
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

  /// Runs for calls [Begin, End) of one shape: whole when it fits, else its
  /// longest fitting prefix (fitting is monotone: what fits a prefix fits
  /// every shorter one), and tables only for stretches where no two
  /// consecutive calls fit together.
  void splitSegment(int32_t Begin, int32_t End, std::vector<Run> &Runs) {
    while (Begin < End) {
      if (std::optional<Run> Whole = fit(Begin, End - Begin, false)) {
        Runs.push_back(std::move(*Whole));
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
      Runs.push_back(*fit(Begin, Length, true));
      Begin += Length;
    }
  }
};

} // namespace

std::optional<KernelStructure> analyzeKernel(const sched::Schedule &S, DiagnosticEngine &Diags) {
  KernelStructure K;
  for (const sched::RankProgram &RP : S.Ranks)
    for (const sched::ChannelProgram &CP : RP.Channels)
      for (const Step &St : CP.Steps) {
        if (sched::opSends(St.Op))
          K.MaxMessageChunks = std::max(K.MaxMessageChunks, St.sentSlice().Count);
        bool HasSrc = St.Op == OpKind::Send || St.Op == OpKind::Copy || St.Op == OpKind::Reduce;
        bool HasDst = St.Op != OpKind::Send;
        if ((HasSrc && St.Src.Buffer == BufferKind::Scratch) ||
            (HasDst && St.Dst.Buffer == BufferKind::Scratch))
          K.ScratchUnits = S.Units.Scratch;
      }

  // Calls[Channel][Rank].
  std::vector<std::vector<std::vector<Call>>> Calls(S.NChannels);
  for (int32_t H = 0; H < S.NChannels; ++H)
    for (int32_t R = 0; R < S.NRanks; ++R) {
      std::optional<std::vector<Call>> RankCalls =
          callsOf(S, H, S.Ranks[R].Channels[H].Steps, Diags);
      if (!RankCalls)
        return std::nullopt;
      Calls[H].push_back(std::move(*RankCalls));
    }

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
      Class.Runs = RunBuilder(S, Calls[H], Class, P).build();
    K.Programs.push_back(std::move(P));
  }
  return K;
}

} // namespace cclc::codegen
