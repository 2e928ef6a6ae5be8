//===- GeneratedKernels.cu - The library's CUDA kernels in GpuTests -------===//
//
// Lists the generated tables (the generated headers are CUDA, so they are
// included here only) and builds the stand-in tables that GeneratedKernels.h
// describes.
//
//===----------------------------------------------------------------------===//

#include "GeneratedKernels.h"

#include "butterfly-allreduce.cuh"
#include "halving-doubling-allreduce.cuh"
#include "ring-allgather.cuh"
#include "ring-allreduce.cuh"
#include "ring-broadcast.cuh"
#include "ring-reduce-scatter.cuh"
#include "ring-reduce.cuh"
#include "tree-allreduce.cuh"

#include <vector>

namespace cclc::gputest {
namespace {

/// The stand-in: writes the marker over the first Count bytes of the output,
/// which every output has, and leaves the connections alone.
__global__ void writeMarker(cuda::KernelArgs Args) {
  auto *Out = static_cast<unsigned char *>(Args.Output);
  size_t Stride = size_t(gridDim.x) * blockDim.x;
  for (size_t I = size_t(blockIdx.x) * blockDim.x + threadIdx.x; I < Args.Count; I += Stride)
    Out[I] = MarkerByte;
}

struct Library {
  std::vector<KernelTable> Generated;
  /// The stand-ins' entries, one vector per table; registered tables must
  /// outlive the communicators, so these live as long as the program.
  std::vector<std::vector<cuda::KernelInfo>> MarkerInfos;
  std::vector<KernelTable> Markers;
};

const Library &library() {
  static const Library L = [] {
    Library Made;
    Made.Generated = {
        kernelTable("butterfly-allreduce", gen::butterfly_allreduce_kernels),
        kernelTable("halving-doubling-allreduce", gen::halving_doubling_allreduce_kernels),
        kernelTable("ring-allgather", gen::ring_allgather_kernels),
        kernelTable("ring-allreduce", gen::ring_allreduce_kernels),
        kernelTable("ring-broadcast", gen::ring_broadcast_kernels),
        kernelTable("ring-reduce-scatter", gen::ring_reduce_scatter_kernels),
        kernelTable("ring-reduce", gen::ring_reduce_kernels),
        kernelTable("tree-allreduce", gen::tree_allreduce_kernels),
    };
    for (const KernelTable &T : Made.Generated) {
      const auto *Infos = static_cast<const cuda::KernelInfo *>(T.Infos);
      std::vector<cuda::KernelInfo> &Copy = Made.MarkerInfos.emplace_back(Infos, Infos + T.Count);
      for (cuda::KernelInfo &Info : Copy)
        Info.Run = writeMarker;
    }
    for (size_t I = 0; I < Made.Generated.size(); ++I) {
      KernelTable Marker = Made.Generated[I];
      Marker.Infos = Made.MarkerInfos[I].data();
      Made.Markers.push_back(Marker);
    }
    return Made;
  }();
  return L;
}

} // namespace

std::span<const KernelTable> libraryKernels() { return library().Generated; }

std::span<const KernelTable> markerKernels() { return library().Markers; }

} // namespace cclc::gputest
