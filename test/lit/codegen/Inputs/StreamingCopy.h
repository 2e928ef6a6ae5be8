//===- StreamingCopy.h - A primitive of a user's own -------------*- C++ -*-===//
//
// What `cclc compile --primitives` reads: a header that builds on the host
// template library and adds copy_streaming, a copy whose stores bypass the
// cache. A collective's output is not read again by the rank that writes it,
// so keeping it out of the cache leaves the cache to the data still moving.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "host/Primitives.h"

#include <cstddef>
#include <cstdint>
#include <cstring>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace streaming {

/// Dst = Src for N bytes, with non-temporal stores where the CPU has them.
inline void streamBytes(const std::byte *Src, std::byte *Dst, size_t N) {
#if defined(__SSE2__)
  // Streaming stores need 16-byte aligned destinations: copy up to the first
  // aligned address, stream whole vectors, copy the tail.
  size_t Head = (16 - reinterpret_cast<uintptr_t>(Dst) % 16) % 16;
  Head = Head < N ? Head : N;
  std::memcpy(Dst, Src, Head);
  size_t I = Head;
  for (; I + 16 <= N; I += 16)
    _mm_stream_si128(reinterpret_cast<__m128i *>(Dst + I),
                     _mm_loadu_si128(reinterpret_cast<const __m128i *>(Src + I)));
  std::memcpy(Dst + I, Src + I, N - I);
  // Streaming stores are weakly ordered: fence before a peer may look.
  _mm_sfence();
#else
  std::memcpy(Dst, Src, N);
#endif
}

/// Dst = Src locally, as copy does, without pulling Dst into the cache.
template <class T, class Op>
CCLC_PRIMITIVE("copy_streaming", "copy")
void copyStreaming(cclc::host::Slice<const T> Src, cclc::host::Slice<T> Dst) {
  cclc::host::zipRuns(Src, Dst, [](const T *S, T *D, size_t N) {
    streamBytes(reinterpret_cast<const std::byte *>(S), reinterpret_cast<std::byte *>(D),
                N * sizeof(T));
  });
}

} // namespace streaming
