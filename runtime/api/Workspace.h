//===- Workspace.h - Memory kept between calls ------------------*- C++ -*-===//
//
// A collective may need memory besides the caller's buffers: the scratch
// buffer of its schedule, a copy of the input when the caller's buffers
// overlap, and stand-ins for the buffers NCCL lets non-root ranks omit.
// Allocating them on every call would cost more than small collectives
// themselves, so each is kept, grown to the largest size asked so far, until
// the communicator is destroyed.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <array>
#include <cstddef>
#include <cstdlib>
#include <memory>

namespace cclc::runtime {

class Workspace {
public:
  enum class Use { Scratch, InputCopy, StandInInput, StandInOutput, NumUses };

  /// At least Bytes bytes for Use, aligned for any element type and for
  /// vector copies; valid until the next call for the same Use.
  void *get(Use U, size_t Bytes);

private:
  struct Free {
    void operator()(void *P) const { std::free(P); }
  };
  struct Block {
    std::unique_ptr<void, Free> Memory;
    size_t Bytes = 0;
  };
  std::array<Block, size_t(Use::NumUses)> Blocks;
};

} // namespace cclc::runtime
