//===- Format.h - printf-style text as NCCL prints it ----------*- C++ -*-===//
//
// The topology printers reproduce NCCL's log lines byte for byte, and those
// are printf formats ("%2.1f", "%lx"), so they are kept as formats here.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

namespace cclc::topo {

/// snprintf into a std::string.
template <typename... Args> std::string format(const char *Fmt, Args... As) {
  int Size = std::snprintf(nullptr, 0, Fmt, As...);
  std::string Out(static_cast<size_t>(Size) + 1, '\0');
  std::snprintf(Out.data(), Out.size(), Fmt, As...);
  Out.pop_back();
  return Out;
}

/// NCCL's "TYPE/host-local" name of a node id ("GPU/0-3b000", "NET/0-2").
inline std::string topoIdName(std::string_view Type, int64_t Id) {
  auto Bits = static_cast<unsigned long long>(Id);
  return format("%s/%llx-%llx", std::string(Type).c_str(), Bits >> 56,
                Bits & 0x00ffffffffffffffULL);
}

} // namespace cclc::topo
