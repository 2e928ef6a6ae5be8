//===- AllocationCount.h - Counting a test's allocations ---------*- C++ -*-===//
//
// What must not allocate (a host call's hot path) is tested by counting the
// calls of the global operator new, which a test program linking
// AllocationCount.cpp replaces with a counting one.
//
//===----------------------------------------------------------------------===//
#pragma once

namespace cclc::test {

/// Counts the allocations by operator new of every thread from its
/// construction until stop().
class AllocationCount {
public:
  AllocationCount();
  ~AllocationCount();
  AllocationCount(const AllocationCount &) = delete;
  AllocationCount &operator=(const AllocationCount &) = delete;

  /// Stops counting; the allocations counted.
  int stop();
};

} // namespace cclc::test
