//===- GpuConnections.cu - A GPU rank's links to its peers -----*- CUDA -*-===//
//
// The setup runs in the steps of net::LinkSetup. Same-host peers whose GPUs
// cannot write each other's memory are moved to TCP first. Before the
// descriptions go out, each rank allocates and zeroes its block for every
// CUDA IPC peer and puts what the peer needs to map it (handle, pointer,
// process, device and its PCI bus id) in its offer; the zeroing has
// completed before the offer leaves, so a peer's kernel never meets stale
// counters. Then each rank maps the blocks it was offered, and the TCP
// links get FIFOs in mapped pinned memory and a proxy. The tables are
// uploaded last, on a stream of the setup's own.
//
// A block for a peer holds, from its start, the FIFO of each channel this
// rank receives on from the peer (one fifoStride() each, in channel order),
// then the Head word of each channel it sends on to the peer (one
// cuda::HeadWordBytes each, in channel order).
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
constexpr uint32_t OfferMagic = 0x69'70'63'02u;

/// Bytes of a PCI bus id, "0000:00:00.0" and its terminator with room.
constexpr size_t BusIdBytes = 32;

/// What a rank tells a CUDA IPC peer about the block it shares with it.
struct IpcOffer {
  uint32_t Magic = OfferMagic;
  int32_t Device = -1;               ///< The owner's device, as its process numbers it.
  int32_t HandleError = cudaSuccess; ///< Why Handle is missing, when it is.
  int32_t Pid = 0;
  uint64_t Process = 0; ///< processToken() of the receiver's process.
  uint64_t Pointer = 0; ///< The block's address in the receiver's process.
  uint64_t Bytes = 0;
  cudaIpcMemHandle_t Handle{};
  char BusId[BusIdBytes] = {}; ///< The owner's device, as every process names it.
};

/// A random number per process: two ranks share an address space exactly
/// when they have the same one (process ids repeat across containers).
uint64_t processToken() {
  static const uint64_t Token = net::randomSecret();
  return Token;
}

/// Bytes from one FIFO of a block to the next: every FIFO starts aligned as
/// common/Fifo.h requires.
size_t fifoStride(const net::LinkOptions &Options) {
  constexpr size_t Align = kern::FifoAlignBytes;
  return (cuda::Fifo::bytesFor(Options.NumSlots, Options.SlotBytes) + Align - 1) / Align * Align;
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
  std::strncpy(O.BusId, gpuBusId(Device).c_str(), BusIdBytes - 1);
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

/// The number this process gives the GPU on BusId, or -1 where it does not
/// see that GPU (and so cannot map its memory).
int deviceOf(const char *BusId) {
  int Device = -1;
  if (cudaDeviceGetByPCIBusId(&Device, BusId) != cudaSuccess) {
    cudaGetLastError();
    return -1;
  }
  return Device;
}

} // namespace

std::string gpuBusId(int Device) {
  char Id[BusIdBytes] = {};
  check(cudaDeviceGetPCIBusId(Id, int(BusIdBytes), Device),
        "cannot read the PCI bus id of GPU " + std::to_string(Device));
  return Id;
}

bool canWriteTo(int Device, const std::string &PeerBusId) {
  int PeerDevice = deviceOf(PeerBusId.c_str());
  if (PeerDevice < 0)
    return false;
  if (PeerDevice == Device)
    return true;
  int Can = 0;
  if (cudaDeviceCanAccessPeer(&Can, Device, PeerDevice) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  return Can != 0;
}

/// Whether the 128 bytes a warp of Device stores at once reach the GPU on
/// PeerBusId whole, and back, which LL128 relies on (common/Protocol.h):
/// on one GPU, or between GPUs whose link carries native atomics both ways
/// (NVLink; PCIe does not promise it). Both ends of a link decide alike.
static bool linesArriveWhole(int Device, const char *PeerBusId) {
  int PeerDevice = deviceOf(PeerBusId);
  if (PeerDevice < 0)
    return false;
  if (PeerDevice == Device)
    return true;
  int There = 0, Back = 0;
  if (cudaDeviceGetP2PAttribute(&There, cudaDevP2PAttrNativeAtomicSupported, Device, PeerDevice) !=
          cudaSuccess ||
      cudaDeviceGetP2PAttribute(&Back, cudaDevP2PAttrNativeAtomicSupported, PeerDevice, Device) !=
          cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  return There && Back;
}

/// A peer's block, as this process addresses it: opened from its IPC
/// handle (and closed with this object), or, for a rank of this process,
/// the peer's own pointer.
class GpuConnections::PeerMemory {
public:
  /// Maps the block of Offer, which Rank on Device sends to Peer in.
  PeerMemory(const IpcOffer &Offer, int Rank, int Peer, int Device) {
    std::string Whose = "the FIFO memory of " + rankName(Peer) + " (process " +
                        std::to_string(Offer.Pid) + ", GPU " + Offer.BusId + ") for " +
                        rankName(Rank) + " (GPU " + std::to_string(Device) + ")";
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
                          ", though the ranks agreed it could; set CCLC_P2P_DISABLE=1");
    cudaError_t Err = cudaDeviceEnablePeerAccess(PeerDevice, 0);
    if (Err == cudaErrorPeerAccessAlreadyEnabled)
      cudaGetLastError();
    else
      check(Err, "cannot enable peer access to " + Whose);
  }
};

GpuConnections::GpuConnections(net::Bootstrap &B, std::span<const net::Link> Sends,
                               std::span<const net::Link> Recvs, const net::LinkOptions &Options,
                               const net::PeerAccess &Access, std::atomic<uint32_t> &Abort,
                               const std::atomic<uint32_t> *InFlight)
    : Rank(B.rank()), Abort(Abort) {
  RelaxedCapture Relaxed;
  int Device = 0;
  check(cudaGetDevice(&Device), "cannot tell which GPU " + rankName(Rank) + " runs on");
  net::LinkSetup Setup(B, Sends, Recvs, Options, net::TransportKind::CudaIpc);
  for (auto &[Peer, P] : Setup.peers())
    if (P.Kind == net::TransportKind::CudaIpc && !Access.direct(Peer))
      P.Kind = net::TransportKind::Tcp;
  Kinds = Setup.kinds();
  TableBuilder Table(B.size(), Setup.numChannels());
  OwnStream Stream("setting up the GPU connections of " + rankName(Rank));
  size_t Stride = fifoStride(Options);
  auto Place = [&](void *Mem) {
    return cuda::Fifo::place(Mem, Options.NumSlots, Options.SlotBytes);
  };

  std::map<int, std::byte *> OwnBases;
  for (auto &[Peer, P] : Setup.peers()) {
    if (P.Kind != net::TransportKind::CudaIpc)
      continue;
    DeviceBuffer &Block = Blocks.emplace_back(
        ipcBlockBytes(P.Recvs.size() * Stride + P.Sends.size() * cuda::HeadWordBytes),
        "the FIFOs " + rankName(Rank) + " shares with " + rankName(Peer));
    check(cudaMemsetAsync(Block.get(), 0, Block.bytes(), Stream.get()),
          "cannot clear the FIFOs " + rankName(Rank) + " receives in");
    P.Offer = offerOf(Block, Device);
    OwnBases[Peer] = static_cast<std::byte *>(Block.get());
  }
  Stream.finish("cannot clear the FIFOs " + rankName(Rank) + " receives in");
  Setup.describe();
  // Maps Peer's block, once, and fills both directions' table entries: the
  // FIFOs lie in the receiver's block, the Head words in the sender's.
  auto Map = [&](int Peer, net::PeerLinks &P) {
    if (PeerBlocks.count(Peer))
      return;
    IpcOffer Offer = readOffer(P.PeerOffer, Peer,
                               P.Sends.size() * Stride + P.Recvs.size() * cuda::HeadWordBytes);
    std::byte *Theirs =
        PeerBlocks.emplace(Peer, std::make_unique<PeerMemory>(Offer, Rank, Peer, Device))
            .first->second->base();
    std::byte *Mine = OwnBases.at(Peer);
    std::byte *MyHeads = Mine + P.Recvs.size() * Stride;
    std::byte *TheirHeads = Theirs + P.Sends.size() * Stride;
    // Both ends of these FIFOs are kernels, so steps of the line protocols
    // may use them (LL128 where its lines arrive whole); the proxied FIFOs
    // below stay simple.
    const bool WholeLines = linesArriveWhole(Device, Offer.BusId);
    for (size_t I = 0; I < P.Sends.size(); ++I) {
      cuda::Outbox &Out = Table.out(Peer, P.Sends[I]) = cuda::Outbox{
          Place(Theirs + I * Stride), Peer,
          reinterpret_cast<const uint64_t *>(MyHeads + I * cuda::HeadWordBytes), 0};
      Out.LowLatency = true;
      Out.WholeLines = WholeLines;
    }
    for (size_t I = 0; I < P.Recvs.size(); ++I) {
      cuda::Inbox &In = Table.in(Peer, P.Recvs[I]) =
          cuda::Inbox{Place(Mine + I * Stride), Peer,
                      reinterpret_cast<uint64_t *>(TheirHeads + I * cuda::HeadWordBytes), 0};
      In.LowLatency = true;
      In.WholeLines = WholeLines;
    }
  };
  Setup.attach(Map, Map);
  Proxy = Setup.connectTcp(
      [&](int Peer, int Channel, bool Send) {
        MappedBuffer &Mem = TcpFifos.emplace_back(Stride, "a FIFO between " + rankName(Rank) +
                                                              " and " + rankName(Peer));
        cuda::Fifo Q = Place(Mem.device());
        if (Send)
          Table.out(Peer, Channel) = cuda::Outbox::inHeader(Q, Peer);
        else
          Table.in(Peer, Channel) = cuda::Inbox::inHeader(Q, Peer);
        return host::Fifo::place(Mem.host(), Options.NumSlots, Options.SlotBytes, /*Init=*/true);
      },
      Abort, [this](const std::string &Cause) { abort(Cause); }, InFlight,
      [this] { return failure(); });

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

void GpuConnections::closePeerMemory() { PeerBlocks.clear(); }

} // namespace cclc::gpu
