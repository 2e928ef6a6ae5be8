//===- PointToPoint.cpp - Sends, receives and alltoall --------------------===//
//
// A point-to-point call, or a group of them, becomes a list of messages: a
// send or a receive of some bytes with one peer, an alltoall one of each
// with every rank. Messages a rank sends to itself are copied, matched with
// its receives from itself in issue order; the others move through the
// pair connections (LinkSets::connectPairs), which the group's new pairs
// make in one setup first, and exec::runTransfers moves them all at once.
//
// Calls are checked as they are issued; a group whose messages to itself do
// not match is refused before anything moves, and the communicator stays
// usable. Once messages move, a failure is the communicator's, as for a
// collective: it aborts the transports here and at the peers, and later
// calls are refused.
//
//===----------------------------------------------------------------------===//

#include "runtime/api/Comm.h"
#include "runtime/api/Status.h"

#include "plan/Vocabulary.h"

#include <algorithm>
#include <cstring>
#include <limits>

namespace cclc::runtime {

namespace {

const char *entryPoint(PeerOp::Kind What) {
  switch (What) {
  case PeerOp::Kind::Send: return "cclcSend";
  case PeerOp::Kind::Recv: return "cclcRecv";
  case PeerOp::Kind::AllToAll: return "cclcAllToAll";
  }
  return "?";
}

/// "send of 4 KiB to rank 3", or "a group of 6 point-to-point calls", for
/// messages.
std::string describe(std::span<const PeerOp> Ops) {
  if (Ops.size() != 1)
    return "a group of " + std::to_string(Ops.size()) + " point-to-point calls";
  const PeerOp &Op = Ops[0];
  std::string Size = plan::formatBytes(Op.Count * plan::dtypeBytes(Op.Type));
  switch (Op.What) {
  case PeerOp::Kind::Send: return "send of " + Size + " to rank " + std::to_string(Op.Peer);
  case PeerOp::Kind::Recv: return "receive of " + Size + " from rank " + std::to_string(Op.Peer);
  case PeerOp::Kind::AllToAll: return "alltoall of " + Size + " per rank";
  }
  return "?";
}

} // namespace

void Communicator::checkPeerOp(const PeerOp &Op, const void *Stream) const {
  // Messages are built only for refusals: a call that passes costs no strings.
  auto Refuse = [&](cclcResult_t Result, const std::string &Problem) {
    throw ApiError(Result, std::string(entryPoint(Op.What)) + ": " + Problem);
  };
  bool AllToAll = Op.What == PeerOp::Kind::AllToAll;
  if (!AllToAll && (Op.Peer < 0 || Op.Peer >= NRanks))
    Refuse(cclcInvalidArgument, "peer " + std::to_string(Op.Peer) +
                                    " is not a rank of this communicator of " +
                                    std::to_string(NRanks) + " ranks; pass a rank in [0, " +
                                    std::to_string(NRanks) + ")");
  size_t ElemBytes = plan::dtypeBytes(Op.Type);
  size_t Blocks = AllToAll ? size_t(NRanks) : 1;
  if (Op.Count > std::numeric_limits<size_t>::max() / ElemBytes / Blocks)
    Refuse(cclcInvalidArgument,
           "count " + std::to_string(Op.Count) + " overflows the buffers' sizes");
  bool Sends = Op.What != PeerOp::Kind::Recv, Receives = Op.What != PeerOp::Kind::Send;
  const char *Extent = AllToAll ? "nranks x count" : "count";
  if (Op.Count && Sends && !Op.Send)
    Refuse(cclcInvalidArgument, "sendbuff is null with a count of " + std::to_string(Op.Count) +
                                    "; pass a buffer of " + Extent + " elements");
  if (Op.Count && Receives && !Op.Recv)
    Refuse(cclcInvalidArgument, "recvbuff is null with a count of " + std::to_string(Op.Count) +
                                    "; pass a buffer of " + Extent + " elements");
  if (Stream || anyDeviceMemory({Sends ? Op.Send : nullptr, Receives ? Op.Recv : nullptr}))
    Refuse(cclcInvalidUsage, "sends, receives and alltoall run on the host only; pass host "
                             "buffers and a null stream");
  size_t Bytes = Op.Count * ElemBytes * Blocks;
  if (AllToAll && Op.Send != Op.Recv && overlaps(Op.Send, Bytes, Op.Recv, Bytes))
    Refuse(cclcInvalidArgument, "sendbuff and recvbuff overlap without being the same buffer; "
                                "pass one buffer for an in-place alltoall, or two apart");
}

void Communicator::pointToPoint(std::span<const PeerOp> Ops) {
  std::lock_guard<std::mutex> Guard(CallLock);
  checkUsable();
  expandPeerOps(Ops);
  copyToSelf();
  try {
    connectPeers();
    Transfers.clear();
    LastOnFifo.assign(2 * size_t(NRanks), -1);
    for (const Message &M : Messages) {
      if (M.Peer == Rank)
        continue;
      net::Connections &Net = *Links.pair(M.Peer);
      int32_t &Last = LastOnFifo[2 * size_t(M.Peer) + (M.Send ? 0 : 1)];
      exec::Transfer &T = Transfers.emplace_back(
          M.Send ? exec::Transfer::send(Net.out(M.Peer, 0), M.From, M.Bytes)
                 : exec::Transfer::receive(Net.in(M.Peer, 0), M.To, M.Bytes));
      T.After = Last;
      Last = int32_t(Transfers.size() - 1);
    }
    exec::runTransfers(Transfers, Rank);
  } catch (...) {
    fail(describe(Ops), {std::current_exception()});
  }
}

void Communicator::expandPeerOps(std::span<const PeerOp> Ops) {
  // The inputs of in-place alltoalls, side by side in one block.
  size_t AsideBytes = 0;
  for (const PeerOp &Op : Ops)
    if (Op.What == PeerOp::Kind::AllToAll && Op.Send == Op.Recv)
      AsideBytes += Op.Count * plan::dtypeBytes(Op.Type) * size_t(NRanks);
  auto *Aside = AsideBytes
                    ? static_cast<std::byte *>(Space.get(Workspace::Use::InputCopy, AsideBytes))
                    : nullptr;
  Messages.clear();
  for (const PeerOp &Op : Ops) {
    size_t Bytes = Op.Count * plan::dtypeBytes(Op.Type);
    switch (Op.What) {
    case PeerOp::Kind::Send:
      Messages.push_back({Op.Peer, true, static_cast<const std::byte *>(Op.Send), nullptr, Bytes});
      break;
    case PeerOp::Kind::Recv:
      Messages.push_back({Op.Peer, false, nullptr, static_cast<std::byte *>(Op.Recv), Bytes});
      break;
    case PeerOp::Kind::AllToAll: {
      // Every rank passes the same count, so every rank skips alike.
      if (Bytes == 0)
        break;
      auto *In = static_cast<const std::byte *>(Op.Send);
      auto *Out = static_cast<std::byte *>(Op.Recv);
      if (Op.Send == Op.Recv) {
        std::memcpy(Aside, In, Bytes * size_t(NRanks));
        In = Aside;
        Aside += Bytes * size_t(NRanks);
      }
      // From the next rank on, so that the ranks do not all start with rank 0.
      for (int I = 0; I < NRanks; ++I) {
        size_t Peer = size_t((Rank + I) % NRanks);
        Messages.push_back({int(Peer), true, In + Peer * Bytes, nullptr, Bytes});
        Messages.push_back({int(Peer), false, nullptr, Out + Peer * Bytes, Bytes});
      }
      break;
    }
    }
  }
}

void Communicator::copyToSelf() {
  // The K-th send to this rank matches its K-th receive from this rank.
  auto Next = [&](size_t I, bool Send) {
    while (I < Messages.size() && !(Messages[I].Peer == Rank && Messages[I].Send == Send))
      ++I;
    return I;
  };
  size_t Sends = 0, Recvs = 0;
  for (size_t S = Next(0, true), R = Next(0, false); S < Messages.size() || R < Messages.size();
       S = Next(S + 1, true), R = Next(R + 1, false)) {
    Sends += S < Messages.size();
    Recvs += R < Messages.size();
    if (S < Messages.size() && R < Messages.size() && Messages[S].Bytes != Messages[R].Bytes)
      throw ApiError(cclcInvalidUsage,
                     "rank " + std::to_string(Rank) + " sends " +
                         std::to_string(Messages[S].Bytes) + " bytes to itself where it receives " +
                         std::to_string(Messages[R].Bytes) +
                         "; a send and its receive must pass the same count and type");
  }
  if (Sends != Recvs)
    throw ApiError(cclcInvalidUsage,
                   "rank " + std::to_string(Rank) + " sends to itself and receives from itself " +
                       "unequal numbers of messages (" + std::to_string(Sends) + " and " +
                       std::to_string(Recvs) +
                       "); a send to one's own rank needs a receive from it in the same group "
                       "(cclcGroupStart ... cclcGroupEnd)");
  for (size_t S = Next(0, true), R = Next(0, false); S < Messages.size();
       S = Next(S + 1, true), R = Next(R + 1, false))
    if (Messages[S].Bytes)
      std::memmove(Messages[R].To, Messages[S].From, Messages[S].Bytes);
}

void Communicator::connectPeers() {
  std::vector<int> New;
  for (const Message &M : Messages)
    if (M.Peer != Rank && !Links.pair(M.Peer) &&
        std::find(New.begin(), New.end(), M.Peer) == New.end())
      New.push_back(M.Peer);
  if (!New.empty())
    Links.connectPairs(New);
}

} // namespace cclc::runtime
