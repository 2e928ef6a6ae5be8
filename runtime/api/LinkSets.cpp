//===- LinkSets.cpp - Transports shared by algorithms ---------------------===//

#include "runtime/api/LinkSets.h"

#include "common/Fifo.h"
#include "plan/Limits.h"
#include "runtime/api/Environment.h"
#include "runtime/api/Log.h"
#include "runtime/exec/Interpreter.h"

#include <algorithm>
#include <set>

namespace cclc::runtime {

LinkSet allLinks(int NRanks, int NChannels) {
  LinkSet Links;
  for (int From = 0; From < NRanks; ++From)
    for (int To = 0; To < NRanks; ++To)
      for (int Channel = 0; From != To && Channel < NChannels; ++Channel)
        Links.emplace(From, To, Channel);
  return Links;
}

bool someRankOnlySends(const LinkSet &Links) {
  std::set<int> Senders, Receivers;
  for (const auto &[From, To, Channel] : Links) {
    Senders.insert(From);
    Receivers.insert(To);
  }
  return std::ranges::any_of(Senders, [&](int R) { return !Receivers.count(R); });
}

net::LinkOptions linkOptionsFor(const kern::GridShape &Grid, int32_t BufferSlots) {
  net::LinkOptions Options;
  Options.NumSlots = std::max(Options.NumSlots, uint32_t(std::max(BufferSlots, 1)));
  for (size_t ElemBytes : {1, 2, 4, 8})
    Options.SlotBytes = std::max(Options.SlotBytes, exec::minSlotBytes(Grid, ElemBytes));
  // Whole lines of every line protocol (common/Protocol.h) fit a slot.
  constexpr size_t Line = kern::FifoAlignBytes;
  Options.SlotBytes = (Options.SlotBytes + Line - 1) / Line * Line;
  return Options;
}

net::LinkOptions hostLinkOptions(const net::LinkOptions &Options,
                                 const kern::ProgramShape &Shape,
                                 std::optional<uint64_t> MaxBytes) {
  constexpr size_t Line = kern::FifoAlignBytes;
  // A message is at most one of the call's buffers, and its trailer (the
  // size word and the flag) follows it.
  const uint64_t Units =
      uint64_t(std::max({Shape.InputUnits, Shape.OutputUnits, Shape.ScratchUnits}));
  if (!MaxBytes || *MaxBytes >= Options.SlotBytes / Units)
    return Options;
  const size_t Fitted = (*MaxBytes * Units + 2 * sizeof(uint64_t) + Line - 1) / Line * Line;
  size_t Least = 0;
  for (size_t ElemBytes : {1, 2, 4, 8})
    Least = std::max(Least, exec::minSlotBytes(Shape.Grid, ElemBytes));
  net::LinkOptions Deep = Options;
  Deep.SlotBytes = std::max(Fitted, (Least + Line - 1) / Line * Line);
  Deep.NumSlots = uint32_t(std::clamp<size_t>(Options.NumSlots * Options.SlotBytes / Deep.SlotBytes,
                                              Options.NumSlots, size_t(plan::MaxBufferSlots)));
  return Deep.SlotBytes < Options.SlotBytes ? Deep : Options;
}

bool covers(const LinkSet &Have, const net::LinkOptions &HaveOptions, const LinkSet &Need,
            const net::LinkOptions &NeedOptions) {
  return HaveOptions.NumSlots >= NeedOptions.NumSlots &&
         HaveOptions.SlotBytes >= NeedOptions.SlotBytes &&
         std::includes(Have.begin(), Have.end(), Need.begin(), Need.end());
}

RankLinks rankLinks(const LinkSet &Links, int Rank) {
  RankLinks Mine;
  for (const auto &[From, To, Channel] : Links) {
    if (From == Rank)
      Mine.Sends.push_back({To, Channel});
    if (To == Rank)
      Mine.Recvs.push_back({From, Channel});
  }
  return Mine;
}

LinkSets::LinkSets(net::Bootstrap &Boot)
    : ConnectionSets(Boot.rank(),
                     [this, &Boot](const RankLinks &Mine, const net::LinkOptions &Options) {
                       auto Net = std::make_unique<net::Connections>(
                           Boot, Mine.Sends, Mine.Recvs, Options, net::SetupScope::Collective,
                           &Boards);
                       logSingleCopy(*Net);
                       return Net;
                     }),
      Boot(Boot), Pairs(size_t(Boot.size()), nullptr), Info(debugInfoFromEnvironment()) {}

void LinkSets::logSingleCopy(const net::Connections &Net) {
  if (!Info)
    return;
  for (const auto &[Peer, How] : Net.singleCopy())
    if (Logged.insert(Peer).second)
      logLine("INFO", Boot.rank(), "to rank " + std::to_string(Peer) + ", " + How);
}

void LinkSets::connectPairs(std::span<const int> Peers) {
  std::vector<net::Link> Links;
  for (int Peer : Peers)
    Links.push_back({Peer, 0});
  net::Connections &Net = keep(std::make_unique<net::Connections>(
      Boot, Links, Links, net::LinkOptions{}, net::SetupScope::Pairs));
  logSingleCopy(Net);
  for (int Peer : Peers)
    Pairs[size_t(Peer)] = &Net;
}

} // namespace cclc::runtime
