//===- PeerAccess.h - Which GPU ranks of a host write each other -*- C++ -*-===//
//
// GPU ranks of one host connect over CUDA IPC only where each GPU can write
// the other's memory (CUDA peer access, over NVLink or PCIe): the sender's
// kernel writes its messages into the receiver's memory, and the receiver
// writes the sender's Head word. Where either GPU cannot, or the environment
// turns peer access off, the pair uses the mapped host memory FIFOs of the
// TCP transport, carried over the loopback by the proxy threads.
//
// Whether a GPU reaches another depends on the process that asks (the GPUs
// it sees, CUDA_VISIBLE_DEVICES), so each rank answers only for its own
// direction, naming devices by PCI bus id as every process numbers them
// differently, and a pair connects directly only when both directions are
// possible: both ranks then decide alike, as LinkSetup requires.
//
//   CCLC_P2P_DISABLE   1 turns peer access off for the rank (0, the default,
//                      leaves it on); where unset, NCCL_P2P_DISABLE counts.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/bootstrap/Bootstrap.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace cclc::net {

/// True when CCLC_P2P_DISABLE (or, where it is unset, NCCL_P2P_DISABLE) is
/// 1; throws NetError naming the variable when it is neither 0 nor 1.
bool p2pDisabledByEnvironment();

class PeerAccess {
public:
  /// Whether this rank's process can map the memory of the GPU with PCI bus
  /// id PeerBusId and write it from its own GPU.
  using Reach = std::function<bool(const std::string &PeerBusId)>;

  /// Collective: every rank of B constructs one, in the same order. BusId
  /// names this rank's GPU; CanReach is asked about the GPU of every other
  /// rank of this host, unless the environment turns peer access off.
  PeerAccess(Bootstrap &B, const std::string &BusId, const Reach &CanReach);

  /// True when this rank and Peer, of the same host, reach each other's GPU
  /// directly; false for ranks of other hosts.
  bool direct(int Peer) const;
  /// The PCI bus id of Rank's GPU.
  const std::string &busId(int Rank) const { return BusIds.at(size_t(Rank)); }
  /// One line saying how this rank reaches each peer of its host, and why
  /// not directly where it does not, for CCLC_DEBUG=INFO.
  std::string describe() const;

private:
  /// What a rank says about a peer of its host.
  enum class Answer : uint8_t { No, Yes, Disabled };

  /// Rank's answer about Peer (both of one host).
  Answer answer(int Rank, int Peer) const;

  const Bootstrap &B;
  std::vector<std::string> BusIds;
  /// Each rank's ranks of its own host, in rank order.
  std::vector<std::vector<int>> HostRanks;
  /// Row R: rank R's answers about the ranks of its host, by position in
  /// HostRanks[R], padded to Width.
  std::vector<Answer> Answers;
  size_t Width = 0;
};

} // namespace cclc::net
