//===- Workspace.cpp - Memory kept between calls --------------------------===//

#include "runtime/api/Workspace.h"

#include "runtime/net/Socket.h"
#include "runtime/transport/shm/SharedBuffers.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>

namespace cclc::runtime {

namespace {

/// A cache line: vector copies and FIFO slots are aligned at least this much.
constexpr size_t Alignment = 64;

/// Host blocks are buffers the ranks of the host map (page-aligned), as
/// cclcMemAlloc's are: a scratch or a copied input that a step sends from
/// is then read by its receiver where it lies, and large messages into
/// scratch are written with memcpy. Where the system refuses such a buffer
/// (a sandbox that forbids memfd_create, or shared memory that ran out), a
/// block comes from the heap: its messages then travel as those of the
/// caller's heap buffers do, and the call goes on.
void *allocateHost(size_t Bytes) {
  try {
    return net::SharedBuffers::process().allocate(Bytes);
  } catch (const net::NetError &) {
    size_t Rounded = (Bytes + Alignment - 1) / Alignment * Alignment;
    void *Block = std::aligned_alloc(Alignment, Rounded);
    if (!Block)
      throw std::bad_alloc();
    // Zeroed, as the buffers are.
    return std::memset(Block, 0, Rounded);
  }
}

void freeHost(void *Block) {
  if (!net::SharedBuffers::process().release(Block))
    std::free(Block);
}

} // namespace

Workspace::Memory Workspace::hostMemory() { return {allocateHost, freeHost, false}; }

Workspace::~Workspace() {
  for (Block &B : Blocks)
    if (B.Memory)
      From.Free(B.Memory);
  for (void *Old : Replaced)
    From.Free(Old);
}

void *Workspace::get(Use U, size_t Bytes) {
  Block &B = Blocks[size_t(U)];
  if (B.Bytes < Bytes) {
    // Kept blocks at least double, so that the memory kept stays under twice
    // the largest block and growing allocates rarely.
    size_t Want = From.KeepReplaced ? std::max(Bytes, 2 * B.Bytes) : Bytes;
    size_t Rounded = (Want + Alignment - 1) / Alignment * Alignment;
    if (B.Memory && !From.KeepReplaced) {
      // Freed first: the old and the new block are never both held.
      From.Free(B.Memory);
      B = {};
    } else if (B.Memory) {
      // Room to keep the old block, so that nothing below fails after the
      // new one is allocated.
      Replaced.reserve(Replaced.size() + 1);
    }
    void *New = From.Allocate(Rounded);
    if (B.Memory)
      Replaced.push_back(B.Memory);
    B = {New, Rounded};
  }
  return B.Memory;
}

} // namespace cclc::runtime
