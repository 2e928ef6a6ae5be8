//===- AllocationCount.cpp - A counting global operator new ---------------===//
//
// The replacements allocate with malloc and aligned_alloc, whose blocks the
// replaced operator delete frees; they live in a file of their own so that
// the compiler sees no new-expression beside a free().
//
//===----------------------------------------------------------------------===//

#include "AllocationCount.h"

#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <new>

namespace {

std::atomic<bool> Counting{false};
std::atomic<int> Counted{0};

void *allocate(size_t Bytes, size_t Align) {
  if (Counting.load(std::memory_order_relaxed))
    Counted.fetch_add(1, std::memory_order_relaxed);
  Bytes = Bytes ? Bytes : 1;
  void *P = Align <= alignof(std::max_align_t)
                ? std::malloc(Bytes)
                : std::aligned_alloc(Align, (Bytes + Align - 1) / Align * Align);
  if (!P)
    throw std::bad_alloc();
  return P;
}

} // namespace

void *operator new(size_t Bytes) { return allocate(Bytes, 0); }
void *operator new(size_t Bytes, std::align_val_t Align) {
  return allocate(Bytes, static_cast<size_t>(Align));
}
void operator delete(void *P) noexcept { std::free(P); }
void operator delete(void *P, size_t) noexcept { std::free(P); }
void operator delete(void *P, std::align_val_t) noexcept { std::free(P); }
void operator delete(void *P, size_t, std::align_val_t) noexcept { std::free(P); }

namespace cclc::test {

AllocationCount::AllocationCount() {
  Counted = 0;
  Counting = true;
}

AllocationCount::~AllocationCount() { Counting = false; }

int AllocationCount::stop() {
  Counting = false;
  return Counted.load();
}

} // namespace cclc::test
