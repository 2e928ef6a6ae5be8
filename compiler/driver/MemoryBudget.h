//===- MemoryBudget.h - How much memory a command may use -------*- C++ -*-===//
//
// A .ccl loop, a rank count or a node count can ask the compiler for more
// memory than the machine has. `cclc compile --max-memory=SIZE` bounds what
// the compile may map beyond what the process has mapped when it starts (the
// budget becomes an address-space limit, as `ulimit -v` sets one, never above
// a limit already in force), so that such a compile ends with a diagnostic
// that names the budget instead of exhausting the machine; main() turns the
// allocation failure into that diagnostic.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace cclc::driver {

/// Bytes named by a --max-memory value: a number with an optional binary
/// suffix K, M, G or T (optionally followed by "iB" or "B"), e.g. "512M",
/// "8GiB", "1048576"; 0 for "0", "none" or "unlimited" (no budget). Nullopt
/// for anything else, or a size that does not fit 64 bits.
std::optional<uint64_t> parseMemorySize(std::string_view Text);

/// The default budget: 8 GiB, or three quarters of the machine's physical
/// memory where that is less.
uint64_t defaultMemoryBudget();

/// Limits the address space to what is mapped now plus Bytes (0: leaves
/// the limits as they are). A lower limit already in force stays.
void applyMemoryBudget(uint64_t Bytes);

/// What main() says when memory ran out: the budget and how to raise it, or
/// the process's own limit (ulimit -v) where that one was reached.
std::string outOfMemoryMessage();

} // namespace cclc::driver
