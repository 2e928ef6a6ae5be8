//===- MappedAllocator.cpp - CPU tensors in memory the ranks map ----------===//

#include "MappedAllocator.h"

#include <cclc.h>

#include <ATen/Functions.h>
#include <c10/core/CPUAllocator.h>

#include <unistd.h>

namespace cclc::torch {

std::atomic<MappedAllocator *> MappedAllocator::Made{nullptr};

namespace {

/// Above the priority PyTorch registers its own CPU allocator with, so that
/// this one replaces it.
constexpr uint8_t Priority = 1;

/// An idle buffer serves a request at most this fraction larger than the
/// request (in eighths), so that reuse wastes little.
constexpr size_t Slack = 8;

size_t pageRounded(size_t Bytes) {
  static const size_t Page = size_t(::sysconf(_SC_PAGESIZE));
  return (Bytes + Page - 1) / Page * Page;
}

} // namespace

MappedAllocator &MappedAllocator::instance() {
  static std::once_flag Once;
  std::call_once(Once, [] {
    Made.store(new MappedAllocator(c10::GetCPUAllocator()), std::memory_order_release);
  });
  return *Made.load(std::memory_order_acquire);
}

void MappedAllocator::use(size_t MinBytes, size_t CacheBytes) {
  static std::once_flag Once;
  MappedAllocator *A = &instance();
  std::call_once(Once, [A] { c10::SetCPUAllocator(A, Priority); });
  {
    std::lock_guard<std::mutex> Guard(A->Lock);
    A->CacheBytes = CacheBytes;
  }
  A->MinBytes.store(MinBytes, std::memory_order_relaxed);
  if (!CacheBytes)
    emptyCache();
}

at::Tensor MappedAllocator::mappedTensor(int64_t Size, const at::TensorOptions &Options) {
  MappedAllocator &A = instance();
  size_t Bytes = size_t(Size) * Options.dtype().itemsize();
  void *P = Bytes ? A.take(pageRounded(Bytes)) : nullptr;
  if (!P)
    return at::empty({Size}, Options);
  return at::from_blob(P, {Size}, &release, Options);
}

MappedAllocator::Stats MappedAllocator::stats() {
  MappedAllocator *A = Made.load(std::memory_order_acquire);
  if (!A)
    return {};
  std::lock_guard<std::mutex> Guard(A->Lock);
  return A->Totals;
}

void MappedAllocator::emptyCache() {
  MappedAllocator *A = Made.load(std::memory_order_acquire);
  if (!A)
    return;
  std::multimap<size_t, void *> Freed;
  {
    std::lock_guard<std::mutex> Guard(A->Lock);
    Freed.swap(A->Idle);
    A->Totals.IdleBytes = 0;
    A->Totals.Buffers -= Freed.size();
  }
  for (auto &[Bytes, P] : Freed)
    cclcMemFree(P);
}

c10::DataPtr MappedAllocator::allocate(size_t Bytes) {
  size_t Min = MinBytes.load(std::memory_order_relaxed);
  if (Min && Bytes >= Min)
    if (void *P = take(pageRounded(Bytes)))
      return {P, P, &release, c10::Device(c10::DeviceType::CPU)};
  return Fallback->allocate(Bytes);
}

void *MappedAllocator::take(size_t Bytes) {
  {
    std::lock_guard<std::mutex> Guard(Lock);
    auto It = Idle.lower_bound(Bytes);
    if (It != Idle.end() && It->first <= Bytes + Bytes / Slack) {
      auto [Size, P] = *It;
      Idle.erase(It);
      Totals.IdleBytes -= Size;
      Totals.LiveBytes += Size;
      Live.emplace(P, Size);
      return P;
    }
  }
  void *P = nullptr;
  if (cclcMemAlloc(&P, Bytes) != cclcSuccess)
    return nullptr;
  std::lock_guard<std::mutex> Guard(Lock);
  Live.emplace(P, Bytes);
  Totals.LiveBytes += Bytes;
  ++Totals.Buffers;
  return P;
}

void MappedAllocator::release(void *P) {
  MappedAllocator *A = Made.load(std::memory_order_acquire);
  size_t Bytes = 0;
  {
    std::lock_guard<std::mutex> Guard(A->Lock);
    auto It = A->Live.find(P);
    if (It != A->Live.end()) {
      Bytes = It->second;
      A->Live.erase(It);
      A->Totals.LiveBytes -= Bytes;
    }
  }
  if (Bytes)
    A->keep(P, Bytes);
  else if (P)
    A->Fallback->raw_deleter()(P);
}

void MappedAllocator::keep(void *P, size_t Bytes) {
  {
    std::lock_guard<std::mutex> Guard(Lock);
    if (Totals.IdleBytes + Bytes <= CacheBytes) {
      Idle.emplace(Bytes, P);
      Totals.IdleBytes += Bytes;
      return;
    }
    --Totals.Buffers;
  }
  cclcMemFree(P);
}

} // namespace cclc::torch
