//===- HostAbort.cpp - One abort word for the ranks of a host -------------===//

#include "runtime/transport/shm/HostAbort.h"

#include <algorithm>
#include <cstring>
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

/// A page of its own, its name removed at once.
std::unique_ptr<ShmSegment> privatePage(int Rank) {
  std::unique_ptr<ShmSegment> Seg = ShmSegment::create(ShmSegment::uniqueName(Rank, Rank), 0, 1, 1);
  Seg->unlink();
  return Seg;
}

} // namespace

HostAbortWord::HostAbortWord(Bootstrap &B) {
  int Rank = B.rank(), Leader = hostLeader(B, Rank);
  std::vector<char> Names(size_t(B.size()) * NameBytes, '\0');
  if (Leader == Rank) {
    Segment = ShmSegment::create(ShmSegment::uniqueName(Rank, Rank), 0, 1, 1);
    std::strncpy(&Names[size_t(Rank) * NameBytes], Segment->name().c_str(), NameBytes - 1);
  }
  B.allgather(Names.data(), NameBytes);
  if (Leader != Rank) {
    std::string Name(&Names[size_t(Leader) * NameBytes]);
    try {
      Segment = ShmSegment::attach(Name, 0, 1, 1);
    } catch (const NetError &E) {
      Why = E.what();
      Segment = privatePage(Rank);
    }
  }
  // Every rank has mapped its host's page: the names may go.
  B.barrier();
  Segment->unlink();
}

size_t HostAbortWord::pageBytes() { return size_t(::sysconf(_SC_PAGESIZE)); }

} // namespace cclc::net
