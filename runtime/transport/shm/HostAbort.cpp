//===- HostAbort.cpp - One abort word for the ranks of a host -------------===//

#include "runtime/transport/shm/HostAbort.h"

#include "runtime/transport/LinkSetup.h"

#include <cerrno>
#include <cstring>
#include <new>
#include <sys/mman.h>
#include <unistd.h>
#include <vector>

namespace cclc::net {

namespace {

/// Bytes of a segment's name in the allgather; uniqueName() fits.
constexpr size_t NameBytes = 96;

/// The lowest rank on Rank's host.
int hostLeader(const Bootstrap &B, int Rank) {
  for (int R = 0; R < B.size(); ++R)
    if (B.hostId(R) == B.hostId(Rank))
      return R;
  return Rank;
}

} // namespace

std::unique_ptr<ShmSegment> HostAbortWord::createSegment(const std::string &Name) {
  return ShmSegment::create(Name, 0, 1, 1, /*SingleCopyMin=*/0);
}

void HostAbortWord::Unmap::operator()(std::atomic<uint32_t> *Page) const {
  ::munmap(Page, pageBytes());
}

void HostAbortWord::usePrivatePage(const std::string &Cause) {
  Why = Cause;
  Segment.reset();
  // Anonymous memory, not a segment: a rank falls back here because /dev/shm
  // failed it.
  void *Page =
      ::mmap(nullptr, pageBytes(), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (Page == MAP_FAILED)
    throw NetError(std::string("cannot map a page for the abort word: ") + std::strerror(errno));
  Private.reset(new (Page) std::atomic<uint32_t>(0));
  Word = Private.get();
}

HostAbortWord::HostAbortWord(Bootstrap &B, const SegmentMaker &Create) {
  int Rank = B.rank(), Leader = hostLeader(B, Rank);
  std::vector<char> Names(size_t(B.size()) * NameBytes, '\0');
  if (Leader == Rank) {
    // A leader that cannot make the page still joins the allgather, with no
    // name, so that its host's ranks fall back at once.
    try {
      Segment = Create(ShmSegment::uniqueName(Rank, Rank));
      Word = &Segment->abortWord();
      std::strncpy(&Names[size_t(Rank) * NameBytes], Segment->name().c_str(), NameBytes - 1);
    } catch (const NetError &E) {
      usePrivatePage(E.what());
    }
  }
  B.allgather(Names.data(), NameBytes);
  if (Leader != Rank) {
    std::string Name(&Names[size_t(Leader) * NameBytes]);
    if (Name.empty())
      usePrivatePage(rankName(Leader) + ", the first of this host, could not create the page");
    else
      try {
        Segment = ShmSegment::attach(Name, 0, 1, 1);
        Word = &Segment->abortWord();
      } catch (const NetError &E) {
        usePrivatePage(E.what());
      }
  }
  // Every rank has mapped its host's page: the names may go.
  B.barrier();
  if (Segment)
    Segment->unlink();
}

size_t HostAbortWord::pageBytes() { return size_t(::sysconf(_SC_PAGESIZE)); }

} // namespace cclc::net
