//===- MscclImport.cpp - MSCCL-IR XML into a schedule ---------------------===//

#include "compiler/import/MscclImport.h"
#include "compiler/emit/MscclXml.h"
#include "plan/Limits.h"

#include <pugixml.hpp>

#include <algorithm>
#include <charconv>
#include <deque>
#include <limits>
#include <map>
#include <set>
#include <tuple>

namespace cclc::importer {

using sched::BufferKind;
using sched::OpKind;
using sched::Slice;
using sched::Step;

namespace {

/// What an MSCCL step type does with its tb's peers and its two slices.
struct TypeInfo {
  const char *Name;
  bool Sends, Receives, UsesSrc, UsesDst;
};
constexpr TypeInfo Types[] = {
    {"nop", false, false, false, false}, {"s", true, false, true, false},
    {"r", false, true, false, true},     {"rcs", true, true, false, true},
    {"rrs", true, true, true, false},    {"rrc", false, true, true, true},
    {"rrcs", true, true, true, true},    {"cpy", false, false, true, true},
    {"re", false, false, true, true},
};

struct XmlStep {
  const TypeInfo *Type = nullptr;
  Slice Src, Dst;
  int32_t Count = 0;
  int32_t DepTb = -1, DepStep = -1; ///< DepTb is an index into the gpu's tbs.
  SourceLoc Loc;                    ///< The <step> element.
  SourceLoc StepLoc;                ///< What the imported steps point at.
  int32_t ExecIndex = -1;           ///< Order the simulation ran it in, per gpu.
};

struct XmlTb {
  int32_t Id = 0, Send = -1, Recv = -1, Chan = 0;
  std::vector<XmlStep> Steps;
  size_t Next = 0; ///< Steps run so far.
};

struct Message {
  int32_t Count;
  int32_t Gpu, Tb, Step;
};

class Importer {
public:
  Importer(uint32_t FileId, SourceManager &SM, DiagnosticEngine &Diags)
      : FileId(FileId), SM(SM), Diags(Diags) {}
  std::optional<plan::Plan> run();

private:
  SourceLoc locOf(pugi::xml_node N) const {
    return SM.locForOffset(FileId, N.offset_debug() < 0 ? 0 : size_t(N.offset_debug()));
  }
  bool fail(pugi::xml_node N, const std::string &Msg) {
    Diags.error(locOf(N), "<" + std::string(N.name()) + ">: " + Msg);
    return false;
  }
  bool integer(pugi::xml_node N, const char *Name, int64_t Min, int64_t Max, int64_t &Out,
               const std::string &Range = "", bool Required = true);
  bool int32(pugi::xml_node N, const char *Name, int64_t Min, int64_t Max, int32_t &Out,
             const std::string &Range = "", bool Required = true) {
    int64_t V = Out;
    if (!integer(N, Name, Min, Max, V, Range, Required))
      return false;
    Out = int32_t(V);
    return true;
  }
  bool algo(pugi::xml_node A);
  bool extras(pugi::xml_node A);
  bool grid(pugi::xml_node A);
  bool gpu(pugi::xml_node G);
  bool step(pugi::xml_node N, const XmlTb &Tb, XmlStep &Out);
  bool slice(pugi::xml_node N, const char *Buf, const char *Off, int32_t Count, Slice &Out);
  bool resolveDeps(int32_t Gpu, std::vector<std::pair<pugi::xml_node, int32_t>> &DepIds);
  bool simulate();
  void execute(int32_t Gpu, int32_t T);
  bool dependsOn(int32_t Gpu, std::pair<int32_t, int32_t> Later,
                 std::pair<int32_t, int32_t> Earlier) const;
  void markExchanges();

  uint32_t FileId;
  SourceManager &SM;
  DiagnosticEngine &Diags;
  plan::Plan Result;
  sched::Schedule &S = Result.Sched;
  std::optional<uint32_t> SourceFile;
  std::vector<std::vector<XmlTb>> Gpus;
  std::vector<int32_t> IChunks, OChunks, SChunks;
  /// (channel, from, to) -> messages in flight.
  std::map<std::tuple<int32_t, int32_t, int32_t>, std::deque<Message>> Queues;
  /// Per gpu and channel, the (tb, step) each imported step came from.
  std::vector<std::vector<std::vector<std::pair<int32_t, int32_t>>>> Origin;
  std::vector<int32_t> Executed;
};

bool Importer::integer(pugi::xml_node N, const char *Name, int64_t Min, int64_t Max,
                       int64_t &Out, const std::string &Range, bool Required) {
  pugi::xml_attribute A = N.attribute(Name);
  if (!A) {
    if (Required)
      return fail(N, std::string("missing attribute '") + Name + "'");
    return true;
  }
  std::string_view Text = A.value();
  int64_t V = 0;
  auto [End, Err] = std::from_chars(Text.data(), Text.data() + Text.size(), V);
  std::string Shown = std::string(Name) + "=\"" + std::string(Text) + "\"";
  if (Text.empty() || Err != std::errc() || End != Text.data() + Text.size())
    return fail(N, Shown + " is not an integer");
  if (V < Min || V > Max)
    return fail(N, Shown + ": " + std::to_string(V) + " " +
                       (Range.empty() ? "is not in [" + std::to_string(Min) + ", " +
                                            std::to_string(Max) + "]"
                                      : Range));
  Out = V;
  return true;
}

using plan::MaxGrid;

bool Importer::algo(pugi::xml_node A) {
  S.Algorithm = A.attribute("name").value();
  if (S.Algorithm.empty())
    return fail(A, "missing attribute 'name'");
  std::string Coll = A.attribute("coll").value();
  bool Known = false;
  for (plan::CollectiveKind K :
       {plan::CollectiveKind::AllReduce, plan::CollectiveKind::AllGather,
        plan::CollectiveKind::ReduceScatter, plan::CollectiveKind::Broadcast,
        plan::CollectiveKind::Reduce, plan::CollectiveKind::AllToAll})
    if (emit::mscclCollectiveName(K) == Coll) {
      S.Collective = K;
      Known = true;
    }
  if (!Known)
    return fail(A, "coll=\"" + Coll + "\" is not a collective cclc runs");
  if (pugi::xml_attribute P = A.attribute("proto")) {
    std::string_view Proto = P.value();
    if (Proto != "Simple" && Proto != "LL" && Proto != "LL128")
      return fail(A, "proto=\"" + std::string(Proto) + "\" is not Simple, LL or LL128");
  }
  int32_t InPlace = 0, OutOfPlace = -1;
  int64_t MinBytes = 0, MaxBytes = -1;
  constexpr int64_t Max64 = std::numeric_limits<int64_t>::max();
  if (!int32(A, "ngpus", 1, plan::MaxRanks, S.NRanks) ||
      !int32(A, "nchannels", 1, plan::MaxChannels, S.NChannels) ||
      !int32(A, "inplace", 0, 1, InPlace, "", false) ||
      !int32(A, "outofplace", 0, 1, OutOfPlace, "", false) ||
      !integer(A, "minBytes", 0, Max64, MinBytes, "", false) ||
      !integer(A, "maxBytes", MinBytes, Max64, MaxBytes, "is less than minBytes", false))
    return false;
  // The import makes a program for every (gpu, channel) before it reads
  // them: the file must not ask for more than a plan may have.
  if (int64_t(S.NRanks) * S.NChannels > plan::MaxRankChannels)
    return fail(A, "ngpus * nchannels = " + std::to_string(int64_t(S.NRanks) * S.NChannels) +
                       " channel programs is more than " +
                       std::to_string(plan::MaxRankChannels));
  if (OutOfPlace == 0 || (OutOfPlace < 0 && InPlace == 1))
    return fail(A, "in-place-only algorithms are not supported: cclc schedules read the input "
                   "buffer and write the output buffer (the algorithm needs outofplace=\"1\")");
  Result.Info.MinBytes = uint64_t(MinBytes);
  if (MaxBytes >= 0 && MaxBytes != Max64)
    Result.Info.MaxBytes = uint64_t(MaxBytes);
  S.Units = sched::bufferUnits(S.Collective, S.NRanks);
  return true;
}

/// The <cclc> element: what cclc's own export adds beyond MSCCL-IR.
bool Importer::extras(pugi::xml_node A) {
  S.Remap.resize(S.NRanks);
  for (int32_t R = 0; R < S.NRanks; ++R)
    S.Remap[R] = R;
  pugi::xml_node E = A.child("cclc");
  if (!E)
    return true;
  std::string NotRank = "is not a gpu (algo has " + std::to_string(S.NRanks) + " gpus)";
  if (!int32(E, "root", 0, S.NRanks - 1, S.Root, NotRank, false) ||
      !int32(E, "slots", 1, plan::MaxBufferSlots, S.BufferSlots,
             "is not in [1, " + std::to_string(plan::MaxBufferSlots) +
                 "] (the most messages a connection buffers)",
             false))
    return false;
  if (pugi::xml_attribute T = E.attribute("topology")) {
    std::optional<plan::TopologyKind> Kind = plan::parseTopology(T.value());
    if (!Kind)
      return fail(E, "topology=\"" + std::string(T.value()) + "\" is not none, ring or tree");
    S.Topology = *Kind;
  }
  if (pugi::xml_attribute R = E.attribute("remap")) {
    std::string_view Text = R.value();
    std::vector<bool> Seen(S.NRanks);
    S.Remap.clear();
    for (size_t I = 0; I < Text.size();) {
      size_t End = Text.find(' ', I);
      std::string_view Item = Text.substr(I, End == std::string_view::npos ? End : End - I);
      int32_t P = -1;
      auto [Ptr, Err] = std::from_chars(Item.data(), Item.data() + Item.size(), P);
      if (Err != std::errc() || Ptr != Item.data() + Item.size() || P < 0 || P >= S.NRanks ||
          Seen[P])
        return fail(E, "remap=\"" + std::string(Text) + "\": \"" + std::string(Item) +
                           "\" is not an unused gpu; remap must be a permutation of 0.." +
                           std::to_string(S.NRanks - 1));
      Seen[P] = true;
      S.Remap.push_back(P);
      I = End == std::string_view::npos ? Text.size() : End + 1;
    }
    if (S.Remap.size() != size_t(S.NRanks))
      return fail(E, "remap has " + std::to_string(S.Remap.size()) + " entries (algo has " +
                         std::to_string(S.NRanks) + " gpus)");
  }
  if (pugi::xml_attribute Src = E.attribute("source"))
    Result.Info.Source = Src.value();
  return true;
}

/// Fits the gpus' chunk counts to the collective's grid.
bool Importer::grid(pugi::xml_node A) {
  int32_t In = IChunks[0], Out = OChunks[0];
  for (pugi::xml_node G : A.children("gpu")) {
    int32_t Id = G.attribute("id").as_int();
    if (IChunks[Id] != In || OChunks[Id] != Out)
      return fail(G, "i_chunks=" + std::to_string(IChunks[Id]) + " o_chunks=" +
                         std::to_string(OChunks[Id]) + " differ from gpu 0's (" +
                         std::to_string(In) + ", " + std::to_string(Out) +
                         "); cclc gives every rank the same buffers");
  }
  std::string For = std::string(A.attribute("coll").value()) + " on " +
                    std::to_string(S.NRanks) + " gpus";
  if (Out % S.Units.Output != 0 || Out == 0)
    return fail(A, "o_chunks=" + std::to_string(Out) + " is not a multiple of " +
                       std::to_string(S.Units.Output) + ", as " + For + " needs");
  int32_t PerUnit = Out / S.Units.Output;
  if (In != PerUnit * S.Units.Input)
    return fail(A, "i_chunks=" + std::to_string(In) + " does not fit o_chunks=" +
                       std::to_string(Out) + ": " + For + " needs i_chunks=" +
                       std::to_string(PerUnit * S.Units.Input));
  int32_t Loop = 0;
  if (!int32(A, "nchunksperloop", std::max(In, Out), std::max(In, Out), Loop,
             "does not match the larger of i_chunks and o_chunks (" +
                 std::to_string(std::max(In, Out)) + ")"))
    return false;
  if (PerUnit % S.NChannels != 0)
    return fail(A, std::to_string(PerUnit) + " chunks per unit do not divide among nchannels=" +
                       std::to_string(S.NChannels) + " channels");
  S.ChunksPerChannel = PerUnit / S.NChannels;
  int32_t Scratch = *std::max_element(SChunks.begin(), SChunks.end());
  if (Scratch > 0)
    S.Units.Scratch = (Scratch + PerUnit - 1) / PerUnit;
  return true;
}

bool Importer::slice(pugi::xml_node N, const char *Buf, const char *Off, int32_t Count,
                     Slice &Out) {
  std::string_view Letter = N.attribute(Buf).value();
  if (Letter == "i")
    Out.Buffer = BufferKind::Input;
  else if (Letter == "o")
    Out.Buffer = BufferKind::Output;
  else if (Letter == "s")
    Out.Buffer = BufferKind::Scratch;
  else
    return fail(N, std::string(Buf) + "=\"" + std::string(Letter) +
                       "\" is not a buffer (i, o or s)");
  int32_t Size = S.bufferChunks(Out.Buffer);
  Out.Count = Count;
  return int32(N, Off, 0, Size - Count, Out.Chunk,
               "with cnt=" + std::to_string(Count) + " runs past the end of " +
                   std::string(sched::bufferName(Out.Buffer)) + " (" + std::to_string(Size) +
                   " chunks)");
}

bool Importer::step(pugi::xml_node N, const XmlTb &Tb, XmlStep &Out) {
  std::string_view Type = N.attribute("type").value();
  for (const TypeInfo &T : Types)
    if (Type == T.Name)
      Out.Type = &T;
  if (!Out.Type)
    return fail(N, "type=\"" + std::string(Type) +
                       "\" is not a step type cclc runs (nop, s, r, rcs, rrs, rrc, rrcs, cpy, re)");
  Out.Loc = Out.StepLoc = locOf(N);
  if (Out.Type->Sends && Tb.Send < 0)
    return fail(N, "a '" + std::string(Type) + "' step sends, but its tb has send=\"-1\"");
  if (Out.Type->Receives && Tb.Recv < 0)
    return fail(N, "a '" + std::string(Type) + "' step receives, but its tb has recv=\"-1\"");
  if (std::string_view(Out.Type->Name) != "nop" &&
      (!int32(N, "cnt", 1, MaxGrid, Out.Count) ||
       (Out.Type->UsesSrc && !slice(N, "srcbuf", "srcoff", Out.Count, Out.Src)) ||
       (Out.Type->UsesDst && !slice(N, "dstbuf", "dstoff", Out.Count, Out.Dst))))
    return false;
  if (N.attribute("line")) {
    int32_t Line = 0, Col = 1;
    constexpr int64_t MaxPos = std::numeric_limits<int32_t>::max();
    if (!int32(N, "line", 1, MaxPos, Line) || !int32(N, "col", 1, MaxPos, Col, "", false))
      return false;
    if (!SourceFile)
      SourceFile = plan::recordedSourceFile(
          SM, Result.Info.Source.empty() ? "<unknown source>" : Result.Info.Source);
    Out.StepLoc = SourceLoc{*SourceFile, uint32_t(Line), uint32_t(Col)};
  }
  return true;
}

bool Importer::gpu(pugi::xml_node G) {
  int32_t Id = 0;
  std::string NotGpu = "is not a gpu (algo has " + std::to_string(S.NRanks) + " gpus)";
  if (!int32(G, "id", 0, S.NRanks - 1, Id, NotGpu))
    return false;
  if (!Origin[Id].empty())
    return fail(G, "gpu " + std::to_string(Id) + " appears twice");
  Origin[Id].resize(S.NChannels);
  if (!int32(G, "i_chunks", 0, MaxGrid, IChunks[Id]) ||
      !int32(G, "o_chunks", 1, MaxGrid, OChunks[Id]) ||
      !int32(G, "s_chunks", 0, MaxGrid, SChunks[Id]))
    return false;
  return true;
}

/// Turns depid (a tb id) into an index and checks deps names a step of it.
bool Importer::resolveDeps(int32_t Gpu, std::vector<std::pair<pugi::xml_node, int32_t>> &DepIds) {
  std::vector<XmlTb> &Tbs = Gpus[Gpu];
  size_t K = 0;
  for (XmlTb &Tb : Tbs)
    for (XmlStep &St : Tb.Steps) {
      auto [Node, DepId] = DepIds[K++];
      if (DepId < 0)
        continue;
      int32_t Index = -1;
      for (int32_t T = 0; T < int32_t(Tbs.size()); ++T)
        if (Tbs[T].Id == DepId)
          Index = T;
      if (Index < 0)
        return fail(Node, "depid=\"" + std::to_string(DepId) + "\" is not a tb of gpu " +
                              std::to_string(Gpu));
      if (Tbs[Index].Chan != Tb.Chan)
        return fail(Node, "depends on tb " + std::to_string(DepId) + " of channel " +
                              std::to_string(Tbs[Index].Chan) + "; cclc runs channels "
                              "independently and cannot order steps across them");
      if (!int32(Node, "deps", 0, int64_t(Tbs[Index].Steps.size()) - 1, St.DepStep,
                 "is not a step of tb " + std::to_string(DepId) + " (it has " +
                     std::to_string(Tbs[Index].Steps.size()) + " steps)"))
        return false;
      St.DepTb = Index;
    }
  return true;
}

/// Runs one step of tb T on gpu Gpu, appending what it does to the channel.
void Importer::execute(int32_t Gpu, int32_t T) {
  XmlTb &Tb = Gpus[Gpu][T];
  int32_t Index = int32_t(Tb.Next++);
  XmlStep &X = Tb.Steps[Index];
  X.ExecIndex = Executed[Gpu]++;
  const TypeInfo &Ty = *X.Type;
  if (Ty.Receives)
    Queues[{Tb.Chan, Tb.Recv, Gpu}].pop_front();
  if (Ty.Sends)
    Queues[{Tb.Chan, Gpu, Tb.Send}].push_back({X.Count, Gpu, T, Index});
  if (std::string_view(Ty.Name) == "nop")
    return;
  std::vector<Step> &Out = S.Ranks[Gpu].Channels[Tb.Chan].Steps;
  auto Emit = [&](OpKind Op) -> Step & {
    Step &St = Out.emplace_back();
    St.Op = Op;
    St.Loc = X.StepLoc;
    Origin[Gpu][Tb.Chan].push_back({T, Index});
    return St;
  };
  std::string_view Name = Ty.Name;
  // rrc with src and dst apart is recv_reduce_copy; rrcs leaves src +
  // received in dst and sends it on: a copy first when they differ.
  if (Name == "rrc" && !(X.Src == X.Dst)) {
    Step &St = Emit(OpKind::RecvReduceCopy);
    St.Peer = Tb.Recv;
    St.Src = X.Src;
    St.Dst = X.Dst;
    return;
  }
  if (Ty.UsesSrc && Ty.UsesDst && Ty.Receives && !(X.Src == X.Dst)) {
    Step &C = Emit(OpKind::Copy);
    C.Src = X.Src;
    C.Dst = X.Dst;
  }
  if (Name == "s" || Name == "cpy" || Name == "re") {
    Step &St = Emit(Name == "s" ? OpKind::Send : Name == "cpy" ? OpKind::Copy : OpKind::Reduce);
    St.Src = X.Src;
    if (Name == "s")
      St.Peer = Tb.Send;
    else
      St.Dst = X.Dst;
    return;
  }
  OpKind Op = Name == "r"     ? OpKind::Recv
              : Name == "rrc" ? OpKind::RecvReduce
              : Name == "rcs" ? OpKind::RecvCopySend
                              : OpKind::RecvReduceSend;
  Step &St = Emit(Op);
  St.Peer = Tb.Recv;
  St.Dst = Ty.UsesDst ? X.Dst : X.Src;
  if (Ty.Sends)
    St.SendPeer = Tb.Send;
}

bool Importer::simulate() {
  auto Ready = [&](int32_t G, int32_t T) {
    const XmlTb &Tb = Gpus[G][T];
    if (Tb.Next == Tb.Steps.size())
      return false;
    const XmlStep &X = Tb.Steps[Tb.Next];
    if (X.DepTb >= 0 && Gpus[G][X.DepTb].Next <= size_t(X.DepStep))
      return false;
    if (!X.Type->Receives)
      return true;
    auto It = Queues.find({Tb.Chan, Tb.Recv, G});
    return It != Queues.end() && !It->second.empty();
  };
  // Rounds over the gpus in order, each running at most one step of every
  // gpu that has one ready. A gpu's readiness changes only when it runs a
  // step or is sent a message, so each round visits only the gpus such an
  // event touched (a message to a later gpu is seen in the same round, to an
  // earlier one in the next): the order is that of visiting every gpu every
  // round, without its cost, quadratic in the gpus for a long chain.
  std::set<int32_t> Round, NextRound;
  for (int32_t G = 0; G < S.NRanks; ++G)
    Round.insert(G);
  while (!Round.empty()) {
    for (auto It = Round.begin(); It != Round.end(); It = Round.erase(It)) {
      int32_t G = *It;
      int32_t Pick = -1;
      for (int32_t T = 0; T < int32_t(Gpus[G].size()) && Pick < 0; ++T)
        if (Ready(G, T) && !Gpus[G][T].Steps[Gpus[G][T].Next].Type->Receives)
          Pick = T;
      for (int32_t T = 0; T < int32_t(Gpus[G].size()) && Pick < 0; ++T)
        if (Ready(G, T))
          Pick = T;
      if (Pick < 0)
        continue;
      XmlTb &Tb = Gpus[G][Pick];
      const XmlStep &X = Tb.Steps[Tb.Next];
      if (X.Type->Receives) {
        const Message &M = Queues[{Tb.Chan, Tb.Recv, G}].front();
        if (M.Count != X.Count) {
          Diags.error(X.Loc, "<step>: receives " + std::to_string(X.Count) +
                                 " chunks, but the message from gpu " + std::to_string(M.Gpu) +
                                 " it takes has " + std::to_string(M.Count));
          Diags.note(Gpus[M.Gpu][M.Tb].Steps[M.Step].Loc, "the matching send");
          return false;
        }
      }
      int32_t To = X.Type->Sends ? Tb.Send : -1;
      execute(G, Pick);
      NextRound.insert(G);
      if (To >= 0)
        (To > G ? Round : NextRound).insert(To);
    }
    std::swap(Round, NextRound);
  }
  for (int32_t G = 0; G < S.NRanks; ++G)
    for (const XmlTb &Tb : Gpus[G]) {
      if (Tb.Next == Tb.Steps.size())
        continue;
      const XmlStep &X = Tb.Steps[Tb.Next];
      std::string Why =
          X.DepTb >= 0 && Gpus[G][X.DepTb].Next <= size_t(X.DepStep)
              ? "it waits for step " + std::to_string(X.DepStep) + " of tb " +
                    std::to_string(Gpus[G][X.DepTb].Id) + ", which never runs"
              : "it waits for a message from gpu " + std::to_string(Tb.Recv) +
                    " on channel " + std::to_string(Tb.Chan) + " that is never sent";
      Diags.error(X.Loc, "<step>: the algorithm deadlocks at gpu " + std::to_string(G) +
                             " tb " + std::to_string(Tb.Id) + " step " +
                             std::to_string(Tb.Next) + ": " + Why);
      return false;
    }
  for (const auto &[Conn, Pending] : Queues)
    if (!Pending.empty()) {
      const Message &M = Pending.front();
      Diags.error(Gpus[M.Gpu][M.Tb].Steps[M.Step].Loc,
                  "<step>: gpu " + std::to_string(M.Gpu) + " sends to gpu " +
                      std::to_string(std::get<2>(Conn)) + " on channel " +
                      std::to_string(std::get<0>(Conn)) + ", but no step receives it");
      return false;
    }
  return true;
}

/// True when step Later of gpu Gpu waits, directly or not, for Earlier.
bool Importer::dependsOn(int32_t Gpu, std::pair<int32_t, int32_t> Later,
                         std::pair<int32_t, int32_t> Earlier) const {
  const std::vector<XmlTb> &Tbs = Gpus[Gpu];
  int32_t Floor = Tbs[Earlier.first].Steps[Earlier.second].ExecIndex;
  std::vector<std::pair<int32_t, int32_t>> Work{Later};
  std::map<std::pair<int32_t, int32_t>, bool> Seen;
  while (!Work.empty()) {
    auto [T, I] = Work.back();
    Work.pop_back();
    if (std::make_pair(T, I) == Earlier)
      return true;
    if (Seen[{T, I}] || Tbs[T].Steps[I].ExecIndex < Floor)
      continue;
    Seen[{T, I}] = true;
    if (I > 0)
      Work.push_back({T, I - 1});
    if (Tbs[T].Steps[I].DepTb >= 0)
      Work.push_back({Tbs[T].Steps[I].DepTb, Tbs[T].Steps[I].DepStep});
  }
  return false;
}

void Importer::markExchanges() {
  for (int32_t G = 0; G < S.NRanks; ++G)
    for (int32_t C = 0; C < S.NChannels; ++C) {
      std::vector<Step> &Steps = S.Ranks[G].Channels[C].Steps;
      const auto &From = Origin[G][C];
      for (size_t K = 0; K + 1 < Steps.size(); ++K)
        Steps[K].WithNext = Steps[K].Op == OpKind::Send &&
                            (Steps[K + 1].Op == OpKind::Recv ||
                             Steps[K + 1].Op == OpKind::RecvReduce ||
                             Steps[K + 1].Op == OpKind::RecvReduceCopy) &&
                            From[K] != From[K + 1] &&
                            !dependsOn(G, From[K + 1], From[K]);
    }
}

std::optional<plan::Plan> Importer::run() {
  std::string_view Text = SM.getText(FileId);
  pugi::xml_document Doc;
  pugi::xml_parse_result Parsed = Doc.load_buffer(Text.data(), Text.size());
  if (!Parsed) {
    Diags.error(SM.locForOffset(FileId, size_t(Parsed.offset)),
                std::string("invalid XML: ") + Parsed.description());
    return std::nullopt;
  }
  pugi::xml_node A = Doc.document_element();
  if (std::string_view(A.name()) != "algo") {
    Diags.error(A ? locOf(A) : SM.locForOffset(FileId, 0),
                "not an MSCCL-IR algorithm: the top element must be <algo>");
    return std::nullopt;
  }
  if (!algo(A) || !extras(A))
    return std::nullopt;
  Origin.assign(S.NRanks, {});
  IChunks.assign(S.NRanks, 0);
  OChunks.assign(S.NRanks, 0);
  SChunks.assign(S.NRanks, 0);
  for (pugi::xml_node G : A.children("gpu"))
    if (!gpu(G))
      return std::nullopt;
  for (int32_t R = 0; R < S.NRanks; ++R)
    if (Origin[R].empty()) {
      fail(A, "has no <gpu id=\"" + std::to_string(R) + "\">");
      return std::nullopt;
    }
  if (!grid(A))
    return std::nullopt;

  Gpus.assign(S.NRanks, {});
  Executed.assign(S.NRanks, 0);
  S.Ranks.resize(S.NRanks);
  for (int32_t L = 0; L < S.NRanks; ++L)
    S.Ranks[S.Remap[L]].LogicalRank = L;
  for (sched::RankProgram &R : S.Ranks)
    R.Channels.resize(S.NChannels);
  for (pugi::xml_node G : A.children("gpu")) {
    int32_t Id = G.attribute("id").as_int();
    std::vector<std::pair<pugi::xml_node, int32_t>> DepIds;
    std::string NotPeer = "is not another gpu (algo has " + std::to_string(S.NRanks) + " gpus)";
    for (pugi::xml_node TbNode : G.children("tb")) {
      XmlTb &Tb = Gpus[Id].emplace_back();
      if (!int32(TbNode, "id", 0, MaxGrid, Tb.Id) ||
          !int32(TbNode, "send", -1, S.NRanks - 1, Tb.Send, NotPeer) ||
          !int32(TbNode, "recv", -1, S.NRanks - 1, Tb.Recv, NotPeer) ||
          !int32(TbNode, "chan", 0, S.NChannels - 1, Tb.Chan,
                 "is not a channel (algo has nchannels=" + std::to_string(S.NChannels) + ")"))
        return std::nullopt;
      if (Tb.Send == Id || Tb.Recv == Id) {
        fail(TbNode, "a tb of gpu " + std::to_string(Id) + " cannot talk to gpu " +
                         std::to_string(Id));
        return std::nullopt;
      }
      for (size_t T = 0; T + 1 < Gpus[Id].size(); ++T)
        if (Gpus[Id][T].Id == Tb.Id) {
          fail(TbNode, "tb id " + std::to_string(Tb.Id) + " appears twice on gpu " +
                           std::to_string(Id));
          return std::nullopt;
        }
      for (pugi::xml_node N : TbNode.children("step")) {
        XmlStep &X = Tb.Steps.emplace_back();
        int32_t Index = -1, DepId = -1;
        if (!int32(N, "s", int64_t(Tb.Steps.size()) - 1, int64_t(Tb.Steps.size()) - 1, Index,
                   "is out of order (steps of a tb are numbered 0, 1, 2, ...)") ||
            !step(N, Tb, X) || !int32(N, "depid", -1, MaxGrid, DepId, "", false))
          return std::nullopt;
        DepIds.push_back({N, DepId});
      }
    }
    if (!resolveDeps(Id, DepIds))
      return std::nullopt;
  }
  if (!simulate())
    return std::nullopt;
  markExchanges();
  return std::move(Result);
}

} // namespace

std::optional<plan::Plan> readMscclXml(uint32_t FileId, SourceManager &SM,
                                       DiagnosticEngine &Diags) {
  return Importer(FileId, SM, Diags).run();
}

} // namespace cclc::importer
