//===- OperatorsTest.cu - Device copy and reduce against the host ---------===//
//
// The device operators must give the host operators' bits for every element
// type, so that GPU and host executors agree; and the block-wide copy and
// reduce loops must give the same result on their vector path, their
// aligning path (equally misaligned arrays) and their scalar path.
//
//===----------------------------------------------------------------------===//

#include "cuda/Primitives.cuh"
#include "host/Types.h"

#include "GpuTest.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

using namespace cclc;
using namespace cclc::gputest;

namespace {

template <class T, class Op> __global__ void reduceKernel(const T *Src, T *Acc, T *Out, size_t N) {
  cuda::reduceElems<T, Op>(Src, Acc, Out, N);
}

template <class T> __global__ void copyKernel(const T *Src, T *Dst, T *Also, size_t N) {
  cuda::copyElems<T>(Src, Dst, Also, N);
}

/// An element type as the device and the host name it.
template <class D, class H> struct Elem {
  using Device = D;
  using Host = H;
};

template <class H> bool isNan(H V) {
  if constexpr (std::is_floating_point_v<H>)
    return std::isnan(V);
  else if constexpr (host::IsHalf<H>)
    return std::isnan(V.toFloat());
  else
    return false;
}

/// Bits of Got and Want agree, or both are NaNs (whose payloads differ
/// between GPU and CPU arithmetic).
template <class D, class H> bool sameValue(const D &Got, const H &Want) {
  static_assert(sizeof(D) == sizeof(H));
  H G;
  std::memcpy(static_cast<void *>(&G), &Got, sizeof(H));
  return std::memcmp(&G, &Want, sizeof(H)) == 0 || (isNan(G) && isNan(Want));
}

/// Element offsets of the arrays a loop reads and writes, choosing its path.
struct Offsets {
  size_t Src, Dst, Also;
  const char *Path;
};
constexpr Offsets Paths[] = {{0, 0, 0, "vector"},
                             {1, 1, 1, "aligning"},
                             {0, 1, 0, "scalar"},
                             {1, 1, 0, "scalar (third array)"}};
/// Besides short runs: 2560 floats end exactly at the end of a full pass of
/// the unrolled loop (cuda::Unroll vectors of every thread), 4099 and 20483
/// take passes whose last one is partial.
constexpr size_t Sizes[] = {0, 1, 7, 33, 2560, 4099, 20483};
constexpr unsigned Threads = 160; ///< Not a multiple of a vector's elements.
static_assert(2560 * sizeof(float) == cuda::Unroll * Threads * cuda::PackBytes);

template <class P> class Operators : public testing::Test {};
using ElemTypes =
    testing::Types<Elem<float, float>, Elem<double, double>, Elem<__half, host::f16>,
                   Elem<__nv_bfloat16, host::bf16>, Elem<int8_t, int8_t>, Elem<uint8_t, uint8_t>,
                   Elem<int32_t, int32_t>, Elem<uint32_t, uint32_t>, Elem<int64_t, int64_t>,
                   Elem<uint64_t, uint64_t>>;
TYPED_TEST_SUITE(Operators, ElemTypes);

/// Runs reduceElems<DOp> on random bits along every path, with and without a
/// second output, and compares every element with HOp on the host.
template <class P, class DOp, class HOp> void checkReduce(const char *Name) {
  using D = typename P::Device;
  using H = typename P::Host;
  for (const Offsets &Off : Paths)
    for (size_t N : Sizes)
      for (bool WithOut : {false, true}) {
        SCOPED_TRACE(testing::Message() << Name << ", " << Off.Path << " path, " << N << " elements"
                                        << (WithOut ? ", second output" : ""));
        std::vector<D> A = randomBits<D>(N, 2 * N + 1), B = randomBits<D>(N, 2 * N + 2);
        DeviceBuffer<D> Src(N + Off.Src), Acc(N + Off.Dst), Out(N + Off.Also);
        toDevice(Src.get() + Off.Src, B);
        toDevice(Acc.get() + Off.Dst, A);
        reduceKernel<D, DOp><<<1, Threads>>>(Src.get() + Off.Src, Acc.get() + Off.Dst,
                                             WithOut ? Out.get() + Off.Also : nullptr, N);
        CCLC_CUDA(cudaGetLastError());
        CCLC_CUDA(cudaDeviceSynchronize());
        std::vector<D> GotAcc = Acc.download(), GotOut = Out.download();
        for (size_t I = 0; I < N; ++I) {
          H X, Y;
          std::memcpy(static_cast<void *>(&X), &A[I], sizeof(H));
          std::memcpy(static_cast<void *>(&Y), &B[I], sizeof(H));
          H Want = HOp()(X, Y);
          ASSERT_TRUE(sameValue(GotAcc[Off.Dst + I], Want)) << "element " << I;
          if (WithOut)
            ASSERT_TRUE(sameValue(GotOut[Off.Also + I], Want)) << "element " << I;
        }
      }
}

TYPED_TEST(Operators, ReduceMatchesTheHostBitForBit) {
  checkReduce<TypeParam, cuda::Sum, host::Sum>("sum");
  checkReduce<TypeParam, cuda::Prod, host::Prod>("prod");
  checkReduce<TypeParam, cuda::Min, host::Min>("min");
  checkReduce<TypeParam, cuda::Max, host::Max>("max");
}

TYPED_TEST(Operators, CopyKeepsEveryBit) {
  using D = typename TypeParam::Device;
  for (const Offsets &Off : Paths)
    for (size_t N : Sizes)
      for (bool WithAlso : {false, true}) {
        SCOPED_TRACE(testing::Message() << Off.Path << " path, " << N << " elements"
                                        << (WithAlso ? ", second output" : ""));
        std::vector<D> A = randomBits<D>(N, N + 7);
        DeviceBuffer<D> Src(N + Off.Src), Dst(N + Off.Dst), Also(N + Off.Also);
        toDevice(Src.get() + Off.Src, A);
        copyKernel<D><<<1, Threads>>>(Src.get() + Off.Src, Dst.get() + Off.Dst,
                                      WithAlso ? Also.get() + Off.Also : nullptr, N);
        CCLC_CUDA(cudaGetLastError());
        CCLC_CUDA(cudaDeviceSynchronize());
        std::vector<D> GotDst = Dst.download(), GotAlso = Also.download();
        ASSERT_TRUE(sameBits(GotDst.data() + Off.Dst, A.data(), N));
        if (WithAlso)
          ASSERT_TRUE(sameBits(GotAlso.data() + Off.Also, A.data(), N));
      }
}

} // namespace
