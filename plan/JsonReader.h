//===- JsonReader.h - JSON parsing that remembers positions -----*- C++ -*-===//
//
// nlohmann/json builds a document but forgets where each value was written.
// Readers of cclc's JSON files (plans) want to point a diagnostic at the
// offending field, "plan.json:57:18: error: ...", so this parser records the
// byte offset where every value starts, found by its JSON pointer. Malformed
// text is reported at the byte the parser stopped on, and so is nesting deeper
// than the reader allows: the parser is told to stop there, so a hostile file
// costs time and memory in proportion to its size, whatever its shape.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "plan/Diagnostics.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace cclc::plan {

/// A parsed document and where its values start in file FileId.
struct LocatedJson {
  nlohmann::json Value;
  uint32_t FileId = 0;
  /// Byte offset where each value starts; value 0 is the root.
  std::vector<size_t> Starts;
  /// "<parent's value index>/<reference token>" -> the child's value index.
  /// Each value costs its own token, not its whole pointer, so that deep
  /// documents do not take memory quadratic in their depth.
  std::unordered_map<std::string, uint32_t> Children;

  /// Where the value at JSON pointer Pointer ("/ranks/3/peer", "" for the
  /// root) starts; for a pointer that names no value (a missing field), where
  /// its nearest enclosing value starts.
  SourceLoc locate(const SourceManager &SM, const std::string &Pointer) const;
};

/// Parses file FileId. Syntax errors (including a truncated file) and arrays
/// or objects nested more than MaxDepth deep are reported with their line and
/// column, and give nullopt.
std::optional<LocatedJson> parseJsonFile(uint32_t FileId, const SourceManager &SM,
                                         DiagnosticEngine &Diags, unsigned MaxDepth);

/// Appends one reference token to a JSON pointer, escaping '~' and '/'.
std::string appendPointer(const std::string &Pointer, const std::string &Token);

} // namespace cclc::plan
