//===- GeneratedKernels.h - The library's CUDA kernels ----------*- C++ -*-===//
//
// The build generates CUDA kernels of every library algorithm for four
// ranks, for f32, f16 and bf16 with the sum and the maximum
// (cclc_add_algorithms in CMakeLists.txt), and links them into GpuTests, as
// an application links its own. The tests register them with
// cclcCommRegisterCudaKernels and compare them with the plan interpreter.
//
// To learn which executor served a call without trusting the runtime's log,
// the tests also register stand-ins: the same tables with every kernel
// replaced by one that writes a marker over the output and sends nothing.
// An output that holds the marker was written by a registered kernel.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "KernelTable.h"

#include <span>

namespace cclc::gputest {

/// The rank count the kernels are generated for.
inline constexpr int KernelRanks = 4;

/// What the stand-in kernels write over the first Count bytes of their
/// output.
inline constexpr unsigned char MarkerByte = 0xa5;

/// The table of every algorithm of the library.
std::span<const KernelTable> libraryKernels();

/// The tables of libraryKernels(), in the same order, with stand-ins for
/// every kernel.
std::span<const KernelTable> markerKernels();

} // namespace cclc::gputest
