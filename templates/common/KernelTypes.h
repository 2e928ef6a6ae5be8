//===- KernelTypes.h - What every generated kernel is told -------*- C++ -*-===//
//
// The element types and operators kernels are instantiated for, and the
// arguments every kernel call carries, for host and CUDA kernels alike: the
// runtime names both kinds of kernel by the same values.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstddef>
#include <cstdint>

namespace cclc::kern {

/// Element types and operators a kernel can be instantiated for, by the
/// names `cclc compile --dtypes/--ops` and the runtime use.
enum class DType : uint8_t { F32, F64, F16, BF16, I8, U8, I32, U32, I64, U64 };
enum class RedOp : uint8_t { Sum, Prod, Min, Max };

/// What one rank's call of a kernel gets on every target; each target's
/// KernelArgs adds how the kernel reaches its connections.
struct CallArgs {
  int Rank = 0;
  const void *Input = nullptr;
  void *Output = nullptr;
  /// KernelInfo::ScratchUnits * Count elements, or null when it needs none.
  void *Scratch = nullptr;
  /// The collective's per-rank element count.
  size_t Count = 0;
  /// Must equal every peer's; bounds one message.
  size_t SlotBytes = 0;
};

} // namespace cclc::kern
