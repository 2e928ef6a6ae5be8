//===- ShmTransport.cpp - FIFOs in POSIX shared memory --------------------===//

#include "runtime/transport/shm/ShmTransport.h"

#include "runtime/bootstrap/Bootstrap.h"
#include "runtime/transport/shm/CallBoard.h"
#include "runtime/transport/shm/SharedBuffers.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

namespace cclc::net {

namespace {

/// "cclcshm" and a layout version.
constexpr uint32_t SegmentMagic = 0x63'73'68'04u;

/// One side of a segment as the other side finds its process: its id as
/// it sees it, where its memory holds Mark, which tells a peer that reads
/// it there that it may reach into that memory and that the id names the
/// process in the peer's namespace of processes too, and its descriptor of
/// its probe (SharedBuffers.h), which tells that its buffers from
/// cclcMemAlloc can be mapped.
struct ProcessCard {
  int32_t Pid = 0;
  int32_t ProbeFd = -1;
  uint64_t MarkAddress = 0;
  uint64_t Mark = 0;
};

/// The first two cache lines of a segment; the two sides' call board
/// (CallBoard.h) and the FIFOs follow, each on cache lines of its own.
struct SegmentHeader {
  alignas(64) std::atomic<uint32_t> Abort{0};
  uint32_t Magic = 0;
  uint32_t NumFifos = 0;
  uint32_t NumSlots = 0;
  uint64_t SlotBytes = 0;
  /// The smallest message the receiver offers its buffers for
  /// (CCLC_SINGLE_COPY): the senders go by it, whatever they were told.
  uint64_t SingleCopyMin = 0;
  /// The receiver, so that the sender can write into its buffers.
  ProcessCard Receiver;
  /// The sender, written when it attaches, so that the receiver can read
  /// the messages it leaves in its buffers.
  alignas(64) ProcessCard Sender;
};

static_assert(sizeof(SegmentHeader) == 128);

/// A value only this process holds at its address: a process that reads it
/// there through another's id has found this process.
const uint64_t &processMark() {
  static const uint64_t Mark = randomSecret() | 1;
  return Mark;
}

/// This process, as its peers find it.
ProcessCard thisProcess() {
  return {int32_t(::getpid()), SharedBuffers::process().probeFd(),
          uint64_t(uintptr_t(&processMark())), processMark()};
}

/// The process Card describes, if this process may reach into its memory
/// (process_vm_readv) and finds it by that id; else 0 and why not.
std::pair<pid_t, std::string> reachable(const ProcessCard &Card) {
  uint64_t Read = 0;
  iovec Local{&Read, sizeof Read};
  iovec Remote{reinterpret_cast<void *>(uintptr_t(Card.MarkAddress)), sizeof Read};
  ssize_t Got = ::process_vm_readv(pid_t(Card.Pid), &Local, 1, &Remote, 1, 0);
  if (Got < 0)
    return {0, std::string("reading its memory failed: ") + std::strerror(errno)};
  if (Got != ssize_t(sizeof Read) || Read != Card.Mark)
    return {0, "its process id names another process here (separate process namespaces)"};
  return {pid_t(Card.Pid), ""};
}

size_t fifoStride(uint32_t NumSlots, size_t SlotBytes) {
  return (host::Fifo::bytesFor(NumSlots, SlotBytes) + 63) / 64 * 64;
}

size_t fifosOffset() { return sizeof(SegmentHeader) + CallBoard::bytes(); }

size_t segmentBytes(uint32_t NumFifos, uint32_t NumSlots, size_t SlotBytes) {
  return fifosOffset() + NumFifos * fifoStride(NumSlots, SlotBytes);
}

SegmentHeader &header(void *Base) { return *static_cast<SegmentHeader *>(Base); }

/// Closes a descriptor on every way out of a scope.
struct FdGuard {
  int Fd;
  ~FdGuard() {
    if (Fd >= 0)
      ::close(Fd);
  }
};

void *mapShared(int Fd, size_t Bytes, const std::string &Name) {
  void *Base = ::mmap(nullptr, Bytes, PROT_READ | PROT_WRITE, MAP_SHARED, Fd, 0);
  if (Base == MAP_FAILED)
    throw NetError("cannot map the shared memory segment " + Name + ": " + std::strerror(errno));
  return Base;
}

} // namespace

ShmSegment::ShmSegment(std::string Name, void *Base, size_t Bytes, bool Linked)
    : Name(std::move(Name)), Base(Base), Bytes(Bytes), Linked(Linked) {}

std::unique_ptr<ShmSegment> ShmSegment::create(const std::string &Name, uint32_t NumFifos,
                                               uint32_t NumSlots, size_t SlotBytes,
                                               size_t SingleCopyMin) {
  size_t Bytes = segmentBytes(NumFifos, NumSlots, SlotBytes);
  FdGuard Fd{::shm_open(Name.c_str(), O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0600)};
  if (Fd.Fd < 0)
    throw NetError("cannot create the shared memory segment " + Name + ": " + std::strerror(errno));
  // From here on, a failure removes the name again.
  std::unique_ptr<ShmSegment> Seg(new ShmSegment(Name, nullptr, Bytes, true));
  // Reserve the pages now: running out of /dev/shm later would be a SIGBUS.
  if (int Err = ::posix_fallocate(Fd.Fd, 0, off_t(Bytes)))
    throw NetError("cannot allocate " + std::to_string(Bytes) + " bytes of shared memory for " +
                   Name + ": " + std::strerror(Err) +
                   "; /dev/shm may be too small (containers: raise --shm-size), or the slots "
                   "too large");
  Seg->Base = mapShared(Fd.Fd, Bytes, Name);
  SegmentHeader *H = new (Seg->Base) SegmentHeader();
  H->NumFifos = NumFifos;
  H->NumSlots = NumSlots;
  H->SlotBytes = SlotBytes;
  H->SingleCopyMin = SingleCopyMin;
  H->Receiver = thisProcess();
  CallBoard::init(Seg->boardMemory());
  for (uint32_t I = 0; I < NumFifos; ++I)
    host::Fifo::place(static_cast<std::byte *>(Seg->Base) + fifosOffset() +
                          I * fifoStride(NumSlots, SlotBytes),
                      NumSlots, SlotBytes, /*Init=*/true);
  H->Magic = SegmentMagic;
  return Seg;
}

std::unique_ptr<ShmSegment> ShmSegment::attach(const std::string &Name, uint32_t NumFifos,
                                               uint32_t NumSlots, size_t SlotBytes) {
  size_t Bytes = segmentBytes(NumFifos, NumSlots, SlotBytes);
  FdGuard Fd{::shm_open(Name.c_str(), O_RDWR | O_CLOEXEC, 0)};
  if (Fd.Fd < 0)
    throw NetError("cannot open the shared memory segment " + Name + ": " + std::strerror(errno) +
                   "; the ranks may not share /dev/shm (set CCLC_TRANSPORT=tcp)");
  struct stat St;
  if (::fstat(Fd.Fd, &St) != 0 || size_t(St.st_size) != Bytes)
    throw NetError("the shared memory segment " + Name + " does not have the expected size");
  std::unique_ptr<ShmSegment> Seg(
      new ShmSegment(Name, mapShared(Fd.Fd, Bytes, Name), Bytes, /*Linked=*/false));
  const SegmentHeader &H = header(Seg->Base);
  if (H.Magic != SegmentMagic || H.NumFifos != NumFifos || H.NumSlots != NumSlots ||
      H.SlotBytes != SlotBytes)
    throw NetError("the shared memory segment " + Name + " holds other FIFOs than expected");
  return Seg;
}

std::string ShmSegment::uniqueName(int Receiver, int Sender) {
  char Name[96];
  std::snprintf(Name, sizeof Name, "/cclc-%d-%016llx-%d-%d", int(::getpid()),
                static_cast<unsigned long long>(randomSecret()), Receiver, Sender);
  return Name;
}

bool ShmSegment::isNameFor(const std::string &Name, int Receiver, int Sender) {
  std::string Prefix = "/cclc-", Suffix = "-" + std::to_string(Receiver) + "-" +
                                          std::to_string(Sender);
  return Name.size() > Prefix.size() + Suffix.size() && Name.size() < 96 &&
         Name.compare(0, Prefix.size(), Prefix) == 0 &&
         Name.compare(Name.size() - Suffix.size(), Suffix.size(), Suffix) == 0 &&
         Name.find('/', 1) == std::string::npos;
}

void ShmSegment::removeOffered(const std::string &Name, int Receiver, int Sender) {
  if (isNameFor(Name, Receiver, Sender))
    ::shm_unlink(Name.c_str());
}

ShmSegment::~ShmSegment() {
  unlink();
  if (Base)
    ::munmap(Base, Bytes);
}

host::Fifo ShmSegment::fifo(uint32_t Index) const {
  const SegmentHeader &H = header(Base);
  return host::Fifo::place(static_cast<std::byte *>(Base) + fifosOffset() +
                               Index * fifoStride(H.NumSlots, H.SlotBytes),
                           H.NumSlots, H.SlotBytes, /*Init=*/false);
}

std::atomic<uint32_t> &ShmSegment::abortWord() { return header(Base).Abort; }

void *ShmSegment::boardMemory() { return static_cast<std::byte *>(Base) + sizeof(SegmentHeader); }

size_t ShmSegment::singleCopyMin() const { return size_t(header(Base).SingleCopyMin); }

std::pair<pid_t, std::string> ShmSegment::receiverProcess() const {
  const SegmentHeader &H = header(Base);
  if (!H.SingleCopyMin)
    return {0, "the receiver has CCLC_SINGLE_COPY=0"};
  return reachable(H.Receiver);
}

std::pair<pid_t, int> ShmSegment::senderProcess() const {
  const ProcessCard &Sender = header(Base).Sender;
  if (!Sender.Pid)
    return {0, -1};
  auto [Pid, WhyNot] = reachable(Sender);
  return {Pid, Sender.ProbeFd};
}

void ShmSegment::introduceSender() { header(Base).Sender = thisProcess(); }

int ShmSegment::receiverProbe() const { return int(header(Base).Receiver.ProbeFd); }

void ShmSegment::unlink() {
  if (Linked)
    ::shm_unlink(Name.c_str());
  Linked = false;
}

} // namespace cclc::net
