//===- MscclXml.cpp - MSCCL-IR XML export ---------------------------------===//

#include "compiler/emit/MscclXml.h"
#include "plan/MessageMatch.h"
#include "plan/Assert.h"

#include <pugixml.hpp>

#include <algorithm>
#include <limits>
#include <map>
#include <numeric>
#include <ostream>

namespace cclc::emit {

using sched::OpKind;
using sched::Slice;
using sched::Step;

std::string_view mscclCollectiveName(plan::CollectiveKind Kind) {
  return Kind == plan::CollectiveKind::ReduceScatter ? "reducescatter" : plan::collectiveName(Kind);
}

namespace {

/// MSCCL's step type for each operation. Receive-reduce writes its result in
/// place, which MSCCL says as rrc (dst = src + received) and rrcs with the
/// source equal to the destination; recv_reduce_copy is rrc itself.
const char *mscclType(OpKind Op) {
  switch (Op) {
  case OpKind::Send: return "s";
  case OpKind::Recv: return "r";
  case OpKind::RecvReduce: return "rrc";
  case OpKind::Copy: return "cpy";
  case OpKind::Reduce: return "re";
  case OpKind::RecvReduceSend: return "rrcs";
  case OpKind::RecvCopySend: return "rcs";
  case OpKind::RecvReduceCopy: return "rrc";
  case OpKind::Exchange:
  case OpKind::ExchangeReduce: break;
  }
  CCLC_UNREACHABLE("unknown op");
}

struct XmlStep {
  const char *Type = "nop";
  /// The step of the schedule, null for a nop carrying a dependency.
  const Step *Source = nullptr;
  plan::StepRef Ref;
  int32_t DepTb = -1, DepStep = -1;
  bool HasDep = false;
};

struct Threadblock {
  int32_t Chan = 0, Send = -1, Recv = -1;
  std::vector<XmlStep> Steps;
};

/// One rank's tbs, built channel by channel.
class RankExport {
public:
  RankExport(const sched::Schedule &S, int32_t Rank, DiagnosticEngine &Diags)
      : S(S), Rank(Rank), Diags(Diags) {}
  bool assign();
  void addSteps();
  void write(pugi::xml_node Gpu, const plan::MessageMatch &Match) const;

private:
  bool assignChannel(int32_t C);
  int32_t tbFor(int32_t C, int32_t Send, int32_t Recv);

  const sched::Schedule &S;
  int32_t Rank;
  DiagnosticEngine &Diags;
  std::vector<Threadblock> Tbs;
  /// TbOf[channel][step]: the tb running each step.
  std::vector<std::vector<int32_t>> TbOf;
};

int32_t RankExport::tbFor(int32_t C, int32_t Send, int32_t Recv) {
  for (int32_t T = 0; T < int32_t(Tbs.size()); ++T)
    if (Tbs[T].Chan == C && Tbs[T].Send == Send && Tbs[T].Recv == Recv)
      return T;
  Tbs.push_back({C, Send, Recv, {}});
  return int32_t(Tbs.size()) - 1;
}

/// Every connection of channel C must live in one tb: a fused step ties its
/// receive peer's tb to its send peer's.
bool RankExport::assignChannel(int32_t C) {
  const std::vector<Step> &Steps = S.Ranks[Rank].Channels[C].Steps;
  std::map<int32_t, int32_t> SendPartner, RecvPartner; // fused pairings
  for (const Step &St : Steps) {
    if (St.Op != OpKind::RecvReduceSend && St.Op != OpKind::RecvCopySend)
      continue;
    auto [SIt, SNew] = SendPartner.emplace(St.SendPeer, St.Peer);
    auto [RIt, RNew] = RecvPartner.emplace(St.Peer, St.SendPeer);
    if (SIt->second != St.Peer || RIt->second != St.SendPeer) {
      Diags.error(St.Loc, "MSCCL-IR cannot express rank " + std::to_string(Rank) + " channel " +
                              std::to_string(C) +
                              ": fused steps tie its connections to ranks " +
                              std::to_string(St.Peer) + " and " + std::to_string(St.SendPeer) +
                              " to different threadblocks");
      return false;
    }
  }
  std::vector<int32_t> &Assigned = TbOf[C];
  for (const Step &St : Steps) {
    int32_t Send = -1, Recv = -1;
    if (sched::opSends(St.Op))
      Send = St.sendTarget();
    if (sched::opReceives(St.Op))
      Recv = St.Peer;
    if (Send >= 0 && Recv < 0 && SendPartner.count(Send))
      Recv = SendPartner[Send];
    if (Recv >= 0 && Send < 0 && RecvPartner.count(Recv))
      Send = RecvPartner[Recv];
    Assigned.push_back(tbFor(C, Send, Recv));
  }
  for (size_t I = 0; I + 1 < Steps.size(); ++I)
    if (Steps[I].WithNext && Assigned[I] == Assigned[I + 1]) {
      Diags.error(Steps[I].Loc, "MSCCL-IR cannot express rank " + std::to_string(Rank) +
                                    " channel " + std::to_string(C) + " step " +
                                    std::to_string(I) +
                                    ": it runs together with the next step, but both need "
                                    "the same threadblock");
      return false;
    }
  return true;
}

bool RankExport::assign() {
  TbOf.resize(S.Ranks[Rank].Channels.size());
  for (int32_t C = 0; C < int32_t(TbOf.size()); ++C)
    if (!assignChannel(C))
      return false;
  // MSCCL orders tbs by peers, then channel, so that tbs sharing a link are
  // neighbours; renumber to match.
  std::vector<int32_t> Order(Tbs.size());
  std::iota(Order.begin(), Order.end(), 0);
  std::stable_sort(Order.begin(), Order.end(), [&](int32_t A, int32_t B) {
    return std::tie(Tbs[A].Send, Tbs[A].Recv, Tbs[A].Chan) <
           std::tie(Tbs[B].Send, Tbs[B].Recv, Tbs[B].Chan);
  });
  std::vector<int32_t> NewId(Tbs.size());
  std::vector<Threadblock> Sorted;
  for (int32_t T : Order) {
    NewId[T] = int32_t(Sorted.size());
    Sorted.push_back(Tbs[T]);
  }
  Tbs = std::move(Sorted);
  for (std::vector<int32_t> &Channel : TbOf)
    for (int32_t &T : Channel)
      T = NewId[T];
  return true;
}

/// Program order becomes dependencies: steps run in groups (a step and the
/// ones WithNext joins to it), and each step waits for every step of the
/// group before, unless its own tb already runs that one first.
void RankExport::addSteps() {
  for (int32_t C = 0; C < int32_t(TbOf.size()); ++C) {
    const std::vector<Step> &Steps = S.Ranks[Rank].Channels[C].Steps;
    std::vector<std::pair<int32_t, int32_t>> XmlPos(Steps.size()); // (tb, xml step)
    std::vector<std::vector<std::pair<int32_t, int32_t>>> Waited(Tbs.size());
    size_t GroupBegin = 0, PrevGroupBegin = 0;
    for (size_t I = 0; I < Steps.size(); ++I) {
      if (I > 0 && !Steps[I - 1].WithNext) {
        PrevGroupBegin = GroupBegin;
        GroupBegin = I;
      }
      int32_t T = TbOf[C][I];
      std::vector<std::pair<int32_t, int32_t>> Deps;
      for (size_t D = PrevGroupBegin; D < GroupBegin; ++D) {
        std::pair<int32_t, int32_t> Dep = XmlPos[D];
        bool Implied = Dep.first == T ||
                       std::find(Waited[T].begin(), Waited[T].end(), Dep) != Waited[T].end();
        if (!Implied) {
          Deps.push_back(Dep);
          Waited[T].push_back(Dep);
        }
      }
      std::vector<XmlStep> &Out = Tbs[T].Steps;
      for (size_t D = 0; D < Deps.size(); ++D) {
        XmlStep &X = Out.emplace_back();
        if (D + 1 == Deps.size()) {
          X.Type = mscclType(Steps[I].Op);
          X.Source = &Steps[I];
          X.Ref = {Rank, C, int32_t(I)};
        }
        std::tie(X.DepTb, X.DepStep) = Deps[D];
        Tbs[Deps[D].first].Steps[Deps[D].second].HasDep = true;
      }
      if (Deps.empty())
        Out.push_back({mscclType(Steps[I].Op), &Steps[I], {Rank, C, int32_t(I)}});
      XmlPos[I] = {T, int32_t(Out.size()) - 1};
    }
  }
}

void setSlice(pugi::xml_node Node, const char *Buf, const char *Off, const Slice *S) {
  Node.append_attribute(Buf) = std::string(1, S ? sched::bufferLetter(S->Buffer) : 'o').c_str();
  Node.append_attribute(Off) = S ? S->Chunk : -1;
}

void RankExport::write(pugi::xml_node Gpu, const plan::MessageMatch &Match) const {
  for (int32_t T = 0; T < int32_t(Tbs.size()); ++T) {
    const Threadblock &Tb = Tbs[T];
    pugi::xml_node TbNode = Gpu.append_child("tb");
    TbNode.append_attribute("id") = T;
    TbNode.append_attribute("send") = Tb.Send;
    TbNode.append_attribute("recv") = Tb.Recv;
    TbNode.append_attribute("chan") = Tb.Chan;
    for (int32_t I = 0; I < int32_t(Tb.Steps.size()); ++I) {
      const XmlStep &X = Tb.Steps[I];
      pugi::xml_node N = TbNode.append_child("step");
      N.append_attribute("s") = I;
      N.append_attribute("type") = X.Type;
      // The remote end of a message, as MSCCL-IR records it.
      auto Remote = [&](std::optional<plan::StepRef> Other, bool Sent) -> const Slice * {
        if (!Other)
          return nullptr;
        const Step &O = S.Ranks[Other->Rank].Channels[Other->Channel].Steps[Other->Index];
        return Sent ? &O.sentSlice() : &O.Dst;
      };
      const Slice *Src = nullptr, *Dst = nullptr;
      int32_t Count = 0;
      if (const Step *St = X.Source) {
        switch (St->Op) {
        case OpKind::Send:
          Src = &St->Src;
          Dst = Remote(Match.receiverOf(X.Ref), false);
          break;
        case OpKind::Recv:
        case OpKind::RecvCopySend:
          Src = Remote(Match.senderOf(X.Ref), true);
          Dst = &St->Dst;
          break;
        case OpKind::Copy:
        case OpKind::Reduce:
        case OpKind::RecvReduceCopy:
          Src = &St->Src;
          Dst = &St->Dst;
          break;
        case OpKind::RecvReduce:
        case OpKind::RecvReduceSend:
          Src = Dst = &St->Dst;
          break;
        case OpKind::Exchange:
        case OpKind::ExchangeReduce: CCLC_UNREACHABLE("a schedule step is never an exchange");
        }
        Count = St->Op == OpKind::Send ? St->Src.Count : St->Dst.Count;
      }
      setSlice(N, "srcbuf", "srcoff", Src);
      setSlice(N, "dstbuf", "dstoff", Dst);
      N.append_attribute("cnt") = Count;
      N.append_attribute("depid") = X.DepTb;
      N.append_attribute("deps") = X.DepStep;
      N.append_attribute("hasdep") = X.HasDep ? 1 : 0;
      if (X.Source && X.Source->Loc.isValid()) {
        N.append_attribute("line") = X.Source->Loc.Line;
        N.append_attribute("col") = X.Source->Loc.Col;
      }
    }
  }
}

} // namespace

bool writeMscclXml(const sched::Schedule &S, const plan::PlanInfo &Info, std::ostream &OS,
                   DiagnosticEngine &Diags) {
  for (const sched::RankProgram &R : S.Ranks)
    for (const sched::ChannelProgram &C : R.Channels)
      for (const Step &St : C.Steps)
        if ((St.Op == OpKind::Copy || St.Op == OpKind::Reduce) && St.Src.Count != St.Dst.Count) {
          Diags.error(St.Loc, "MSCCL-IR cannot express a " + std::string(sched::opName(St.Op)) +
                                  " of " + std::to_string(St.Src.Count) + " chunks into " +
                                  std::to_string(St.Dst.Count));
          return false;
        }
  std::vector<RankExport> Ranks;
  for (int32_t R = 0; R < int32_t(S.Ranks.size()); ++R) {
    Ranks.emplace_back(S, R, Diags);
    if (!Ranks.back().assign())
      return false;
    Ranks.back().addSteps();
  }

  pugi::xml_document Doc;
  pugi::xml_node Algo = Doc.append_child("algo");
  int32_t In = S.bufferChunks(sched::BufferKind::Input);
  int32_t Out = S.bufferChunks(sched::BufferKind::Output);
  Algo.append_attribute("name") = S.Algorithm.c_str();
  Algo.append_attribute("proto") = "Simple";
  Algo.append_attribute("nchannels") = S.NChannels;
  Algo.append_attribute("nchunksperloop") = std::max(In, Out);
  Algo.append_attribute("ngpus") = S.NRanks;
  Algo.append_attribute("coll") = std::string(mscclCollectiveName(S.Collective)).c_str();
  Algo.append_attribute("inplace") = 0;
  Algo.append_attribute("outofplace") = 1;
  Algo.append_attribute("minBytes") = static_cast<long long>(Info.MinBytes);
  Algo.append_attribute("maxBytes") = static_cast<long long>(
      Info.MaxBytes.value_or(std::numeric_limits<long long>::max()));

  pugi::xml_node Extra = Algo.append_child("cclc");
  if (!Info.Source.empty())
    Extra.append_attribute("source") = Info.Source.c_str();
  Extra.append_attribute("topology") = std::string(plan::topologyName(S.Topology)).c_str();
  Extra.append_attribute("root") = S.Root;
  Extra.append_attribute("slots") = S.BufferSlots;
  std::string Remap;
  for (int32_t P : S.Remap)
    Remap += (Remap.empty() ? "" : " ") + std::to_string(P);
  Extra.append_attribute("remap") = Remap.c_str();

  plan::MessageMatch Match(S);
  for (int32_t R = 0; R < int32_t(S.Ranks.size()); ++R) {
    pugi::xml_node Gpu = Algo.append_child("gpu");
    Gpu.append_attribute("id") = R;
    Gpu.append_attribute("i_chunks") = In;
    Gpu.append_attribute("o_chunks") = Out;
    Gpu.append_attribute("s_chunks") = S.bufferChunks(sched::BufferKind::Scratch);
    Ranks[R].write(Gpu, Match);
  }
  // MSCCL's own XML reader does not accept an <?xml ...?> declaration.
  Doc.save(OS, "  ", pugi::format_indent | pugi::format_no_declaration);
  return true;
}

} // namespace cclc::emit
