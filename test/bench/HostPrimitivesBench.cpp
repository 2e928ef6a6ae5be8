//===- HostPrimitivesBench.cpp - Host copy and reduce against memcpy ------===//
//
// Prints, per buffer size from 64 KiB to 256 MiB, memcpy's bandwidth and the
// throughput of the host primitives that move data locally (copy, and reduce
// for f32 sum, bf16 sum and i32 max, plus the element loops of the fused
// receive-reduce-send and receive-reduce-copy), each also as a ratio of
// memcpy's. Every figure counts bytes read plus bytes written for N bytes of
// payload: memcpy and copy 2N, reduce 3N (source and accumulator read,
// accumulator written), reduce+send 4N (it also writes the outgoing slot),
// reduce+copy 3N (the message and the local source read, the destination
// written).
//
// A shared machine takes the core away for milliseconds at a time, which
// would swamp runs of a large buffer. So every pass over a buffer is timed
// in pieces of at most 1 MiB of payload, each piece keeps its fastest time
// over the passes, and a figure is the sum of those: the time of a pass that
// no other process interrupted.
//
//===----------------------------------------------------------------------===//

#include "host/Primitives.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

using namespace cclc;

namespace {

constexpr size_t PieceBytes = size_t(1) << 20;
/// Passes go on until they took this long together, and at least MinPasses.
constexpr double MinSeconds = 0.3;
constexpr int MinPasses = 5;

/// Buffers of one size, written before every measurement: the first touch
/// takes the page faults out of the timing, and a fresh fill keeps the
/// values of one measurement out of the next.
struct Buffers {
  size_t Bytes;
  std::unique_ptr<std::byte[]> A, B, C;
  explicit Buffers(size_t Bytes)
      : Bytes(Bytes), A(new std::byte[Bytes]), B(new std::byte[Bytes]), C(new std::byte[Bytes]) {}
  /// Bytes of 0x3c make normal numbers near 0.01 of every float type (no
  /// slow denormals, no overflow however often they are summed) and small
  /// integers.
  void fill() {
    std::memset(A.get(), 0x3c, Bytes);
    std::memset(B.get(), 0x3c, Bytes);
    std::memset(C.get(), 0x3c, Bytes);
  }
};

/// GB/s of Fn(Begin, Bytes), which processes payload [Begin, Begin + Bytes)
/// of Bufs and touches Touched bytes per payload byte.
template <class F> double measure(Buffers &Bufs, size_t Touched, F &&Fn) {
  Bufs.fill();
  using Clock = std::chrono::steady_clock;
  const size_t Pieces = (Bufs.Bytes + PieceBytes - 1) / PieceBytes;
  std::vector<double> Best(Pieces, 1e30);
  double Total = 0;
  for (int Pass = 0; Pass < MinPasses || Total < MinSeconds; ++Pass)
    for (size_t P = 0; P < Pieces; ++P) {
      size_t Begin = P * PieceBytes, Bytes = std::min(PieceBytes, Bufs.Bytes - Begin);
      Clock::time_point Start = Clock::now();
      Fn(Begin, Bytes);
      double Seconds = std::chrono::duration<double>(Clock::now() - Start).count();
      Best[P] = std::min(Best[P], Seconds);
      Total += Seconds;
    }
  double Seconds = 0;
  for (double S : Best)
    Seconds += S;
  return double(Touched * Bufs.Bytes) / Seconds / 1e9;
}

template <class T> T *at(const std::unique_ptr<std::byte[]> &Buf, size_t Begin) {
  return reinterpret_cast<T *>(Buf.get() + Begin);
}

/// One chunk of N elements: the slices the primitives take.
kern::Layout oneChunk(size_t N) {
  kern::Layout L;
  L.Count = N;
  L.RoundElems = N;
  L.PieceElems = N;
  return L;
}

double memcpyGBps(Buffers &Bufs) {
  return measure(Bufs, 2, [&](size_t Begin, size_t Bytes) {
    std::memcpy(Bufs.B.get() + Begin, Bufs.A.get() + Begin, Bytes);
  });
}

template <class T> double copyGBps(Buffers &Bufs) {
  return measure(Bufs, 2, [&](size_t Begin, size_t Bytes) {
    kern::Layout L = oneChunk(Bytes / sizeof(T));
    host::copy<T, host::Sum>({at<const T>(Bufs.A, Begin), &L, 1, 0, 1},
                             {at<T>(Bufs.B, Begin), &L, 1, 0, 1});
  });
}

template <class T, class Op> double reduceGBps(Buffers &Bufs) {
  return measure(Bufs, 3, [&](size_t Begin, size_t Bytes) {
    kern::Layout L = oneChunk(Bytes / sizeof(T));
    host::reduce<T, Op>({at<const T>(Bufs.A, Begin), &L, 1, 0, 1},
                        {at<T>(Bufs.B, Begin), &L, 1, 0, 1});
  });
}

template <class T, class Op> double reduceSendGBps(Buffers &Bufs) {
  return measure(Bufs, 4, [&](size_t Begin, size_t Bytes) {
    host::reduceElems<T, Op>(at<const T>(Bufs.A, Begin), at<T>(Bufs.B, Begin),
                             at<T>(Bufs.C, Begin), Bytes / sizeof(T));
  });
}

template <class T, class Op> double reduceCopyGBps(Buffers &Bufs) {
  return measure(Bufs, 3, [&](size_t Begin, size_t Bytes) {
    host::reduceCopyElems<T, Op>(at<const T>(Bufs.A, Begin), at<const T>(Bufs.C, Begin),
                                 at<T>(Bufs.B, Begin), Bytes / sizeof(T));
  });
}

struct Column {
  const char *Name;
  double (*Measure)(Buffers &);
};

} // namespace

int main() {
  const std::vector<Column> Columns = {
      {"copy f32", copyGBps<float>},
      {"reduce f32 sum", reduceGBps<float, host::Sum>},
      {"reduce bf16 sum", reduceGBps<host::bf16, host::Sum>},
      {"reduce i32 max", reduceGBps<int32_t, host::Max>},
      {"reduce+send f32 sum", reduceSendGBps<float, host::Sum>},
      {"reduce+copy f32 sum", reduceCopyGBps<float, host::Sum>},
  };
  std::printf("GB/s of bytes read + written (memcpy, copy: 2N; reduce, reduce+copy: 3N; "
              "reduce+send: 4N),\n"
              "and as a ratio of memcpy's\n");
  std::printf("%10s %10s", "size", "memcpy");
  for (const Column &C : Columns)
    std::printf(" %21s", C.Name);
  std::printf("\n");
  for (size_t Bytes = size_t(64) << 10; Bytes <= size_t(256) << 20; Bytes *= 4) {
    Buffers Bufs(Bytes);
    double Memcpy = memcpyGBps(Bufs);
    std::string Size = Bytes >= (size_t(1) << 20) ? std::to_string(Bytes >> 20) + " MiB"
                                                   : std::to_string(Bytes >> 10) + " KiB";
    std::printf("%10s %10.1f", Size.c_str(), Memcpy);
    for (const Column &C : Columns) {
      double GBps = C.Measure(Bufs);
      std::printf(" %13.1f (%4.2fx)", GBps, GBps / Memcpy);
    }
    std::printf("\n");
    std::fflush(stdout);
  }
  return 0;
}
