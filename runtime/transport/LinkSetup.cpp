//===- LinkSetup.cpp - The steps every transport setup shares -------------===//

#include "runtime/transport/LinkSetup.h"

#include "runtime/transport/tcp/TcpTransport.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace cclc::net {

namespace {

/// Tags of the setup messages: the top bit marks them as the runtime's, the
/// next one as a pair's setup (whose sequence numbers count apart from the
/// collective ones), and the sequence keeps successive setups apart.
enum class SetupStep : uint32_t { Describe, DescribeLists, Attached };
uint32_t setupTag(SetupScope Scope, uint32_t Sequence, SetupStep Step) {
  return 0x80000000u | (Scope == SetupScope::Pairs ? 0x40000000u : 0) |
         (Sequence & 0xffffffu) << 4 | uint32_t(Step);
}

/// The tag of TCP socket Index of a setup: the sequence, then a bit for a
/// pair's setup above the index.
constexpr uint32_t MaxSockets = 64;
static_assert(MaxSockets <= 0x80u);
uint32_t socketTag(SetupScope Scope, uint32_t Sequence, uint32_t Index) {
  return (Sequence & 0xffffffu) << 8 | (Scope == SetupScope::Pairs ? 0x80u : 0) | Index;
}

/// The longest offer a same-host transport makes (a segment's name, a CUDA
/// IPC handle and its context).
constexpr uint32_t MaxOfferBytes = 256;

/// More channels than any plan has (NCCL has at most 64): a bound on what a
/// peer may describe before this rank receives its channel lists.
constexpr uint32_t MaxDescribedChannels = 4096;

/// Refuses a description from Peer whose rest would make this rank receive
/// more than any build and plan sends: checked before that rest is received,
/// so that a peer cannot make this rank allocate at will.
void checkBounds(int Peer, const Description &D) {
  if (D.Magic != DescriptionMagic)
    throw NetError(rankName(Peer) + " described its links in another format; the ranks run "
                                    "different builds");
  if (D.NumSends > MaxDescribedChannels || D.NumRecvs > MaxDescribedChannels)
    throw NetError(rankName(Peer) + " describes " + std::to_string(D.NumSends) + " and " +
                   std::to_string(D.NumRecvs) + " channels, more than the " +
                   std::to_string(MaxDescribedChannels) +
                   " any plan has; the ranks run different builds");
  if (D.OfferBytes > MaxOfferBytes)
    throw NetError(rankName(Peer) + " offers " + std::to_string(D.OfferBytes) +
                   " bytes of transport memory description, more than the " +
                   std::to_string(MaxOfferBytes) +
                   " any transport needs; the ranks run different builds");
}

/// Refuses what Peer described unless it fits what this rank expects from
/// it (P and Options): the transport, the FIFO shape, and as many channels
/// each way as this rank has the other way. Checked once the whole
/// description is received, so that both ranks of a disagreeing pair get
/// this far and both report it.
void checkAgreement(int Rank, int Peer, const Description &D, const PeerLinks &P,
                    const LinkOptions &Options) {
  std::string Pair = rankName(Rank) + " and " + rankName(Peer);
  if (D.Kind != P.Kind)
    throw NetError(Pair + " chose different transports (" + transportName(P.Kind) + " and " +
                   transportName(D.Kind) +
                   "); every rank must set CCLC_TRANSPORT alike and run its collectives on the "
                   "same kind of device (host or GPU)");
  if (D.NumSlots != Options.NumSlots || D.SlotBytes != Options.SlotBytes)
    throw NetError(Pair + " use FIFOs of different shapes (" + std::to_string(Options.NumSlots) +
                   " and " + std::to_string(D.NumSlots) + " slots of " +
                   std::to_string(Options.SlotBytes) + " and " + std::to_string(D.SlotBytes) +
                   " bytes); every rank must use the same");
  if (D.NumSends != P.Recvs.size() || D.NumRecvs != P.Sends.size())
    throw NetError(rankName(Peer) + " sends to " + rankName(Rank) + " on " +
                   std::to_string(D.NumSends) + " channels and receives on " +
                   std::to_string(D.NumRecvs) + ", but " + rankName(Rank) + " receives from it on " +
                   std::to_string(P.Recvs.size()) + " and sends on " +
                   std::to_string(P.Sends.size()) + "; the ranks run different plans");
}

std::string channelList(const std::vector<int> &Channels) {
  std::string Text = "{";
  for (int C : Channels)
    Text += (Text.size() > 1 ? ", " : "") + std::to_string(C);
  return Text + "}";
}

/// CCLC_NSOCKS_PERTHREAD: the TCP sockets per peer (NCCL's setting of that
/// name; the proxy is a single thread).
uint32_t socketsPerPeer() {
  const char *Env = std::getenv("CCLC_NSOCKS_PERTHREAD");
  if (!Env || !*Env)
    return 2;
  char *End = nullptr;
  long N = std::strtol(Env, &End, 10);
  if (*End || N < 1 || N > long(MaxSockets))
    throw NetError(std::string("CCLC_NSOCKS_PERTHREAD=") + Env + " is not a number in [1, " +
                   std::to_string(MaxSockets) + "]");
  return uint32_t(N);
}

bool sameHost(TransportKind Kind) { return Kind != TransportKind::Tcp; }

} // namespace

const char *transportName(TransportKind Kind) {
  switch (Kind) {
  case TransportKind::Shm:
    return "shm";
  case TransportKind::Tcp:
    return "tcp";
  case TransportKind::CudaIpc:
    return "cuda-ipc";
  }
  return "unknown";
}

TransportKind chooseTransport(const Bootstrap &B, int Peer, TransportKind SameHost) {
  bool OnHost = B.hostId(Peer) == B.hostId(B.rank());
  const char *Env = std::getenv("CCLC_TRANSPORT");
  if (!Env || !*Env)
    return OnHost ? SameHost : TransportKind::Tcp;
  if (std::strcmp(Env, "tcp") == 0)
    return TransportKind::Tcp;
  if (std::strcmp(Env, "shm") != 0)
    throw NetError(std::string("CCLC_TRANSPORT=") + Env + " is neither shm nor tcp");
  if (!OnHost)
    throw NetError("CCLC_TRANSPORT=shm, but " + rankName(Peer) + " runs on " + B.hostId(Peer) +
                   " and " + rankName(B.rank()) + " on " + B.hostId(B.rank()));
  return SameHost;
}

std::string rankName(int Rank) { return "rank " + std::to_string(Rank); }

void FailureCause::record(const std::string &Cause) {
  std::lock_guard<std::mutex> Guard(Lock);
  if (this->Cause.empty())
    this->Cause = Cause;
}

std::string FailureCause::get() const {
  std::lock_guard<std::mutex> Guard(Lock);
  return Cause;
}

LinkSetup::LinkSetup(Bootstrap &B, std::span<const Link> Sends, std::span<const Link> Recvs,
                     const LinkOptions &Options, TransportKind SameHost, SetupScope Scope)
    : B(B), Rank(B.rank()), Options(Options), Scope(Scope) {
  if (Options.NumSlots == 0 || Options.SlotBytes == 0)
    throw NetError("a FIFO needs at least one slot of at least one byte");
  auto Add = [&](const Link &L, bool Send) {
    if (L.Peer < 0 || L.Peer >= B.size() || L.Peer == Rank || L.Channel < 0)
      throw NetError(rankName(Rank) + " cannot link to " + rankName(L.Peer) + " on channel " +
                     std::to_string(L.Channel) + " in a job of " + std::to_string(B.size()) +
                     " ranks");
    PeerLinks &P = Peers[L.Peer];
    (Send ? P.Sends : P.Recvs).push_back(L.Channel);
  };
  for (const Link &L : Sends)
    Add(L, true);
  for (const Link &L : Recvs)
    Add(L, false);
  for (auto &[Peer, P] : Peers) {
    for (std::vector<int> *List : {&P.Sends, &P.Recvs}) {
      std::sort(List->begin(), List->end());
      List->erase(std::unique(List->begin(), List->end()), List->end());
    }
    P.Kind = chooseTransport(B, Peer, SameHost);
  }
  if (Scope == SetupScope::Collective) {
    uint32_t Sequence = B.nextSequence();
    for (auto &[Peer, P] : Peers)
      P.Sequence = Sequence;
  } else {
    for (auto &[Peer, P] : Peers)
      P.Sequence = B.nextPairSequence(Peer);
  }
}

std::map<int, TransportKind> LinkSetup::kinds() const {
  std::map<int, TransportKind> Kinds;
  for (const auto &[Peer, P] : Peers)
    Kinds[Peer] = P.Kind;
  return Kinds;
}

int LinkSetup::numChannels() const {
  int Channels = 0;
  for (const auto &[Peer, P] : Peers)
    for (const std::vector<int> *List : {&P.Sends, &P.Recvs})
      if (!List->empty())
        Channels = std::max(Channels, List->back() + 1);
  return Channels;
}

void LinkSetup::describe() {
  uint32_t NumSockets = socketsPerPeer();
  // Every rank sends its descriptions before it receives any: they are small
  // enough to wait in the socket buffers.
  for (auto &[Peer, P] : Peers) {
    Description D;
    D.Kind = P.Kind;
    D.NumSlots = Options.NumSlots;
    D.NumSockets = NumSockets;
    D.SlotBytes = Options.SlotBytes;
    D.NumSends = uint32_t(P.Sends.size());
    D.NumRecvs = uint32_t(P.Recvs.size());
    D.OfferBytes = uint32_t(P.Offer.size());
    std::vector<int32_t> Lists(P.Sends.begin(), P.Sends.end());
    Lists.insert(Lists.end(), P.Recvs.begin(), P.Recvs.end());
    std::vector<std::byte> Body(Lists.size() * sizeof(int32_t) + P.Offer.size());
    std::memcpy(Body.data(), Lists.data(), Lists.size() * sizeof(int32_t));
    std::memcpy(Body.data() + Lists.size() * sizeof(int32_t), P.Offer.data(), P.Offer.size());
    B.send(Peer, setupTag(Scope, P.Sequence, SetupStep::Describe), &D, sizeof D);
    B.send(Peer, setupTag(Scope, P.Sequence, SetupStep::DescribeLists), Body.data(), Body.size());
  }
  for (auto &[Peer, P] : Peers) {
    Description D;
    B.recv(Peer, setupTag(Scope, P.Sequence, SetupStep::Describe), &D, sizeof D);
    checkBounds(Peer, D);
    size_t NumChannels = size_t(D.NumSends) + D.NumRecvs;
    std::vector<std::byte> Body(NumChannels * sizeof(int32_t) + D.OfferBytes);
    B.recv(Peer, setupTag(Scope, P.Sequence, SetupStep::DescribeLists), Body.data(), Body.size());
    checkAgreement(Rank, Peer, D, P, Options);
    std::vector<int> Lists(NumChannels);
    std::memcpy(Lists.data(), Body.data(), NumChannels * sizeof(int32_t));
    std::vector<int> TheirSends(Lists.begin(), Lists.begin() + D.NumSends);
    std::vector<int> TheirRecvs(Lists.begin() + D.NumSends, Lists.end());
    if (TheirSends != P.Recvs || TheirRecvs != P.Sends)
      throw NetError(rankName(Peer) + " sends to " + rankName(Rank) + " on channels " +
                     channelList(TheirSends) + " and receives on " + channelList(TheirRecvs) +
                     ", but " + rankName(Rank) + " receives from it on " + channelList(P.Recvs) +
                     " and sends on " + channelList(P.Sends) + "; the ranks run different plans");
    P.PeerOffer.assign(reinterpret_cast<const char *>(Body.data()) + NumChannels * sizeof(int32_t),
                       D.OfferBytes);
    // The lower rank of the pair opens the sockets, as many as it wants.
    P.NumSockets = Rank < Peer ? NumSockets : D.NumSockets;
    if (P.NumSockets < 1 || P.NumSockets > MaxSockets)
      throw NetError(rankName(Peer) + " asks for " + std::to_string(P.NumSockets) +
                     " sockets; the ranks run different builds");
  }
}

void LinkSetup::attach(const PeerStep &Map, const PeerStep &Mapped) {
  for (auto &[Peer, P] : Peers) {
    if (!sameHost(P.Kind) || P.Sends.empty())
      continue;
    Map(Peer, P);
    uint8_t Attached = 1;
    B.send(Peer, setupTag(Scope, P.Sequence, SetupStep::Attached), &Attached, sizeof Attached);
  }
  for (auto &[Peer, P] : Peers) {
    if (!sameHost(P.Kind) || P.Recvs.empty())
      continue;
    uint8_t Attached = 0;
    B.recv(Peer, setupTag(Scope, P.Sequence, SetupStep::Attached), &Attached, sizeof Attached);
    if (Mapped)
      Mapped(Peer, P);
  }
}

std::unique_ptr<TcpProxy> LinkSetup::connectTcp(const FifoMaker &NewFifo,
                                                const std::atomic<uint32_t> &Abort,
                                                std::function<void(const std::string &)> Fail,
                                                const std::atomic<uint32_t> *Busy,
                                                std::function<std::string()> Cause) {
  std::vector<TcpPeer> TcpPeers;
  for (auto &[Peer, P] : Peers) {
    if (P.Kind != TransportKind::Tcp)
      continue;
    TcpPeer &T = TcpPeers.emplace_back();
    T.Peer = Peer;
    for (int Channel : P.Sends)
      T.Sends.emplace_back(Channel, NewFifo(Peer, Channel, /*Send=*/true));
    for (int Channel : P.Recvs)
      T.Recvs.emplace_back(Channel, NewFifo(Peer, Channel, /*Send=*/false));
  }
  if (TcpPeers.empty())
    return nullptr;
  // Lower ranks connect and higher ones accept. Every rank connects before it
  // accepts, which cannot deadlock: a connection completes in the listener's
  // backlog.
  for (TcpPeer &T : TcpPeers)
    if (Rank < T.Peer)
      for (uint32_t I = 0; I < Peers[T.Peer].NumSockets; ++I)
        T.Sockets.push_back(B.connectTo(T.Peer, socketTag(Scope, Peers[T.Peer].Sequence, I)));
  for (TcpPeer &T : TcpPeers)
    if (Rank > T.Peer)
      for (uint32_t I = 0; I < Peers[T.Peer].NumSockets; ++I)
        T.Sockets.push_back(B.acceptFrom(T.Peer, socketTag(Scope, Peers[T.Peer].Sequence, I)));
  return std::make_unique<TcpProxy>(Rank, std::move(TcpPeers), Abort, std::move(Fail), B.timeout(),
                                    Busy, std::move(Cause));
}

} // namespace cclc::net
