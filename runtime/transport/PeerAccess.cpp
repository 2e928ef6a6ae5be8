//===- PeerAccess.cpp - Which GPU ranks of a host write each other --------===//

#include "runtime/transport/PeerAccess.h"

#include "runtime/transport/LinkSetup.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace cclc::net {

namespace {

/// Bytes of a bus id in the allgather: "0000:00:00.0" and more fit.
constexpr size_t BusIdBytes = 32;

} // namespace

bool p2pDisabledByEnvironment() {
  const char *Name = "CCLC_P2P_DISABLE";
  const char *Value = std::getenv(Name);
  if (!Value || !*Value) {
    Name = "NCCL_P2P_DISABLE";
    Value = std::getenv(Name);
  }
  if (!Value || !*Value || std::strcmp(Value, "0") == 0)
    return false;
  if (std::strcmp(Value, "1") == 0)
    return true;
  throw NetError(std::string(Name) + "=" + Value + " is neither 0 nor 1");
}

PeerAccess::PeerAccess(Bootstrap &B, const std::string &BusId, const Reach &CanReach) : B(B) {
  int N = B.size(), Rank = B.rank();
  std::vector<char> Ids(size_t(N) * BusIdBytes, '\0');
  std::strncpy(&Ids[size_t(Rank) * BusIdBytes], BusId.c_str(), BusIdBytes - 1);
  B.allgather(Ids.data(), BusIdBytes);
  HostRanks.resize(size_t(N));
  for (int R = 0; R < N; ++R) {
    BusIds.emplace_back(&Ids[size_t(R) * BusIdBytes]);
    for (int Q = 0; Q < N; ++Q)
      if (B.hostId(Q) == B.hostId(R))
        HostRanks[size_t(R)].push_back(Q);
    Width = std::max(Width, HostRanks[size_t(R)].size());
  }
  bool Disabled = p2pDisabledByEnvironment();
  Answers.assign(size_t(N) * Width, Answer::No);
  const std::vector<int> &Mine = HostRanks[size_t(Rank)];
  for (size_t I = 0; I < Mine.size(); ++I)
    Answers[size_t(Rank) * Width + I] =
        Disabled
            ? Answer::Disabled
            : (Mine[I] == Rank || CanReach(BusIds[size_t(Mine[I])]) ? Answer::Yes : Answer::No);
  B.allgather(Answers.data(), Width * sizeof(Answer));
}

PeerAccess::Answer PeerAccess::answer(int Rank, int Peer) const {
  const std::vector<int> &Host = HostRanks[size_t(Rank)];
  auto It = std::find(Host.begin(), Host.end(), Peer);
  if (It == Host.end())
    return Answer::No;
  return Answers[size_t(Rank) * Width + size_t(It - Host.begin())];
}

bool PeerAccess::direct(int Peer) const {
  return answer(B.rank(), Peer) == Answer::Yes && answer(Peer, B.rank()) == Answer::Yes;
}

std::string PeerAccess::describe() const {
  int Rank = B.rank();
  std::string Line = rankName(Rank) + " (GPU " + busId(Rank) + ")";
  for (int Peer : HostRanks[size_t(Rank)]) {
    if (Peer == Rank)
      continue;
    Line += "; " + rankName(Peer) + " (GPU " + busId(Peer) + "): ";
    if (direct(Peer)) {
      Line += "cuda-ipc";
      continue;
    }
    Line += "mapped host memory over tcp, ";
    int Who = answer(Rank, Peer) != Answer::Yes ? Rank : Peer;
    int Other = Who == Rank ? Peer : Rank;
    Line +=
        answer(Who, Other) == Answer::Disabled
            ? "peer access disabled on " + rankName(Who) + " (CCLC_P2P_DISABLE or NCCL_P2P_DISABLE)"
            : "GPU " + busId(Who) + " of " + rankName(Who) + " cannot write to GPU " + busId(Other);
  }
  return Line;
}

} // namespace cclc::net
