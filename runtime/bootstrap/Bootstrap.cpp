//===- Bootstrap.cpp - How the ranks of a job find each other -------------===//

#include "runtime/bootstrap/Bootstrap.h"

#include <cstdio>
#include <cstring>
#include <exception>
#include <fstream>
#include <random>
#include <unistd.h>

namespace cclc::net {

namespace {

/// "cclcid" and a format version, so that a garbled id is caught.
constexpr uint64_t IdMagic = 0x01'00'64'69'63'6c'63'63ull;

struct IdContents {
  uint64_t Magic;
  uint64_t Secret;
  SocketAddress Root;
};
static_assert(sizeof(IdContents) <= sizeof(UniqueId));

/// The root's answer to a registration.
enum class RootStatus : uint32_t {
  Ready,   ///< Every rank registered; Next is the successor's address.
  Missing, ///< The root gave up; NumMissing ranks never came, FirstMissing among them.
  Refused, ///< The rank registered twice, or with another rank count.
};
struct RootReply {
  RootStatus Status = RootStatus::Refused;
  int32_t FirstMissing = -1;
  int32_t NumMissing = 0;
  SocketAddress Next;
};

/// What the ring allgather of init spreads: where each rank listens, and the
/// host it runs on.
struct RankInfo {
  SocketAddress Listen;
  char Host[160];
};

/// The host's name and boot id: processes of one boot of one host (and
/// mount namespace) can share POSIX shared memory.
std::string hostIdentity() {
  char Name[256] = {};
  ::gethostname(Name, sizeof Name - 1);
  std::string Boot;
  std::ifstream("/proc/sys/kernel/random/boot_id") >> Boot;
  return std::string(Name) + "/" + Boot;
}

std::string rankName(int Rank) { return "rank " + std::to_string(Rank); }

} // namespace

UniqueId makeUniqueId(const SocketAddress &Root, uint64_t Secret) {
  UniqueId Id{};
  IdContents C{IdMagic, Secret, Root};
  std::memcpy(Id.Bytes, &C, sizeof C);
  return Id;
}

uint64_t randomSecret() {
  std::random_device Device;
  return uint64_t(Device()) << 32 | Device();
}

//===----------------------------------------------------------------------===//
// The root
//===----------------------------------------------------------------------===//

Root::Root(const SocketAddress &Bind, const SocketAddress &Advertise, uint64_t Secret,
           std::chrono::milliseconds Timeout)
    : Listen(Bind), Secret(Secret), Timeout(Timeout) {
  SocketAddress At = Advertise;
  if (At.port() == 0)
    At.setPort(Listen.address().port());
  Id = makeUniqueId(At, Secret);
  Thread = std::thread([this] {
    // Whatever stops the root (memory, descriptors) is logged: the ranks
    // see their connections close and report it.
    try {
      serve();
    } catch (const std::exception &E) {
      std::fprintf(stderr, "cclc: bootstrap root: stopped: %s\n", E.what());
    }
    Done.store(true, std::memory_order_release);
  });
}

Root::~Root() {
  Stop.store(1, std::memory_order_relaxed);
  Thread.join();
}

void Root::serve() {
  struct Member {
    Socket S;
    SocketAddress Listen;
  };
  std::vector<Member> Members;
  int NRanks = 0, Registered = 0;
  Deadline Wait = Deadline::forever(&Stop);
  auto Answer = [&](Socket &S, const RootReply &Reply) {
    try {
      S.sendAll(&Reply, sizeof Reply, Deadline(Timeout), "answer a registration");
    } catch (const NetError &E) {
      std::fprintf(stderr, "cclc: bootstrap root: %s\n", E.what());
    }
  };
  try {
    while (NRanks == 0 || Registered < NRanks) {
      Listener::Accepted A = Listen.accept(Secret, Wait, "hear from every rank of the job");
      const Hello &H = A.H;
      std::string Problem;
      if (H.Kind != HelloKind::Register || H.NRanks < 1 || H.Rank < 0 || H.Rank >= H.NRanks)
        Problem = "it is not a rank registering";
      else if (H.NRanks > MaxRanks)
        Problem = "it registers a job of " + std::to_string(H.NRanks) + " ranks; the most is " +
                  std::to_string(MaxRanks);
      else if (NRanks && H.NRanks != NRanks)
        Problem = "it registers " + rankName(H.Rank) + " of " + std::to_string(H.NRanks) +
                  " ranks, but the job has " + std::to_string(NRanks);
      else if (NRanks && Members[size_t(H.Rank)].S)
        Problem = rankName(H.Rank) + " has registered already";
      SocketAddress RankListen;
      if (Problem.empty()) {
        try {
          A.S.recvAll(&RankListen, sizeof RankListen, Deadline(Timeout, &Stop),
                      "receive the address of " + rankName(H.Rank));
        } catch (const NetError &E) {
          Problem = E.what();
        }
      }
      if (!Problem.empty()) {
        logRefusal(A.From, Problem);
        Answer(A.S, RootReply{});
        continue;
      }
      if (NRanks == 0) {
        NRanks = H.NRanks;
        Members.resize(size_t(NRanks));
        Wait = Deadline(Timeout, &Stop);
      }
      Members[size_t(H.Rank)] = {std::move(A.S), RankListen};
      ++Registered;
    }
  } catch (const NetError &) {
    if (Stop.load(std::memory_order_relaxed))
      return;
    // Timed out: tell the ranks that came which ones did not.
    RootReply Reply;
    Reply.Status = RootStatus::Missing;
    for (int R = NRanks - 1; R >= 0; --R)
      if (!Members[size_t(R)].S) {
        Reply.FirstMissing = R;
        ++Reply.NumMissing;
      }
    std::fprintf(stderr,
                 "cclc: bootstrap root: gave up after %lld ms: %d of %d ranks never registered "
                 "(rank %d among them)\n",
                 static_cast<long long>(Timeout.count()), Reply.NumMissing, NRanks,
                 Reply.FirstMissing);
    for (Member &M : Members)
      if (M.S)
        Answer(M.S, Reply);
    return;
  }
  for (int R = 0; R < NRanks; ++R) {
    RootReply Reply;
    Reply.Status = RootStatus::Ready;
    Reply.Next = Members[size_t((R + 1) % NRanks)].Listen;
    Answer(Members[size_t(R)].S, Reply);
  }
}

std::unique_ptr<Root> createRoot(std::chrono::milliseconds Timeout) {
  SocketAddress Here = findInterface().Addr;
  return std::make_unique<Root>(Here, Here, randomSecret(), Timeout);
}

//===----------------------------------------------------------------------===//
// A rank
//===----------------------------------------------------------------------===//

std::unique_ptr<Bootstrap> Bootstrap::init(const UniqueId &Id, int Rank, int NRanks,
                                           std::chrono::milliseconds Timeout) {
  return std::unique_ptr<Bootstrap>(new Bootstrap(Id, Rank, NRanks, Timeout));
}

Bootstrap::Bootstrap(const UniqueId &Id, int Rank, int NRanks, std::chrono::milliseconds Timeout)
    : Rank(Rank), NRanks(NRanks), Timeout(Timeout), Listen(findInterface().Addr) {
  if (NRanks < 1 || NRanks > MaxRanks)
    throw NetError("a job of " + std::to_string(NRanks) + " ranks: a job has 1 to " +
                   std::to_string(MaxRanks) + " ranks");
  if (Rank < 0 || Rank >= NRanks)
    throw NetError(rankName(Rank) + " is out of range for a job of " + std::to_string(NRanks) +
                   " ranks");
  IdContents C;
  std::memcpy(&C, Id.Bytes, sizeof C);
  if (C.Magic != IdMagic)
    throw NetError("the unique id is not one a cclc root made; pass every rank the bytes of "
                   "the root's id unchanged");
  Secret = C.Secret;

  // Register with the root, and learn where the next rank listens.
  Deadline D = deadline();
  std::string AtRoot = "the bootstrap root at " + C.Root.str();
  Socket ToRoot = connectWithHello(
      C.Root, Hello::make(Secret, HelloKind::Register, Rank, NRanks, 0), D, "reach " + AtRoot);
  SocketAddress Mine = Listen.address();
  ToRoot.sendAll(&Mine, sizeof Mine, D, "register with " + AtRoot);
  RootReply Reply;
  ToRoot.recvAll(&Reply, sizeof Reply, D,
                 "hear from " + AtRoot + " that all " + std::to_string(NRanks) +
                     " ranks have registered");
  if (Reply.Status == RootStatus::Missing)
    throw NetError(std::to_string(Reply.NumMissing) + " of " + std::to_string(NRanks) + " ranks (" +
                   rankName(Reply.FirstMissing) + " among them) never reached " + AtRoot +
                   " before it gave up waiting; check that every rank was started "
                   "with the same id and rank count");
  if (Reply.Status != RootStatus::Ready)
    throw NetError(AtRoot + " refused " + rankName(Rank) + " of " + std::to_string(NRanks) +
                   ": another process registered as this rank, or the ranks disagree on the "
                   "rank count (the root's log says which)");

  // Close the ring, then spread every rank's address and host over it.
  if (NRanks > 1) {
    int NextRank = (Rank + 1) % NRanks, PrevRank = (Rank + NRanks - 1) % NRanks;
    Next = connectWithHello(Reply.Next, Hello::make(Secret, HelloKind::Ring, Rank, NRanks, 0), D,
                            "reach " + rankName(NextRank) +
                                ", the next in the bootstrap ring, at " + Reply.Next.str());
    Prev = accept(HelloKind::Ring, PrevRank, 0, D,
                  "hear from " + rankName(PrevRank) + ", the previous in the bootstrap ring");
  }
  std::vector<RankInfo> Infos(static_cast<size_t>(NRanks));
  RankInfo &Own = Infos[size_t(Rank)];
  Own.Listen = Mine;
  std::snprintf(Own.Host, sizeof Own.Host, "%s", hostIdentity().c_str());
  allgather(Infos.data(), sizeof(RankInfo));
  for (const RankInfo &Info : Infos) {
    Addresses.push_back(Info.Listen);
    Hosts.emplace_back(Info.Host, strnlen(Info.Host, sizeof Info.Host));
  }
}

void Bootstrap::checkPeer(int Peer) const {
  if (Peer < 0 || Peer >= NRanks || Peer == Rank)
    throw NetError(rankName(Rank) + " cannot message " + rankName(Peer) + " in a job of " +
                   std::to_string(NRanks) + " ranks");
}

Socket Bootstrap::accept(HelloKind Kind, int Peer, uint32_t Tag, const Deadline &D,
                         const std::string &What) {
  auto Key = std::make_tuple(Kind, Peer, Tag);
  if (auto It = Early.find(Key); It != Early.end()) {
    Socket S = std::move(It->second);
    Early.erase(It);
    return S;
  }
  for (;;) {
    Listener::Accepted A = Listen.accept(Secret, D, What);
    auto Got = std::make_tuple(A.H.Kind, int(A.H.Rank), A.H.Tag);
    if (A.H.NRanks != NRanks || A.H.Rank < 0 || A.H.Rank >= NRanks) {
      logRefusal(A.From, "it claims to be " + rankName(A.H.Rank) + " of " +
                             std::to_string(A.H.NRanks) + " ranks, in a job of " +
                             std::to_string(NRanks));
      continue;
    }
    if (Got == Key)
      return std::move(A.S);
    if (!Early.emplace(Got, std::move(A.S)).second)
      logRefusal(A.From, "it duplicates a connection of " + rankName(A.H.Rank));
  }
}

void Bootstrap::allgather(void *Buf, size_t BytesPerRank) {
  if (NRanks == 1)
    return;
  Deadline D = deadline();
  int NextRank = (Rank + 1) % NRanks, PrevRank = (Rank + NRanks - 1) % NRanks;
  std::string What = "allgather with " + rankName(PrevRank) + " and " + rankName(NextRank);
  uint64_t Mine = BytesPerRank, Theirs = 0;
  exchange(Next, &Mine, Prev, &Theirs, sizeof Mine, D, What);
  if (Theirs != Mine)
    throw NetError(rankName(PrevRank) + " allgathers " + std::to_string(Theirs) +
                   " bytes per rank where " + rankName(Rank) + " allgathers " +
                   std::to_string(Mine) + "; the ranks disagree on the protocol");
  // Step S passes on the part received in step S - 1.
  auto *Base = static_cast<std::byte *>(Buf);
  for (int S = 0; S < NRanks - 1; ++S) {
    size_t SendPart = size_t((Rank - S + NRanks) % NRanks);
    size_t RecvPart = size_t((Rank - S - 1 + NRanks) % NRanks);
    exchange(Next, Base + SendPart * BytesPerRank, Prev, Base + RecvPart * BytesPerRank,
             BytesPerRank, D, What);
  }
}

void Bootstrap::barrier() {
  std::vector<uint8_t> Flags(static_cast<size_t>(NRanks));
  allgather(Flags.data(), 1);
}

void Bootstrap::send(int Peer, uint32_t Tag, const void *Data, size_t Bytes) {
  checkPeer(Peer);
  Deadline D = deadline();
  std::string What = "send " + std::to_string(Bytes) + " bytes to " + rankName(Peer) + " (tag " +
                     std::to_string(Tag) + ")";
  auto It = Outgoing.find({Peer, Tag});
  if (It == Outgoing.end())
    It = Outgoing
             .emplace(std::make_pair(Peer, Tag),
                      connectWithHello(Addresses[size_t(Peer)],
                                       Hello::make(Secret, HelloKind::Message, Rank, NRanks, Tag),
                                       D, What))
             .first;
  uint64_t Length = Bytes;
  It->second.sendAll(&Length, sizeof Length, D, What);
  It->second.sendAll(Data, Bytes, D, What);
}

void Bootstrap::recv(int Peer, uint32_t Tag, void *Data, size_t Bytes) {
  checkPeer(Peer);
  Deadline D = deadline();
  std::string What = "receive " + std::to_string(Bytes) + " bytes from " + rankName(Peer) +
                     " (tag " + std::to_string(Tag) + ")";
  auto It = Incoming.find({Peer, Tag});
  if (It == Incoming.end())
    It = Incoming.emplace(std::make_pair(Peer, Tag), accept(HelloKind::Message, Peer, Tag, D, What))
             .first;
  uint64_t Length = 0;
  It->second.recvAll(&Length, sizeof Length, D, What);
  if (Length != Bytes)
    throw NetError(rankName(Peer) + " sent " + std::to_string(Length) + " bytes with tag " +
                   std::to_string(Tag) + " where " + rankName(Rank) + " expects " +
                   std::to_string(Bytes) + "; the ranks disagree on the protocol");
  It->second.recvAll(Data, Bytes, D, What);
}

uint32_t Bootstrap::nextPairSequence(int Peer) {
  checkPeer(Peer);
  return PairSequences[Peer]++;
}

Socket Bootstrap::connectTo(int Peer, uint32_t Tag) {
  checkPeer(Peer);
  return connectWithHello(Addresses[size_t(Peer)],
                          Hello::make(Secret, HelloKind::Transport, Rank, NRanks, Tag), deadline(),
                          "open transport connection " + std::to_string(Tag) + " to " +
                              rankName(Peer) + " at " + Addresses[size_t(Peer)].str());
}

Socket Bootstrap::acceptFrom(int Peer, uint32_t Tag) {
  checkPeer(Peer);
  return accept(HelloKind::Transport, Peer, Tag, deadline(),
                "accept transport connection " + std::to_string(Tag) + " from " + rankName(Peer));
}

} // namespace cclc::net
