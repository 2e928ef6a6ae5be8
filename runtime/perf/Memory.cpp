//===- Memory.cpp - Host buffers ------------------------------------------===//
//
// Host buffers are what the runtime's host executors read and write
// directly: writing an input is filling it, reading an output is checking it
// where it lies, and a call has finished when it returns.
//
//===----------------------------------------------------------------------===//

#include "runtime/perf/Memory.h"

#include <cstdlib>
#include <stdexcept>

namespace cclc::perf {

Batch Memory::batch(int Iters, const std::function<void()> &Call) {
  return {[Iters, Call] {
            for (int I = 0; I < Iters; ++I)
              Call();
          },
          Iters};
}

namespace {

class HostMemory final : public Memory {
public:
  HostMemory(size_t Bytes, bool Registered)
      : Registered(Registered), SendBuffer(allocate(Bytes, Registered)),
        RecvBuffer(allocate(Bytes, Registered)) {
    Send = SendBuffer.get();
    Recv = RecvBuffer.get();
  }

  cclcStream_t stream() const override { return nullptr; }
  std::string describe() const override { return Registered ? "host, cclcMemAlloc" : "host"; }
  void write(void *Dst, size_t, const std::function<void(void *)> &Fill) override { Fill(Dst); }
  size_t read(const void *Src, size_t, const std::function<size_t(const void *)> &Check) override {
    return Check(Src);
  }
  void wait(const std::string &) override {}

private:
  struct FreeDeleter {
    bool Registered;
    void operator()(void *P) const {
      if (Registered)
        cclcMemFree(P);
      else
        std::free(P);
    }
  };
  using Buffer = std::unique_ptr<void, FreeDeleter>;

  /// Cache-line aligned, rounded up to whole lines, at least one; from
  /// cclcMemAlloc where Registered.
  static Buffer allocate(size_t Bytes, bool Registered) {
    void *P = nullptr;
    if (Registered) {
      if (cclcMemAlloc(&P, Bytes) != cclcSuccess)
        throw std::runtime_error("cclcMemAlloc of " + std::to_string(Bytes) +
                                 " bytes failed: " + cclcGetLastError(nullptr));
    } else {
      P = std::aligned_alloc(64, (Bytes + 64) / 64 * 64);
      if (!P)
        throw std::runtime_error("cannot allocate " + std::to_string(Bytes) + " bytes");
    }
    return Buffer(P, FreeDeleter{Registered});
  }

  bool Registered;
  Buffer SendBuffer, RecvBuffer;
};

} // namespace

std::unique_ptr<Memory> makeHostMemory(size_t Bytes, bool Registered) {
  return std::make_unique<HostMemory>(Bytes, Registered);
}

} // namespace cclc::perf
