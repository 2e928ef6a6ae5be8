//===- KernelTable.h - A generated CUDA kernel table for C++ ----*- C++ -*-===//
//
// cclcCommRegisterCudaKernels takes the <algorithm>_kernels table that
// `cclc compile --emit=cuda` generates, as an untyped pointer and a count.
// The tables' type lives in CUDA headers, so the GPU tests and benchmark
// list their tables in .cu files and hand them to plain C++ through this
// description, which names what a test needs to call the algorithm.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstddef>

namespace cclc::gputest {

struct KernelTable {
  const char *Stem;       ///< The .ccl file it was generated from, without .ccl.
  const char *Algorithm;  ///< The algorithm's name in that file.
  const char *Collective; ///< allreduce, allgather, ...
  int Root;
  const void *Infos; ///< Count cclc::cuda::KernelInfo.
  size_t Count;
};

/// Describes the generated table Infos of algorithms/<Stem>.ccl.
template <class Info, size_t N> KernelTable kernelTable(const char *Stem, const Info (&Infos)[N]) {
  return {Stem, Infos[0].Algorithm, Infos[0].Collective, Infos[0].Root, Infos, N};
}

} // namespace cclc::gputest
