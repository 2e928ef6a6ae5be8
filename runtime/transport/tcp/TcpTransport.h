//===- TcpTransport.h - FIFOs carried over TCP by a proxy thread --*- C++ -*-===//
//
// Links between ranks of different hosts. Executors see the same FIFOs as
// over shared memory, but in process memory: a proxy thread per rank drains
// the senders' FIFOs into sockets and fills the receivers' FIFOs from them.
//
// A message carries its slot's size word and call stamp (which only a
// call's first message sets) unchanged, and as many bytes of the slot as
// the word says, or the whole slot when the word is larger: point-to-point
// messages that span slots say so in the word (exec/PointToPoint.h), and
// their receivers read it.
//
// Each peer has several sockets; successive messages of a channel take them
// in turn, so that one channel's stream uses them all, and the receiving
// proxy puts each message in the slot its sequence number names, whatever
// the order of arrival. The receiver grants credit: message S of a channel
// leaves only once the receiving executor has released message
// S - NumSlots, so an arriving message always finds its slot free, a socket
// never stalls behind a full FIFO, and no channel blocks another.
//
// A socket error, or a peer closing without a goodbye, is reported through
// Fail (which raises the rank's abort flag) and closes every socket, so that
// the failure reaches the other peers too. Destroying the proxy first sends
// what the executors posted, then says goodbye on every socket.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "host/Connection.h"
#include "runtime/net/Socket.h"

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace cclc::net {

/// Idle rounds a proxy spins (polling without waiting) before it sleeps a
/// millisecond per round: executors post to FIFOs without waking it.
inline constexpr unsigned ProxySpinRounds = 2000;

/// Whether a proxy idle for IdleRounds rounds sleeps before the next: not
/// while Busy (GPU work in flight, when given) is nonzero, since a kernel
/// may post at any moment and a millisecond's sleep would stall it.
bool idleProxyMaySleep(unsigned IdleRounds, const std::atomic<uint32_t> *Busy);

/// The FIFOs (by channel) and sockets of one peer.
struct TcpPeer {
  int Peer = -1;
  std::vector<Socket> Sockets;
  std::vector<std::pair<int, host::Fifo>> Sends, Recvs;
};

class TcpProxy {
public:
  /// Starts the proxy thread. It stops when Abort is raised, first telling
  /// every peer the cause Cause() returns (when given) in an abort frame,
  /// which the peer's proxy reports as its failure, so that ranks stopped by
  /// an abort over TCP say what went wrong at its origin. Fail reports the
  /// cause of a failure it detects (and must raise Abort). Timeout bounds
  /// the flush when the proxy is destroyed. An idle proxy sleeps between
  /// polls, except while Busy (when given: GPU kernels count themselves
  /// there while they run) is nonzero, since a kernel posts without waking
  /// it.
  TcpProxy(int Rank, std::vector<TcpPeer> Peers, const std::atomic<uint32_t> &Abort,
           std::function<void(const std::string &)> Fail, std::chrono::milliseconds Timeout,
           const std::atomic<uint32_t> *Busy = nullptr, std::function<std::string()> Cause = {});
  ~TcpProxy();
  TcpProxy(const TcpProxy &) = delete;
  TcpProxy &operator=(const TcpProxy &) = delete;

private:
  struct Engine;
  std::unique_ptr<Engine> E;
  std::atomic<bool> Finishing{false};
  std::thread Thread;
};

} // namespace cclc::net
