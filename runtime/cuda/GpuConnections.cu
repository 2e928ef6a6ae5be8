//===- GpuConnections.cu - A GPU rank's links to its peers -----*- CUDA -*-===//
//
// The setup runs in the steps of net::LinkSetup. Before the descriptions go
// out, each receiver of a CUDA IPC link allocates and zeroes its block and
// puts what the sender needs to map it (handle, pointer, process, device)
// in its offer; the zeroing has completed before the offer leaves, so a
// sender's kernel never meets stale counters. Then each sender maps the
// block it was offered, and the TCP links get FIFOs in mapped pinned memory
// and a proxy. The tables are uploaded last, on a stream of the setup's own.
//
//===----------------------------------------------------------------------===//

#include "runtime/cuda/GpuConnections.h"

#include "cuda/Kernel.cuh"
#include "runtime/transport/tcp/TcpTransport.h"

#include <cstring>
#include <unistd.h>

namespace cclc::gpu {

using net::rankName;

namespace {

/// "cclcipc" and a version.
constexpr uint32_t OfferMagic = 0x69'70'63'01u;

/// What the receiver of a CUDA IPC link tells its sender about the block it
/// receives in.
struct IpcOffer {
  uint32_t Magic = OfferMagic;
  int32_t Device = -1;               ///< The receiver's device, as its process numbers it.
  int32_t HandleError = cudaSuccess; ///< Why Handle is missing, when it is.
  int32_t Pid = 0;
  uint64_t Process = 0; ///< processToken() of the receiver's process.
  uint64_t Pointer = 0; ///< The block's address in the receiver's process.
  uint64_t Bytes = 0;
  cudaIpcMemHandle_t Handle{};
};

/// A random number per process: two ranks share an address space exactly
/// when they have the same one (process ids repeat across containers).
uint64_t processToken() {
  static const uint64_t Token = net::randomSecret();
  return Token;
}

/// Bytes from one FIFO of a block to the next: every FIFO starts 64-byte
/// aligned, as common/Fifo.h requires.
size_t fifoStride(const net::LinkOptions &Options) {
  return (cuda::Fifo::bytesFor(Options.NumSlots, Options.SlotBytes) + 63) / 64 * 64;
}

/// Bytes of a block that CUDA IPC shares, at least Bytes: a multiple of
/// 2 MiB. cudaMalloc may carve a smaller allocation out of a larger block of
/// memory, and CUDA IPC then maps that whole block into the peer, with
/// whatever else the process keeps there; a block of whole 2 MiB pages is
/// an allocation of its own.
size_t ipcBlockBytes(size_t Bytes) {
  constexpr size_t Page = size_t(2) << 20;
  return (Bytes + Page - 1) / Page * Page;
}

/// The connection tables of one rank, on the host, by peer and channel.
struct TableBuilder {
  int NPeers;
  std::vector<cuda::Outbox> Outs;
  std::vector<cuda::Inbox> Ins;

  TableBuilder(int NPeers, int NChannels)
      : NPeers(NPeers), Outs(size_t(NPeers) * size_t(NChannels)),
        Ins(size_t(NPeers) * size_t(NChannels)) {}
  cuda::Outbox &out(int Peer, int Channel) { return Outs[size_t(Channel) * NPeers + Peer]; }
  cuda::Inbox &in(int Peer, int Channel) { return Ins[size_t(Channel) * NPeers + Peer]; }
};

/// The offer of Block, on Device.
std::string offerOf(const DeviceBuffer &Block, int Device) {
  IpcOffer O;
  O.Device = Device;
  O.Pid = int32_t(::getpid());
  O.Process = processToken();
  O.Pointer = uint64_t(reinterpret_cast<uintptr_t>(Block.get()));
  O.Bytes = Block.bytes();
  // Ranks of one process need no handle, and some platforms give none; a
  // sender that needs it reports why it is missing.
  O.HandleError = cudaIpcGetMemHandle(&O.Handle, Block.get());
  if (O.HandleError != cudaSuccess)
    cudaGetLastError();
  return std::string(reinterpret_cast<const char *>(&O), sizeof O);
}

/// Peer's offer, checked to hold at least Bytes.
IpcOffer readOffer(const std::string &Offer, int Peer, size_t Bytes) {
  IpcOffer O;
  if (Offer.size() != sizeof O)
    throw net::NetError(rankName(Peer) + " offered its FIFO memory in another format; the ranks "
                                         "run different builds");
  std::memcpy(&O, Offer.data(), sizeof O);
  if (O.Magic != OfferMagic || O.Bytes < Bytes)
    throw net::NetError(rankName(Peer) + " offered " + std::to_string(O.Bytes) +
                        " bytes of FIFO memory where " + std::to_string(Bytes) +
                        " are needed; the ranks run different builds");
  return O;
}

} // namespace

/// A peer's block, as this process addresses it: opened from its IPC
/// handle (and closed with this object), or, for a rank of this process,
/// the peer's own pointer.
class GpuConnections::PeerMemory {
public:
  /// Maps the block of Offer, which Rank on Device sends to Peer in.
  PeerMemory(const IpcOffer &Offer, int Rank, int Peer, int Device) {
    std::string Whose = "the FIFO memory of " + rankName(Peer) + " (process " +
                        std::to_string(Offer.Pid) + ", GPU " + std::to_string(Offer.Device) +
                        ") for " + rankName(Rank) + " (GPU " + std::to_string(Device) + ")";
    if (Offer.Process == processToken() && Offer.Pid == int32_t(::getpid())) {
      Base = reinterpret_cast<void *>(uintptr_t(Offer.Pointer));
      if (Offer.Device != Device)
        enablePeerAccess(Offer.Device, Device, Whose);
      return;
    }
    const char *Remedy = "run the ranks' processes where they share GPUs and IPC (containers need "
                         "--ipc=host), or set CCLC_TRANSPORT=tcp";
    check(cudaError_t(Offer.HandleError),
          "cannot map " + Whose + ": its owner got no IPC handle for it", Remedy);
    check(cudaIpcOpenMemHandle(&Base, Offer.Handle, cudaIpcMemLazyEnablePeerAccess),
          "cannot map " + Whose, Remedy);
    Opened = true;
  }
  ~PeerMemory() {
    if (!Opened)
      return;
    RelaxedCapture Relaxed;
    cudaIpcCloseMemHandle(Base);
  }
  PeerMemory(const PeerMemory &) = delete;
  PeerMemory &operator=(const PeerMemory &) = delete;

  std::byte *base() const { return static_cast<std::byte *>(Base); }

private:
  void *Base = nullptr;
  bool Opened = false;

  /// Lets the current device (Device) write to Peer's memory directly.
  static void enablePeerAccess(int PeerDevice, int Device, const std::string &Whose) {
    int Can = 0;
    check(cudaDeviceCanAccessPeer(&Can, Device, PeerDevice), "cannot reach " + Whose);
    if (!Can)
      throw CudaError(cudaErrorPeerAccessUnsupported,
                      "GPU " + std::to_string(Device) + " cannot write to GPU " +
                          std::to_string(PeerDevice) + ", which holds " + Whose +
                          "; place the ranks on GPUs with peer access, or set "
                          "CCLC_TRANSPORT=tcp");
    cudaError_t Err = cudaDeviceEnablePeerAccess(PeerDevice, 0);
    if (Err == cudaErrorPeerAccessAlreadyEnabled)
      cudaGetLastError();
    else
      check(Err, "cannot enable peer access to " + Whose);
  }
};

GpuConnections::GpuConnections(net::Bootstrap &B, std::span<const net::Link> Sends,
                               std::span<const net::Link> Recvs, const net::LinkOptions &Options,
                               std::atomic<uint32_t> &Abort)
    : Rank(B.rank()), Abort(Abort) {
  RelaxedCapture Relaxed;
  int Device = 0;
  check(cudaGetDevice(&Device), "cannot tell which GPU " + rankName(Rank) + " runs on");
  net::LinkSetup Setup(B, Sends, Recvs, Options, net::TransportKind::CudaIpc);
  Kinds = Setup.kinds();
  TableBuilder Table(B.size(), Setup.numChannels());
  OwnStream Stream("setting up the GPU connections of " + rankName(Rank));
  size_t Stride = fifoStride(Options);
  auto Place = [&](void *Mem) {
    return cuda::Fifo::place(Mem, Options.NumSlots, Options.SlotBytes);
  };

  for (auto &[Peer, P] : Setup.peers()) {
    if (P.Kind != net::TransportKind::CudaIpc || P.Recvs.empty())
      continue;
    DeviceBuffer &Block = Blocks.emplace_back(ipcBlockBytes(P.Recvs.size() * Stride),
                                              "the FIFOs " + rankName(Rank) + " receives from " +
                                                  rankName(Peer) + " in");
    check(cudaMemsetAsync(Block.get(), 0, Block.bytes(), Stream.get()),
          "cannot clear the FIFOs " + rankName(Rank) + " receives in");
    P.Offer = offerOf(Block, Device);
    auto *Base = static_cast<std::byte *>(Block.get());
    for (size_t I = 0; I < P.Recvs.size(); ++I)
      Table.in(Peer, P.Recvs[I]) = cuda::Inbox{Place(Base + I * Stride), Peer};
  }
  Stream.finish("cannot clear the FIFOs " + rankName(Rank) + " receives in");
  Setup.describe();
  Setup.attach([&](int Peer, net::PeerLinks &P) {
    IpcOffer Offer = readOffer(P.PeerOffer, Peer, P.Sends.size() * Stride);
    std::byte *Base =
        PeerBlocks.emplace_back(std::make_unique<PeerMemory>(Offer, Rank, Peer, Device))->base();
    for (size_t I = 0; I < P.Sends.size(); ++I)
      Table.out(Peer, P.Sends[I]) = cuda::Outbox{Place(Base + I * Stride), Peer};
  });
  Proxy = Setup.connectTcp(
      [&](int Peer, int Channel, bool Send) {
        MappedBuffer &Mem = TcpFifos.emplace_back(Stride, "a FIFO between " + rankName(Rank) +
                                                              " and " + rankName(Peer));
        if (Send)
          Table.out(Peer, Channel) = cuda::Outbox{Place(Mem.device()), Peer};
        else
          Table.in(Peer, Channel) = cuda::Inbox{Place(Mem.device()), Peer};
        return host::Fifo::place(Mem.host(), Options.NumSlots, Options.SlotBytes, /*Init=*/true);
      },
      Abort, [this](const std::string &Cause) { abort(Cause); });

  OutTable = upload(Table.Outs, Stream.get(), "the send table of " + rankName(Rank));
  InTable = upload(Table.Ins, Stream.get(), "the receive table of " + rankName(Rank));
  Stream.finish("cannot copy the connection tables of " + rankName(Rank) + " to the device");
  Tables = std::make_unique<cuda::Links>(cuda::Links{static_cast<cuda::Outbox *>(OutTable.get()),
                                                     static_cast<cuda::Inbox *>(InTable.get()),
                                                     int32_t(B.size())});
}

GpuConnections::~GpuConnections() { Proxy.reset(); }

const cuda::Links &GpuConnections::links() const { return *Tables; }

const char *GpuConnections::transportName(int Peer) const {
  auto It = Kinds.find(Peer);
  if (It == Kinds.end())
    throw net::NetError(rankName(Rank) + " has no link with " + rankName(Peer));
  return net::transportName(It->second);
}

void GpuConnections::abort(const std::string &Cause) {
  Failure.record(Cause);
  Abort.store(1, std::memory_order_release);
}

std::string GpuConnections::failure() const { return Failure.get(); }

} // namespace cclc::gpu
