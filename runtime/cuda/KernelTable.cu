//===- KernelTable.cu - Tables of generated CUDA kernels -------*- CUDA -*-===//
//
// cclcCommRegisterCudaKernels takes the <algorithm>_kernels table that
// `cclc compile --emit=cuda` generates: an array of cclc::cuda::KernelInfo,
// a type only CUDA code can include (it carries a __global__ function). The
// runtime checks and groups kernel tables of both targets alike
// (Loading.cpp), so this file only turns each entry into the
// target-neutral KernelEntry; launching reads the entry itself. Reading
// touches no CUDA call, so registering leaves a process free to fork.
//
//===----------------------------------------------------------------------===//

#include "runtime/api/Gpu.h"

#include "cuda/Kernel.cuh"

namespace cclc::runtime {

std::vector<KernelEntry> cudaKernelEntries(const void *Infos, size_t Count) {
  std::vector<KernelEntry> Entries;
  const auto *Table = static_cast<const cuda::KernelInfo *>(Infos);
  for (size_t I = 0; I < Count; ++I) {
    KernelEntry E = entryOf(Table[I]);
    E.BlockThreads = Table[I].BlockThreads;
    E.Cuda = &Table[I];
    Entries.push_back(E);
  }
  return Entries;
}

} // namespace cclc::runtime
