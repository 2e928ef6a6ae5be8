//===- SharedBuffers.cpp - Host buffers the ranks of a host map ------------===//

#include "runtime/transport/shm/SharedBuffers.h"

#include "runtime/net/Socket.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace cclc::net {

namespace {

/// The name of buffer Id's memory file, which a sender checks.
std::string bufferName(uint64_t Id) { return "cclc-buffer-" + std::to_string(Id); }
constexpr const char *ProbeName = "cclc-probe";

size_t pageBytes() { return size_t(::sysconf(_SC_PAGESIZE)); }

/// The name of this process's descriptor Fd as /proc shows it: a memory
/// file's is "/memfd:NAME (deleted)".
std::string fdTarget(int Fd) {
  char Path[64], Target[256];
  std::snprintf(Path, sizeof Path, "/proc/self/fd/%d", Fd);
  ssize_t N = ::readlink(Path, Target, sizeof Target - 1);
  return N < 0 ? std::string() : std::string(Target, size_t(N));
}

} // namespace

SharedBuffers &SharedBuffers::process() {
  // Never destroyed: buffers may be freed by static destructors elsewhere.
  static SharedBuffers *Buffers = new SharedBuffers();
  return *Buffers;
}

void *SharedBuffers::allocate(size_t Bytes) {
  size_t Page = pageBytes();
  Bytes = (std::max<size_t>(Bytes, 1) + Page - 1) / Page * Page;
  std::lock_guard<std::mutex> Hold(Lock);
  uint64_t Id = NextId++;
  int Fd = ::memfd_create(bufferName(Id).c_str(), MFD_CLOEXEC);
  if (Fd < 0)
    throw NetError(std::string("cannot create a memory file for a buffer: ") +
                   std::strerror(errno));
  // Reserve the pages now: running out of memory on first touch would be a
  // SIGBUS in the middle of a collective.
  if (int Err = ::posix_fallocate(Fd, 0, off_t(Bytes))) {
    ::close(Fd);
    throw NetError("cannot allocate " + std::to_string(Bytes) +
                   " bytes of shared memory for a buffer: " + std::strerror(Err));
  }
  void *Base = ::mmap(nullptr, Bytes, PROT_READ | PROT_WRITE, MAP_SHARED, Fd, 0);
  if (Base == MAP_FAILED) {
    int Err = errno;
    ::close(Fd);
    throw NetError("cannot map " + std::to_string(Bytes) + " bytes of shared memory: " +
                   std::strerror(Err));
  }
  Buffers[uintptr_t(Base)] = {Id, Fd, Bytes};
  Changes.fetch_add(1, std::memory_order_release);
  return Base;
}

bool SharedBuffers::release(void *Ptr) {
  std::lock_guard<std::mutex> Hold(Lock);
  auto It = Buffers.find(uintptr_t(Ptr));
  if (It == Buffers.end())
    return false;
  Changes.fetch_add(1, std::memory_order_release);
  ::munmap(Ptr, It->second.Bytes);
  ::close(It->second.Fd);
  Buffers.erase(It);
  return true;
}

bool SharedBuffers::owns(const void *Ptr) const {
  std::lock_guard<std::mutex> Hold(Lock);
  return Buffers.count(uintptr_t(Ptr)) != 0;
}

bool SharedBuffers::find(std::span<const host::Run> Runs, host::SharedSpan &Span) const {
  if (Runs.empty())
    return false;
  std::lock_guard<std::mutex> Hold(Lock);
  auto It = Buffers.upper_bound(uintptr_t(Runs[0].Ptr));
  if (It == Buffers.begin())
    return false;
  --It;
  uintptr_t Base = It->first;
  const Buffer &B = It->second;
  for (const host::Run &R : Runs) {
    uintptr_t At = uintptr_t(R.Ptr);
    if (At < Base || At - Base > B.Bytes || R.Bytes > B.Bytes - (At - Base))
      return false;
  }
  Span = {B.Id, uint64_t(Base), uint64_t(B.Bytes), B.Fd};
  return true;
}

int SharedBuffers::probeFd() {
  std::lock_guard<std::mutex> Hold(Lock);
  if (Probe == -2)
    Probe = ::memfd_create(ProbeName, MFD_CLOEXEC);
  return Probe;
}

PeerBuffers::PeerBuffers(pid_t Pid, int ProbeFd) {
  if (ProbeFd < 0) {
    WhyNot = "its process has no memory files";
    return;
  }
  PidFd = int(::syscall(SYS_pidfd_open, Pid, 0));
  if (PidFd < 0) {
    WhyNot = std::string("pidfd_open: ") + std::strerror(errno);
    return;
  }
  int Probe = fetch(ProbeFd, ProbeName, &WhyNot);
  if (Probe >= 0)
    ::close(Probe);
}

PeerBuffers::~PeerBuffers() {
  if (PidFd >= 0)
    ::close(PidFd);
}

int PeerBuffers::fetch(int Fd, const std::string &Name, std::string *Why) const {
  int Mine = int(::syscall(SYS_pidfd_getfd, PidFd, Fd, 0));
  if (Mine < 0) {
    if (Why)
      *Why = std::string("pidfd_getfd: ") + std::strerror(errno);
    return -1;
  }
  if (fdTarget(Mine).rfind("/memfd:" + Name + " ", 0) != 0) {
    if (Why)
      *Why = "its descriptor " + std::to_string(Fd) + " is not the memory file " + Name;
    ::close(Mine);
    return -1;
  }
  return Mine;
}

std::shared_ptr<std::byte> PeerBuffers::map(const host::SharedSpan &Span) {
  if (!usable())
    return nullptr;
  std::lock_guard<std::mutex> Hold(Lock);
  for (const Mapping &M : Mappings)
    if (M.Id == Span.Id)
      return M.View;
  int Fd = fetch(Span.Fd, bufferName(Span.Id), nullptr);
  if (Fd < 0)
    return nullptr;
  struct stat St;
  void *Base = MAP_FAILED;
  if (::fstat(Fd, &St) == 0 && uint64_t(St.st_size) == Span.Bytes)
    Base = ::mmap(nullptr, Span.Bytes, PROT_READ | PROT_WRITE, MAP_SHARED, Fd, 0);
  ::close(Fd);
  if (Base == MAP_FAILED)
    return nullptr;
  size_t Bytes = Span.Bytes;
  std::shared_ptr<std::byte> View(static_cast<std::byte *>(Base),
                                  [Bytes](std::byte *P) { ::munmap(P, Bytes); });
  if (Mappings.size() == MaxMappings)
    Mappings.pop_front();
  Mappings.push_back({Span.Id, View});
  return View;
}

PeerBuffers *SenderBuffers::peer() {
  std::lock_guard<std::mutex> Hold(Lock);
  if (!Peer) {
    auto [Pid, ProbeFd] = Sender();
    if (Pid)
      Peer = std::make_unique<PeerBuffers>(Pid, ProbeFd);
  }
  return Peer.get();
}

bool SenderBuffers::usable() {
  PeerBuffers *P = peer();
  return P && P->usable();
}

std::shared_ptr<std::byte> SenderBuffers::map(const host::SharedSpan &Span) {
  PeerBuffers *P = peer();
  return P ? P->map(Span) : nullptr;
}

} // namespace cclc::net
