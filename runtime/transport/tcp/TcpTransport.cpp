//===- TcpTransport.cpp - FIFOs carried over TCP by a proxy thread --------===//

#include "runtime/transport/tcp/TcpTransport.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <deque>
#include <optional>
#include <poll.h>
#include <sys/socket.h>
#include <sys/uio.h>

namespace cclc::net {

namespace {

/// Frames read from one socket before the proxy turns to the others.
constexpr int FramesPerRead = 64;

enum class FrameType : uint32_t {
  Data = 1, ///< Message Seq of Channel, its slot's size word and stamp; the payload follows.
  Credit,   ///< The receiver has released every message of Channel before Seq.
  Goodbye,  ///< The sender is done with this socket; its EOF is expected.
  Abort,    ///< The sender aborted; SizeWord bytes of its cause follow, then its EOF.
};

/// The longest cause an abort frame carries.
constexpr size_t AbortCauseBytes = 1000;
/// How long an aborting proxy reads what its peers still send before it
/// closes their sockets.
constexpr std::chrono::milliseconds AbortLinger{1000};

struct Frame {
  FrameType Type;
  uint32_t Channel;
  uint64_t Seq;
  uint64_t SizeWord; ///< Of a Data frame; 0 for the others.
  kern::CallStamp Stamp; ///< Of a Data frame; zero for the others.
};
static_assert(sizeof(Frame) == 56);

/// The bytes a slot whose size word is SizeWord holds: the size the word
/// holds, or the whole slot when the size is larger, which a message that
/// goes on in later slots says (point-to-point messages span slots).
size_t payloadBytes(uint64_t SizeWord, size_t SlotBytes) {
  return size_t(std::min<uint64_t>(kern::wordBytes(SizeWord), SlotBytes));
}

/// Which sequence numbers of a window of NumSlots have completed, and where
/// the completed prefix ends; completions may come out of order.
class SeqWindow {
public:
  explicit SeqWindow(uint32_t NumSlots) : Done(NumSlots) {}
  uint64_t base() const { return Base; }
  /// Marks Seq done; returns the new end of the completed prefix.
  uint64_t complete(uint64_t Seq) {
    Done[Seq % Done.size()] = true;
    while (Done[Base % Done.size()]) {
      Done[Base % Done.size()] = false;
      ++Base;
    }
    return Base;
  }

private:
  std::vector<bool> Done;
  uint64_t Base = 0;
};

/// A local FIFO the proxy drains into the peer's sockets.
struct SendLane {
  int Channel;
  host::Fifo Q;
  SeqWindow Written;       ///< Messages fully written to a socket: the FIFO's Head.
  uint64_t Dispatched = 0; ///< Messages queued on a socket.
  uint64_t Credit = 0;     ///< The receiver has released every message before this.
};

/// A local FIFO the proxy fills from the peer's sockets.
struct RecvLane {
  int Channel;
  host::Fifo Q;
  SeqWindow Arrived;    ///< Messages fully received: the FIFO's Tail.
  uint64_t Granted = 0; ///< The last Head announced to the sender.
  bool GrantQueued = false;
};

/// A frame waiting to be written; Payload points into a send lane's slot.
struct OutFrame {
  Frame F;
  const std::byte *Payload = nullptr;
  size_t PayloadBytes = 0;
  SendLane *Send = nullptr;
  RecvLane *Grant = nullptr;
};

enum class ConnState {
  Open,
  Leaving, ///< Our goodbye is out; reading until the peer closes.
  Closed,
};

struct PeerState;

struct Conn {
  Socket S;
  PeerState *Owner = nullptr;
  ConnState State = ConnState::Open;
  bool GoodbyeQueued = false;
  std::deque<OutFrame> Queue;
  size_t Written = 0; ///< Bytes of Queue.front() already written.
  Frame In{};
  size_t InGot = 0;
  RecvLane *Lane = nullptr;
  /// The payload of an abort frame being read.
  std::string Cause;
  std::byte *Payload = nullptr;
  size_t PayloadBytes = 0;
  size_t PayloadGot = 0;
};

struct PeerState {
  int Peer;
  std::vector<SendLane> Sends;
  std::vector<RecvLane> Recvs;
  std::vector<Conn> Conns;
};

template <class Lane> Lane *findLane(std::vector<Lane> &Lanes, uint32_t Channel) {
  auto It = std::find_if(Lanes.begin(), Lanes.end(),
                         [&](const Lane &L) { return uint32_t(L.Channel) == Channel; });
  return It == Lanes.end() ? nullptr : &*It;
}

std::string rankName(int Rank) { return "rank " + std::to_string(Rank); }

} // namespace

bool idleProxyMaySleep(unsigned IdleRounds, const std::atomic<uint32_t> *Busy) {
  return IdleRounds >= ProxySpinRounds && !(Busy && Busy->load(std::memory_order_relaxed));
}

struct TcpProxy::Engine {
  int Rank;
  std::vector<PeerState> Peers;
  const std::atomic<uint32_t> &Abort;
  std::function<void(const std::string &)> Fail;
  std::chrono::milliseconds Timeout;
  const std::atomic<uint32_t> *Busy;
  std::function<std::string()> Cause;
  void run(const std::atomic<bool> &Finishing);
  bool dispatch(PeerState &P, bool Leaving);
  bool write(Conn &C);
  bool read(Conn &C);
  /// Handles a complete frame header; true when the frame has no payload.
  bool beginFrame(Conn &C);
  void endData(Conn &C);
  void peerClosed(Conn &C, const std::string &Error);
  /// Tells every peer the cause of this rank's abort, where its socket is
  /// between frames and takes the frame at once, then closes every socket.
  void abortAll();
  void closeAll();
  NetError protocolError(const Conn &C, const std::string &What) const;
};

TcpProxy::TcpProxy(int Rank, std::vector<TcpPeer> Peers, const std::atomic<uint32_t> &Abort,
                   std::function<void(const std::string &)> Fail, std::chrono::milliseconds Timeout,
                   const std::atomic<uint32_t> *Busy, std::function<std::string()> Cause)
    : E(new Engine{Rank, {}, Abort, std::move(Fail), Timeout, Busy, std::move(Cause)}) {
  E->Peers.reserve(Peers.size());
  for (TcpPeer &TP : Peers) {
    PeerState &P = E->Peers.emplace_back();
    P.Peer = TP.Peer;
    for (auto &[Channel, Q] : TP.Sends)
      P.Sends.push_back(SendLane{Channel, Q, SeqWindow(Q.NumSlots)});
    for (auto &[Channel, Q] : TP.Recvs)
      P.Recvs.push_back(RecvLane{Channel, Q, SeqWindow(Q.NumSlots)});
    P.Conns.resize(TP.Sockets.size());
    for (size_t I = 0; I < TP.Sockets.size(); ++I)
      P.Conns[I].S = std::move(TP.Sockets[I]);
  }
  for (PeerState &P : E->Peers)
    for (Conn &C : P.Conns)
      C.Owner = &P;
  Thread = std::thread([this] { E->run(Finishing); });
}

TcpProxy::~TcpProxy() {
  Finishing.store(true, std::memory_order_release);
  Thread.join();
}

void TcpProxy::Engine::run(const std::atomic<bool> &Finishing) {
  std::optional<std::chrono::steady_clock::time_point> FinishBy;
  std::vector<pollfd> Fds;
  std::vector<Conn *> Polled;
  unsigned Idle = 0;
  try {
    for (;;) {
      if (Abort.load(std::memory_order_relaxed)) {
        abortAll();
        return;
      }
      bool Leaving = Finishing.load(std::memory_order_acquire);
      if (Leaving && !FinishBy)
        FinishBy = std::chrono::steady_clock::now() + Timeout;
      bool Progress = false;
      Fds.clear();
      Polled.clear();
      for (PeerState &P : Peers) {
        Progress |= dispatch(P, Leaving);
        for (Conn &C : P.Conns) {
          if (C.State == ConnState::Closed)
            continue;
          Progress |= write(C);
          short Events = POLLIN | (C.Queue.empty() ? 0 : POLLOUT);
          Fds.push_back({C.S.fd(), Events, 0});
          Polled.push_back(&C);
        }
      }
      if (Leaving && Fds.empty())
        return;
      if (FinishBy && std::chrono::steady_clock::now() > *FinishBy) {
        std::fprintf(stderr,
                     "cclc: %s gave up after %lld ms finishing its TCP connections; its peers "
                     "stopped receiving\n",
                     rankName(Rank).c_str(), static_cast<long long>(Timeout.count()));
        closeAll();
        return;
      }
      Idle = Progress ? 0 : Idle + 1;
      bool Sleep = idleProxyMaySleep(Idle, Busy);
      if (::poll(Fds.data(), Fds.size(), Sleep ? 1 : 0) < 0 && errno != EINTR)
        throw NetError(std::string("poll failed: ") + std::strerror(errno));
      for (size_t I = 0; I < Fds.size(); ++I)
        if (Fds[I].revents & ~POLLOUT && read(*Polled[I]))
          Idle = 0;
      if (Idle && !Sleep)
        std::this_thread::yield();
    }
  } catch (const NetError &Err) {
    Fail(Err.what());
    abortAll();
  }
}

bool TcpProxy::Engine::dispatch(PeerState &P, bool Leaving) {
  bool Progress = false;
  for (SendLane &L : P.Sends) {
    uint64_t Tail = L.Q.Header->Tail.load(std::memory_order_acquire);
    while (L.Dispatched < Tail && L.Dispatched < L.Credit + L.Q.NumSlots) {
      Conn &C = P.Conns[(L.Dispatched + uint64_t(L.Channel)) % P.Conns.size()];
      if (C.State != ConnState::Open || C.GoodbyeQueued)
        throw NetError(rankName(P.Peer) + " has closed its connections while " + rankName(Rank) +
                       " still sends to it on channel " + std::to_string(L.Channel) +
                       "; the ranks run different plans");
      uint64_t Slot = L.Dispatched % L.Q.NumSlots;
      uint64_t SizeWord = L.Q.Sizes[Slot];
      C.Queue.push_back(
          {Frame{FrameType::Data, uint32_t(L.Channel), L.Dispatched, SizeWord, L.Q.Stamps[Slot]},
           L.Q.Slots + Slot * L.Q.SlotBytes, payloadBytes(SizeWord, L.Q.SlotBytes), &L, nullptr});
      ++L.Dispatched;
      Progress = true;
    }
  }
  for (RecvLane &L : P.Recvs) {
    Conn &C = P.Conns[size_t(L.Channel) % P.Conns.size()];
    uint64_t Head = L.Q.Header->Head.load(std::memory_order_acquire);
    if (L.GrantQueued || Head == L.Granted || C.State != ConnState::Open || C.GoodbyeQueued)
      continue;
    C.Queue.push_back(
        {Frame{FrameType::Credit, uint32_t(L.Channel), Head, 0, {}}, nullptr, 0, nullptr, &L});
    L.Granted = Head;
    L.GrantQueued = true;
    Progress = true;
  }
  bool AllSent = std::all_of(P.Sends.begin(), P.Sends.end(), [](const SendLane &L) {
    return L.Written.base() == L.Q.Header->Tail.load(std::memory_order_acquire);
  });
  if (Leaving && AllSent)
    for (Conn &C : P.Conns)
      if (C.State == ConnState::Open && !C.GoodbyeQueued) {
        C.Queue.push_back({Frame{FrameType::Goodbye, 0, 0, 0, {}}});
        C.GoodbyeQueued = true;
        Progress = true;
      }
  return Progress;
}

bool TcpProxy::Engine::write(Conn &C) {
  bool Progress = false;
  while (!C.Queue.empty()) {
    OutFrame &F = C.Queue.front();
    size_t PayloadBytes = F.PayloadBytes;
    iovec Iov[2];
    size_t N = 0;
    if (C.Written < sizeof(Frame))
      Iov[N++] = {reinterpret_cast<std::byte *>(&F.F) + C.Written, sizeof(Frame) - C.Written};
    size_t Done = C.Written > sizeof(Frame) ? C.Written - sizeof(Frame) : 0;
    if (PayloadBytes > Done)
      Iov[N++] = {const_cast<std::byte *>(F.Payload) + Done, PayloadBytes - Done};
    msghdr Msg{};
    Msg.msg_iov = Iov;
    Msg.msg_iovlen = N;
    ssize_t Sent = ::sendmsg(C.S.fd(), &Msg, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (Sent < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
        return Progress;
      std::string Error = std::strerror(errno);
      // A peer that aborted may have said why before it closed.
      read(C);
      throw NetError("lost the connection to " + rankName(C.Owner->Peer) + ": " + Error +
                     "; it has probably died or aborted");
    }
    Progress = true;
    C.Written += size_t(Sent);
    if (C.Written < sizeof(Frame) + PayloadBytes)
      continue;
    C.Written = 0;
    OutFrame Finished = F;
    C.Queue.pop_front();
    switch (Finished.F.Type) {
    case FrameType::Data: {
      SendLane &L = *Finished.Send;
      L.Q.Header->Head.publish(L.Written.complete(Finished.F.Seq));
      break;
    }
    case FrameType::Credit:
      Finished.Grant->GrantQueued = false;
      break;
    case FrameType::Goodbye:
      ::shutdown(C.S.fd(), SHUT_WR);
      C.State = ConnState::Leaving;
      break;
    case FrameType::Abort:
      break; // Written by abortAll() alone, never queued.
    }
  }
  return Progress;
}

bool TcpProxy::Engine::read(Conn &C) {
  bool Progress = false;
  for (int Frames = 0; Frames < FramesPerRead && C.State != ConnState::Closed;) {
    bool InHeader = C.InGot < sizeof(Frame);
    std::byte *To =
        InHeader ? reinterpret_cast<std::byte *>(&C.In) + C.InGot : C.Payload + C.PayloadGot;
    size_t Want = InHeader ? sizeof(Frame) - C.InGot : C.PayloadBytes - C.PayloadGot;
    ssize_t Got = ::recv(C.S.fd(), To, Want, MSG_DONTWAIT);
    if (Got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
      return Progress;
    Progress = true;
    if (Got <= 0) {
      peerClosed(C, Got == 0 ? "" : std::strerror(errno));
      return Progress;
    }
    bool FrameDone = false;
    if (InHeader) {
      C.InGot += size_t(Got);
      FrameDone = C.InGot == sizeof(Frame) && beginFrame(C);
    } else {
      C.PayloadGot += size_t(Got);
      if (C.PayloadGot == C.PayloadBytes) {
        // The peer's cause is this rank's failure, as it is.
        if (C.In.Type == FrameType::Abort)
          throw NetError(C.Cause);
        endData(C);
        FrameDone = true;
      }
    }
    if (FrameDone) {
      C.InGot = 0;
      ++Frames;
    }
  }
  return Progress;
}

bool TcpProxy::Engine::beginFrame(Conn &C) {
  const Frame &F = C.In;
  switch (F.Type) {
  case FrameType::Data: {
    RecvLane *L = findLane(C.Owner->Recvs, F.Channel);
    if (!L)
      throw protocolError(C, "a message on channel " + std::to_string(F.Channel) +
                                 ", on which this rank receives nothing from it");
    uint64_t Base = L->Arrived.base();
    if (F.Seq < Base || F.Seq >= Base + L->Q.NumSlots)
      throw protocolError(C, "message " + std::to_string(F.Seq) + " on channel " +
                                 std::to_string(F.Channel) + ", outside the credit granted");
    C.Lane = L;
    C.Payload = L->Q.Slots + (F.Seq % L->Q.NumSlots) * L->Q.SlotBytes;
    C.PayloadBytes = payloadBytes(F.SizeWord, L->Q.SlotBytes);
    C.PayloadGot = 0;
    if (C.PayloadBytes != 0)
      return false;
    endData(C);
    return true;
  }
  case FrameType::Credit: {
    SendLane *L = findLane(C.Owner->Sends, F.Channel);
    if (!L)
      throw protocolError(C, "credit for channel " + std::to_string(F.Channel) +
                                 ", on which this rank sends nothing to it");
    L->Credit = std::max(L->Credit, F.Seq);
    return true;
  }
  case FrameType::Goodbye:
    if (std::any_of(C.Queue.begin(), C.Queue.end(),
                    [](const OutFrame &O) { return O.F.Type == FrameType::Data; }))
      throw NetError(rankName(C.Owner->Peer) + " said goodbye while " + rankName(Rank) +
                     " still had messages for it; the ranks run different plans");
    C.Queue.clear();
    C.S.close();
    C.State = ConnState::Closed;
    return true;
  case FrameType::Abort:
    if (F.SizeWord == 0 || F.SizeWord > AbortCauseBytes)
      throw protocolError(C, "an abort with a cause of " + std::to_string(F.SizeWord) + " bytes");
    C.Cause.assign(size_t(F.SizeWord), '\0');
    C.Payload = reinterpret_cast<std::byte *>(C.Cause.data());
    C.PayloadBytes = C.Cause.size();
    C.PayloadGot = 0;
    return false;
  }
  throw protocolError(C, "a frame of unknown type " + std::to_string(uint32_t(F.Type)));
}

void TcpProxy::Engine::endData(Conn &C) {
  RecvLane &L = *C.Lane;
  L.Q.Sizes[C.In.Seq % L.Q.NumSlots] = C.In.SizeWord;
  L.Q.Stamps[C.In.Seq % L.Q.NumSlots] = C.In.Stamp;
  L.Q.Header->Tail.publish(L.Arrived.complete(C.In.Seq));
}

void TcpProxy::Engine::peerClosed(Conn &C, const std::string &Error) {
  // After our goodbye the peer closing is the expected end.
  if (C.State == ConnState::Leaving) {
    C.S.close();
    C.State = ConnState::Closed;
    return;
  }
  throw NetError(rankName(C.Owner->Peer) +
                 (Error.empty() ? " closed its connection without a goodbye"
                                : "'s connection failed: " + Error) +
                 "; it has probably died or aborted");
}

void TcpProxy::Engine::abortAll() {
  std::string Why = Cause ? Cause() : std::string();
  Why.resize(std::min(Why.size(), AbortCauseBytes));
  if (!Why.empty()) {
    Frame F{FrameType::Abort, 0, 0, Why.size(), {}};
    for (PeerState &P : Peers)
      for (Conn &C : P.Conns) {
        if (C.State == ConnState::Closed || C.Written)
          continue;
        iovec Iov[2] = {{&F, sizeof F}, {Why.data(), Why.size()}};
        msghdr Msg{};
        Msg.msg_iov = Iov;
        Msg.msg_iovlen = 2;
        // Best effort: a peer that cannot take it at once learns of the
        // abort from the closed socket.
        (void)::sendmsg(C.S.fd(), &Msg, MSG_NOSIGNAL | MSG_DONTWAIT);
      }
  }
  // Closing a socket with unread data resets it, and a reset discards what
  // the peer has yet to read, the cause among it: end the writes, then read
  // until each peer closes too (it aborts once it reads the cause), for at
  // most AbortLinger.
  std::vector<pollfd> Fds;
  std::vector<Conn *> Open;
  for (PeerState &P : Peers)
    for (Conn &C : P.Conns)
      if (C.State != ConnState::Closed) {
        ::shutdown(C.S.fd(), SHUT_WR);
        Open.push_back(&C);
      }
  auto Until = std::chrono::steady_clock::now() + std::min(Timeout, AbortLinger);
  std::byte Scratch[4096];
  while (!Open.empty() && std::chrono::steady_clock::now() < Until) {
    Fds.clear();
    for (Conn *C : Open)
      Fds.push_back({C->S.fd(), POLLIN, 0});
    if (::poll(Fds.data(), Fds.size(), 10) < 0 && errno != EINTR)
      break;
    for (size_t I = Fds.size(); I-- > 0;) {
      if (!Fds[I].revents)
        continue;
      ssize_t Got = ::recv(Fds[I].fd, Scratch, sizeof Scratch, MSG_DONTWAIT);
      if (Got == 0 || (Got < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR))
        Open.erase(Open.begin() + std::ptrdiff_t(I));
    }
  }
  closeAll();
}

void TcpProxy::Engine::closeAll() {
  for (PeerState &P : Peers)
    for (Conn &C : P.Conns) {
      C.S.close();
      C.State = ConnState::Closed;
    }
}

NetError TcpProxy::Engine::protocolError(const Conn &C, const std::string &What) const {
  return NetError(rankName(C.Owner->Peer) + " sent " + rankName(Rank) + " " + What +
                  "; the ranks run different builds or plans");
}

} // namespace cclc::net
