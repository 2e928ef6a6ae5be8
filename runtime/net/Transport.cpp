//===- Transport.cpp - A rank's connections to its peers ------------------===//

#include "runtime/net/Transport.h"

#include "runtime/net/ShmTransport.h"
#include "runtime/net/TcpTransport.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace cclc::net {

namespace {

/// Tags of the setup messages: the top bit marks them as the runtime's, the
/// sequence keeps successive setups apart.
enum class SetupStep : uint32_t { Describe, DescribeLists, Attached };
uint32_t setupTag(uint32_t Sequence, SetupStep Step) {
  return 0x80000000u | (Sequence & 0xffffffu) << 4 | uint32_t(Step);
}

/// The tag of TCP socket Index of a setup.
constexpr uint32_t MaxSockets = 64;
uint32_t socketTag(uint32_t Sequence, uint32_t Index) {
  return (Sequence & 0xffffffu) << 8 | Index;
}

/// "cclclink" and a version.
constexpr uint32_t DescriptionMagic = 0x6c'6e'6b'01u;

/// What a rank tells each peer about the links between them; the channel
/// lists and the shared-memory segment's name follow it.
struct Description {
  uint32_t Magic = DescriptionMagic;
  TransportKind Kind = TransportKind::Shm;
  uint32_t NumSlots = 0;
  uint32_t NumSockets = 0;
  uint64_t SlotBytes = 0;
  uint32_t NumSends = 0;
  uint32_t NumRecvs = 0;
  uint32_t NameBytes = 0;
  uint32_t Reserved = 0;
};

std::string rankName(int Rank) { return "rank " + std::to_string(Rank); }

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

} // namespace

const char *transportName(TransportKind Kind) { return Kind == TransportKind::Shm ? "shm" : "tcp"; }

TransportKind chooseTransport(const Bootstrap &B, int Peer) {
  bool SameHost = B.hostId(Peer) == B.hostId(B.rank());
  const char *Env = std::getenv("CCLC_TRANSPORT");
  if (!Env || !*Env)
    return SameHost ? TransportKind::Shm : TransportKind::Tcp;
  if (std::strcmp(Env, "tcp") == 0)
    return TransportKind::Tcp;
  if (std::strcmp(Env, "shm") != 0)
    throw NetError(std::string("CCLC_TRANSPORT=") + Env + " is neither shm nor tcp");
  if (!SameHost)
    throw NetError("CCLC_TRANSPORT=shm, but " + rankName(Peer) + " runs on " + B.hostId(Peer) +
                   " and " + rankName(B.rank()) + " on " + B.hostId(B.rank()));
  return TransportKind::Shm;
}

/// What this rank and one peer use between them.
struct Connections::PeerPlan {
  TransportKind Kind = TransportKind::Shm;
  std::vector<int> Sends, Recvs; ///< Channels, sorted.
  ShmSegment *Created = nullptr; ///< The segment this rank receives in.
  std::string PeerSegment;       ///< The segment this rank sends in.
  uint32_t NumSockets = 0;
};

Connections::Connections(Bootstrap &B, std::span<const Link> Sends, std::span<const Link> Recvs,
                         const LinkOptions &Options)
    : Rank(B.rank()), Timeout(B.timeout()) {
  if (Options.NumSlots == 0 || Options.SlotBytes == 0)
    throw NetError("a FIFO needs at least one slot of at least one byte");
  Plans Peers;
  auto Add = [&](const Link &L, bool Send) {
    if (L.Peer < 0 || L.Peer >= B.size() || L.Peer == Rank || L.Channel < 0)
      throw NetError(rankName(Rank) + " cannot link to " + rankName(L.Peer) + " on channel " +
                     std::to_string(L.Channel) + " in a job of " + std::to_string(B.size()) +
                     " ranks");
    PeerPlan &P = Peers[L.Peer];
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
    P.Kind = chooseTransport(B, Peer);
    Kinds[Peer] = P.Kind;
  }
  uint32_t Sequence = B.nextSequence();
  createSegments(Peers, Options);
  describe(B, Peers, Sequence, Options);
  attachSegments(B, Peers, Sequence, Options);
  connectTcp(B, Peers, Sequence, Options);
}

Connections::~Connections() { Proxy.reset(); }

const host::Waiter *Connections::addWaiter(const std::atomic<uint32_t> &Abort) {
  return &Waiters.emplace_back(host::Waiter{&Abort, Timeout});
}

host::Fifo Connections::newLocalFifo(const LinkOptions &Options) {
  size_t Bytes = host::Fifo::bytesFor(Options.NumSlots, Options.SlotBytes);
  auto &Mem = LocalFifos.emplace_back(new CacheLine[(Bytes + 63) / 64]);
  return host::Fifo::place(Mem.get(), Options.NumSlots, Options.SlotBytes, /*Init=*/true);
}

void Connections::createSegments(Plans &Peers, const LinkOptions &Options) {
  for (auto &[Peer, P] : Peers) {
    if (P.Kind != TransportKind::Shm || P.Recvs.empty())
      continue;
    P.Created = Segments
                    .emplace_back(ShmSegment::create(ShmSegment::uniqueName(Rank, Peer),
                                                     uint32_t(P.Recvs.size()), Options.NumSlots,
                                                     Options.SlotBytes))
                    .get();
    const host::Waiter *W = addWaiter(P.Created->abortWord());
    for (uint32_t I = 0; I < P.Recvs.size(); ++I)
      Ins[{Peer, P.Recvs[I]}] = host::Inbox{P.Created->fifo(I), Peer, W};
  }
}

void Connections::describe(Bootstrap &B, Plans &Peers, uint32_t Sequence,
                           const LinkOptions &Options) {
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
    std::string Name = P.Created ? P.Created->name() : "";
    D.NameBytes = uint32_t(Name.size());
    std::vector<int32_t> Lists(P.Sends.begin(), P.Sends.end());
    Lists.insert(Lists.end(), P.Recvs.begin(), P.Recvs.end());
    std::vector<std::byte> Body(Lists.size() * sizeof(int32_t) + Name.size());
    std::memcpy(Body.data(), Lists.data(), Lists.size() * sizeof(int32_t));
    std::memcpy(Body.data() + Lists.size() * sizeof(int32_t), Name.data(), Name.size());
    B.send(Peer, setupTag(Sequence, SetupStep::Describe), &D, sizeof D);
    B.send(Peer, setupTag(Sequence, SetupStep::DescribeLists), Body.data(), Body.size());
  }
  for (auto &[Peer, P] : Peers) {
    Description D;
    B.recv(Peer, setupTag(Sequence, SetupStep::Describe), &D, sizeof D);
    if (D.Magic != DescriptionMagic)
      throw NetError(rankName(Peer) + " described its links in another format; the ranks run "
                                      "different builds");
    size_t NumChannels = size_t(D.NumSends) + D.NumRecvs;
    std::vector<std::byte> Body(NumChannels * sizeof(int32_t) + D.NameBytes);
    B.recv(Peer, setupTag(Sequence, SetupStep::DescribeLists), Body.data(), Body.size());
    std::vector<int> Lists(NumChannels);
    std::memcpy(Lists.data(), Body.data(), NumChannels * sizeof(int32_t));
    std::vector<int> TheirSends(Lists.begin(), Lists.begin() + D.NumSends);
    std::vector<int> TheirRecvs(Lists.begin() + D.NumSends, Lists.end());
    std::string Pair = rankName(Rank) + " and " + rankName(Peer);
    if (D.Kind != P.Kind)
      throw NetError(Pair + " chose different transports (" + transportName(P.Kind) + " and " +
                     transportName(D.Kind) + "); set CCLC_TRANSPORT alike on every rank");
    if (D.NumSlots != Options.NumSlots || D.SlotBytes != Options.SlotBytes)
      throw NetError(Pair + " use FIFOs of different shapes (" + std::to_string(Options.NumSlots) +
                     " and " + std::to_string(D.NumSlots) + " slots of " +
                     std::to_string(Options.SlotBytes) + " and " + std::to_string(D.SlotBytes) +
                     " bytes); every rank must use the same");
    if (TheirSends != P.Recvs || TheirRecvs != P.Sends)
      throw NetError(rankName(Peer) + " sends to " + rankName(Rank) + " on channels " +
                     channelList(TheirSends) + " and receives on " + channelList(TheirRecvs) +
                     ", but " + rankName(Rank) + " receives from it on " + channelList(P.Recvs) +
                     " and sends on " + channelList(P.Sends) + "; the ranks run different plans");
    P.PeerSegment.assign(
        reinterpret_cast<const char *>(Body.data()) + NumChannels * sizeof(int32_t), D.NameBytes);
    // The lower rank of the pair opens the sockets, as many as it wants.
    P.NumSockets = Rank < Peer ? NumSockets : D.NumSockets;
    if (P.NumSockets < 1 || P.NumSockets > MaxSockets)
      throw NetError(rankName(Peer) + " asks for " + std::to_string(P.NumSockets) +
                     " sockets; the ranks run different builds");
  }
}

void Connections::attachSegments(Bootstrap &B, Plans &Peers, uint32_t Sequence,
                                 const LinkOptions &Options) {
  for (auto &[Peer, P] : Peers) {
    if (P.Kind != TransportKind::Shm || P.Sends.empty())
      continue;
    ShmSegment &Seg = *Segments.emplace_back(ShmSegment::attach(
        P.PeerSegment, uint32_t(P.Sends.size()), Options.NumSlots, Options.SlotBytes));
    const host::Waiter *W = addWaiter(Seg.abortWord());
    for (uint32_t I = 0; I < P.Sends.size(); ++I)
      Outs[{Peer, P.Sends[I]}] = host::Outbox{Seg.fifo(I), Peer, W};
    uint8_t Attached = 1;
    B.send(Peer, setupTag(Sequence, SetupStep::Attached), &Attached, sizeof Attached);
  }
  // Both sides have mapped the segment: its name is no longer needed.
  for (auto &[Peer, P] : Peers) {
    if (!P.Created)
      continue;
    uint8_t Attached = 0;
    B.recv(Peer, setupTag(Sequence, SetupStep::Attached), &Attached, sizeof Attached);
    P.Created->unlink();
  }
}

void Connections::connectTcp(Bootstrap &B, Plans &Peers, uint32_t Sequence,
                             const LinkOptions &Options) {
  std::vector<TcpPeer> TcpPeers;
  const host::Waiter *W = nullptr;
  for (auto &[Peer, P] : Peers) {
    if (P.Kind != TransportKind::Tcp)
      continue;
    if (!W)
      W = addWaiter(LocalAbort);
    TcpPeer &T = TcpPeers.emplace_back();
    T.Peer = Peer;
    for (int Channel : P.Sends) {
      host::Fifo Q = newLocalFifo(Options);
      T.Sends.emplace_back(Channel, Q);
      Outs[{Peer, Channel}] = host::Outbox{Q, Peer, W};
    }
    for (int Channel : P.Recvs) {
      host::Fifo Q = newLocalFifo(Options);
      T.Recvs.emplace_back(Channel, Q);
      Ins[{Peer, Channel}] = host::Inbox{Q, Peer, W};
    }
  }
  if (TcpPeers.empty())
    return;
  // Lower ranks connect and higher ones accept. Every rank connects before it
  // accepts, which cannot deadlock: a connection completes in the listener's
  // backlog.
  for (TcpPeer &T : TcpPeers)
    if (Rank < T.Peer)
      for (uint32_t I = 0; I < Peers[T.Peer].NumSockets; ++I)
        T.Sockets.push_back(B.connectTo(T.Peer, socketTag(Sequence, I)));
  for (TcpPeer &T : TcpPeers)
    if (Rank > T.Peer)
      for (uint32_t I = 0; I < Peers[T.Peer].NumSockets; ++I)
        T.Sockets.push_back(B.acceptFrom(T.Peer, socketTag(Sequence, I)));
  Proxy = std::make_unique<TcpProxy>(
      Rank, std::move(TcpPeers), LocalAbort, [this](const std::string &Cause) { abort(Cause); },
      Timeout);
}

host::Outbox &Connections::out(int Peer, int Channel) {
  auto It = Outs.find({Peer, Channel});
  if (It == Outs.end())
    throw NetError(rankName(Rank) + " has no link to send to " + rankName(Peer) + " on channel " +
                   std::to_string(Channel) + "; the plan's link list omits it");
  return It->second;
}

host::Inbox &Connections::in(int Peer, int Channel) {
  auto It = Ins.find({Peer, Channel});
  if (It == Ins.end())
    throw NetError(rankName(Rank) + " has no link to receive from " + rankName(Peer) +
                   " on channel " + std::to_string(Channel) + "; the plan's link list omits it");
  return It->second;
}

TransportKind Connections::transport(int Peer) const {
  auto It = Kinds.find(Peer);
  if (It == Kinds.end())
    throw NetError(rankName(Rank) + " has no link with " + rankName(Peer));
  return It->second;
}

void Connections::abort(const std::string &Cause) {
  {
    std::lock_guard<std::mutex> Lock(FailureLock);
    if (Failure.empty())
      Failure = Cause;
  }
  LocalAbort.store(1, std::memory_order_release);
  for (auto &Seg : Segments) {
    uint32_t Clear = 0;
    Seg->abortWord().compare_exchange_strong(Clear, uint32_t(Rank + 1));
  }
}

std::string Connections::failure() const {
  std::lock_guard<std::mutex> Lock(FailureLock);
  if (!Failure.empty())
    return Failure;
  for (const auto &Seg : Segments)
    if (uint32_t Word = Seg->abortWord().load(std::memory_order_acquire))
      return rankName(int(Word) - 1) + " aborted";
  return {};
}

} // namespace cclc::net
