//===- LinkSets.cpp - Transports shared by algorithms ---------------------===//

#include "runtime/api/LinkSets.h"

#include "runtime/exec/Interpreter.h"

#include <algorithm>

namespace cclc::runtime {

LinkSet linksOf(const sched::Schedule &S) {
  LinkSet Links;
  for (int32_t Rank = 0; Rank < S.NRanks; ++Rank) {
    const sched::RankProgram &Program = S.Ranks[size_t(Rank)];
    for (size_t Channel = 0; Channel < Program.Channels.size(); ++Channel)
      for (const sched::Step &St : Program.Channels[Channel].Steps) {
        if (sched::opSends(St.Op))
          Links.emplace(Rank, St.sendTarget(), int(Channel));
        if (sched::opReceives(St.Op))
          Links.emplace(St.Peer, Rank, int(Channel));
      }
  }
  return Links;
}

LinkSet allLinks(int NRanks, int NChannels) {
  LinkSet Links;
  for (int From = 0; From < NRanks; ++From)
    for (int To = 0; To < NRanks; ++To)
      for (int Channel = 0; From != To && Channel < NChannels; ++Channel)
        Links.emplace(From, To, Channel);
  return Links;
}

net::LinkOptions linkOptionsFor(const kern::GridShape &Grid, int32_t BufferSlots) {
  net::LinkOptions Options;
  Options.NumSlots = std::max(Options.NumSlots, uint32_t(std::max(BufferSlots, 1)));
  for (size_t ElemBytes : {1, 2, 4, 8})
    Options.SlotBytes = std::max(Options.SlotBytes, exec::minSlotBytes(Grid, ElemBytes));
  return Options;
}

const LinkSets::Set &LinkSets::connect(const LinkSet &Links, const net::LinkOptions &Options) {
  std::unique_lock<std::mutex> Guard(Lock);
  for (Set &S : Sets)
    if (S.Options.NumSlots >= Options.NumSlots && S.Options.SlotBytes >= Options.SlotBytes &&
        std::includes(S.Links.begin(), S.Links.end(), Links.begin(), Links.end()))
      return S;
  int Rank = Boot.rank();
  std::vector<net::Link> Sends, Recvs;
  for (const auto &[From, To, Channel] : Links) {
    if (From == Rank)
      Sends.push_back({To, Channel});
    if (To == Rank)
      Recvs.push_back({From, Channel});
  }
  // Connecting waits for the peers; abort() reaches it through the bootstrap.
  Guard.unlock();
  auto Net = std::make_unique<net::Connections>(Boot, Sends, Recvs, Options);
  Guard.lock();
  return Sets.emplace_back(Set{Links, Options, std::move(Net)});
}

void LinkSets::abort(const std::string &Cause) {
  std::lock_guard<std::mutex> Guard(Lock);
  for (Set &S : Sets)
    S.Net->abort(Cause);
}

std::string LinkSets::failure() const {
  std::lock_guard<std::mutex> Guard(Lock);
  for (const Set &S : Sets)
    if (std::string Cause = S.Net->failure(); !Cause.empty())
      return Cause;
  return {};
}

} // namespace cclc::runtime
