//===- Workspace.cpp - Memory kept between calls --------------------------===//

#include "runtime/api/Workspace.h"

#include <new>

namespace cclc::runtime {

namespace {
/// A cache line: vector copies and FIFO slots are aligned at least this much.
constexpr size_t Alignment = 64;
} // namespace

void *Workspace::get(Use U, size_t Bytes) {
  Block &B = Blocks[size_t(U)];
  if (B.Bytes < Bytes) {
    size_t Rounded = (Bytes + Alignment - 1) / Alignment * Alignment;
    B.Memory.reset();
    B.Memory.reset(std::aligned_alloc(Alignment, Rounded));
    if (!B.Memory) {
      B.Bytes = 0;
      throw std::bad_alloc();
    }
    B.Bytes = Rounded;
  }
  return B.Memory.get();
}

} // namespace cclc::runtime
