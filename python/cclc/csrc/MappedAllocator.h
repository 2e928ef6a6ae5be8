//===- MappedAllocator.h - CPU tensors in memory the ranks map ---*- C++ -*-===//
//
// The runtime moves a large message between ranks of a host in one memcpy
// when the message's destination, or its source, lies in memory from
// cclcMemAlloc: the peer maps that memory (docs/runtime.md, "Buffers the
// ranks map"). PyTorch's CPU tensors come from its CPU allocator, memory no
// peer can map, so the all_reduce of a DistributedDataParallel bucket pays a
// system call per message or a copy through the FIFO.
//
// This allocator, installed as PyTorch's CPU allocator, serves allocations
// of at least MinBytes from cclcMemAlloc, as ProcessGroupNCCL's
// mem_allocator serves a CUDA memory pool; smaller ones go to the allocator
// it replaced, whose tensors keep their own deleter.
//
// Freed buffers are kept for reuse by size, as PyTorch's CUDA caching
// allocator keeps blocks: a buffer costs system calls to make and page faults
// to fill, and a training step allocates and frees tensors of the same sizes
// every step, where PyTorch's own CPU allocator hands large blocks back to
// the system at once and faults them in again at the next step.
//
// The same allocator, not installed, serves the backend's allocateTensor:
// torch's DistributedDataParallel asks the group's backend for the memory
// of its gradient buckets (where DDP_DISABLE_COMM_MEM=0), so the buckets,
// the tensors every all_reduce of a training step runs on, can be mapped
// while the rest of the process keeps PyTorch's allocator.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/Allocator.h>

#include <atomic>
#include <cstddef>
#include <map>
#include <mutex>
#include <unordered_map>

namespace cclc::torch {

class MappedAllocator final : public c10::Allocator {
public:
  /// What the allocator holds, in bytes: Live in tensors, Idle kept for
  /// reuse, in Buffers buffers from cclcMemAlloc.
  struct Stats {
    size_t LiveBytes = 0, IdleBytes = 0, Buffers = 0;
  };

  /// Makes the allocator PyTorch's CPU allocator (once per process) and
  /// serves allocations of MinBytes and more from then on, keeping up to
  /// CacheBytes of freed buffers. MinBytes of 0 serves none: every
  /// allocation goes to the allocator it replaced again.
  static void use(size_t MinBytes, size_t CacheBytes);
  /// A CPU tensor of Size elements in memory from cclcMemAlloc, whatever
  /// the size, or in the replaced allocator's memory where cclcMemAlloc
  /// fails (the runtime then moves its messages as it does the heap's).
  static at::Tensor mappedTensor(int64_t Size, const at::TensorOptions &Options);
  /// The allocator's figures; zero before use() or mappedTensor().
  static Stats stats();
  /// Hands every idle buffer back to the system.
  static void emptyCache();

  c10::DataPtr allocate(size_t Bytes) override;
  c10::DeleterFnPtr raw_deleter() const override { return &release; }
  void copy_data(void *Dest, const void *Src, size_t Count) const override {
    default_copy_data(Dest, Src, Count);
  }

private:
  explicit MappedAllocator(c10::Allocator *Fallback) : Fallback(Fallback) {}
  /// The process's allocator, made on first use around PyTorch's CPU
  /// allocator of that time; use() installs this same one.
  static MappedAllocator &instance();
  /// A buffer of at least Bytes: an idle one not much larger, else a new
  /// one; null when cclcMemAlloc fails.
  void *take(size_t Bytes);
  /// The deleter of every tensor this allocator made, the fallback's
  /// included (raw_deallocate passes those here too).
  static void release(void *P);
  /// Keeps Bytes of buffer P for reuse, or frees it past the cache's size.
  void keep(void *P, size_t Bytes);

  /// The allocator once made; never destroyed, since tensors may outlive
  /// every static object.
  static std::atomic<MappedAllocator *> Made;

  c10::Allocator *const Fallback;
  std::atomic<size_t> MinBytes{0};
  std::mutex Lock;
  size_t CacheBytes = 0;
  /// Buffers in tensors, with their size.
  std::unordered_map<void *, size_t> Live;
  /// Idle buffers by size.
  std::multimap<size_t, void *> Idle;
  Stats Totals;
};

} // namespace cclc::torch
