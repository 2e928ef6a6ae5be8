//===- GpuConnections.h - A GPU rank's links to its peers -------*- C++ -*-===//
//
// GpuConnections gives a rank's kernels the cuda::Links they run on: one
// FIFO per (peer, channel, direction) that the rank's plan uses, as
// net::Connections does for host executors, in memory the kernels reach.
// The setup steps (grouping links by peer, agreeing with each peer, opening
// sockets) are net::LinkSetup's; only where the FIFOs live differs.
//
// Peers on the same host whose GPUs write each other's memory
// (net::PeerAccess) use CUDA IPC: each rank allocates, per such peer, one
// block of device memory holding the FIFOs of every channel it receives on
// from the peer and the Head words of every channel it sends on to it, and
// hands the peer an IPC handle. The sender's kernel writes its messages and
// Tail straight into the receiver's memory, the receiver's kernel writes
// Head into the sender's, and each polls only its own GPU's memory. Ranks
// that are threads of one process share the address space and use the
// pointer itself. Peers on other hosts, same-host peers without peer access
// and every peer with CCLC_TRANSPORT=tcp use TCP: both sides' FIFOs lie in
// mapped pinned host memory, where the kernel posts and a net::TcpProxy
// thread carries messages between the ranks.
//
// Teardown runs in two halves, so that no rank frees memory a peer still
// maps: once the kernels have ended, closePeerMemory() unmaps the peers'
// blocks; the communicator then waits for every rank to do so before the
// destructor frees this rank's own.
//
// The connection tables are uploaded once: FIFO counters run on from one
// collective to the next, so connections are reused without a reset. This
// header does not need the CUDA device templates, so host code can hold a
// GpuConnections and hand its links() to CUDA code.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/cuda/CudaError.h"
#include "runtime/transport/LinkSetup.h"
#include "runtime/transport/PeerAccess.h"

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace cclc::net {
class TcpProxy;
} // namespace cclc::net

namespace cclc::cuda {
struct Links;
} // namespace cclc::cuda

namespace cclc::gpu {

/// The PCI bus id of Device ("0000:3b:00.0"), which names a GPU alike in
/// every process of the host.
std::string gpuBusId(int Device);

/// Whether Device can write the memory of the GPU with PCI bus id PeerBusId:
/// the same GPU, or one this process sees with peer access to it. The
/// net::PeerAccess::Reach of a rank on Device.
bool canWriteTo(int Device, const std::string &PeerBusId);

class GpuConnections {
public:
  /// Connects, for the calling thread's current CUDA device, the FIFOs this
  /// rank sends on (Sends) and receives on (Recvs), as net::Connections does
  /// for host memory. Collective: every rank with links constructs its
  /// GpuConnections in the same order. Abort is the host view of a word in
  /// mapped pinned memory that the kernels poll (cuda::KernelArgs::Abort);
  /// the TCP proxy stops when it is raised and raises it when it fails.
  /// Access says which same-host peers are reached over CUDA IPC. The proxy
  /// keeps polling without pause while InFlight (mapped memory that the
  /// kernels count themselves in; may be null) is nonzero.
  GpuConnections(net::Bootstrap &B, std::span<const net::Link> Sends,
                 std::span<const net::Link> Recvs, const net::LinkOptions &Options,
                 const net::PeerAccess &Access, std::atomic<uint32_t> &Abort,
                 const std::atomic<uint32_t> *InFlight = nullptr);
  /// Sends what the kernels posted (TCP), then frees the FIFOs: no kernel
  /// may use links() any more, and every peer must have called
  /// closePeerMemory() (or be gone).
  ~GpuConnections();
  GpuConnections(const GpuConnections &) = delete;
  GpuConnections &operator=(const GpuConnections &) = delete;

  /// What a kernel takes: device-memory tables of cuda::Outbox / cuda::Inbox,
  /// entry Channel * NPeers + Peer (NPeers = B.size(); channels up to the
  /// largest channel of Sends/Recvs); entries of links not connected are
  /// default (empty) views.
  const cuda::Links &links() const;
  /// The transport used towards Peer, for logs: "cuda-ipc" or "tcp".
  const char *transportName(int Peer) const;
  /// Records Cause (the first one wins) and raises Abort.
  void abort(const std::string &Cause);
  /// The first cause recorded or detected by the proxy; empty while none.
  std::string failure() const;
  /// Unmaps the peers' memory this rank sends and acknowledges in, once no
  /// kernel uses links() any more: the first half of a teardown.
  void closePeerMemory();

private:
  class PeerMemory;

  int Rank;
  std::atomic<uint32_t> &Abort;
  net::FailureCause Failure;
  std::map<int, net::TransportKind> Kinds;
  /// The blocks this rank shares over CUDA IPC, one per peer: its receive
  /// FIFOs and its send Head words.
  std::vector<DeviceBuffer> Blocks;
  /// The peers' blocks, by peer.
  std::map<int, std::unique_ptr<PeerMemory>> PeerBlocks;
  /// The FIFOs of the TCP links, one allocation each.
  std::vector<MappedBuffer> TcpFifos;
  DeviceBuffer OutTable, InTable;
  std::unique_ptr<cuda::Links> Tables;
  std::unique_ptr<net::TcpProxy> Proxy;
};

} // namespace cclc::gpu
