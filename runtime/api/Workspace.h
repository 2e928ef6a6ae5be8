//===- Workspace.h - Memory kept between calls ------------------*- C++ -*-===//
//
// A collective may need memory besides the caller's buffers: the scratch
// buffer of its schedule, a copy of the input when the caller's buffers
// overlap, and stand-ins for the buffers NCCL lets non-root ranks omit.
// Allocating them on every call would cost more than small collectives
// themselves, so each is kept, grown to the largest size asked so far, until
// the communicator is destroyed.
//
// Host calls use host memory and are done when they return, so a grown
// block's old memory is freed at once. GPU calls use device memory and
// return before their kernels run: memory a queued kernel (or a captured
// CUDA graph) may still use is kept until the workspace is destroyed, which
// happens only once the GPU work is done.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

namespace cclc::runtime {

/// True when the ABytes at A and the BBytes at B share a byte: a call whose
/// input overlaps its output copies the input aside first.
inline bool overlaps(const void *A, size_t ABytes, const void *B, size_t BBytes) {
  auto X = reinterpret_cast<uintptr_t>(A), Y = reinterpret_cast<uintptr_t>(B);
  return X < Y + BBytes && Y < X + ABytes;
}

class Workspace {
public:
  enum class Use { Scratch, InputCopy, StandInInput, StandInOutput, NumUses };

  /// Where the memory comes from. Functions rather than function pointers,
  /// so that device memory can be allocated on the communicator's device
  /// whatever device is current on the calling thread.
  struct Memory {
    /// Returns at least Bytes bytes aligned for vector copies, or throws.
    std::function<void *(size_t Bytes)> Allocate;
    std::function<void(void *Block)> Free;
    /// Whether memory that growing replaces is kept until destruction.
    bool KeepReplaced;
  };
  /// Host memory, freed as soon as it is replaced.
  static Memory hostMemory();

  explicit Workspace(const Memory &From = hostMemory()) : From(From) {}
  ~Workspace();
  Workspace(const Workspace &) = delete;
  Workspace &operator=(const Workspace &) = delete;

  /// At least Bytes bytes for Use, aligned for any element type and for
  /// vector copies; valid until the next call for the same Use (host
  /// memory) or until destruction (memory that is kept).
  void *get(Use U, size_t Bytes);

private:
  struct Block {
    void *Memory = nullptr;
    size_t Bytes = 0;
  };
  Memory From;
  std::array<Block, size_t(Use::NumUses)> Blocks;
  /// Replaced blocks, kept until destruction.
  std::vector<void *> Replaced;
};

} // namespace cclc::runtime
