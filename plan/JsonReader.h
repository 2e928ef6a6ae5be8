//===- JsonReader.h - JSON parsing that remembers positions -----*- C++ -*-===//
//
// nlohmann/json builds a document but forgets where each value was written.
// Readers of cclc's JSON files (plans) want to point a diagnostic at the
// offending field, "plan.json:57:18: error: ...", so this parser records the
// byte offset where every value starts, keyed by its JSON pointer. Malformed
// text is reported at the byte the parser stopped on.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "plan/Diagnostics.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <unordered_map>

namespace cclc::plan {

/// A parsed document and where its values start in file FileId.
struct LocatedJson {
  nlohmann::json Value;
  uint32_t FileId = 0;
  /// JSON pointer ("/ranks/3/peer", "" for the root) -> byte offset.
  std::unordered_map<std::string, size_t> Offsets;

  /// Where the value at Pointer starts; for a pointer that names no value
  /// (a missing field), where its nearest enclosing value starts.
  SourceLoc locate(const SourceManager &SM, std::string Pointer) const;
};

/// Parses file FileId. Syntax errors (including a truncated file) are
/// reported with their line and column, and give nullopt.
std::optional<LocatedJson> parseJsonFile(uint32_t FileId, const SourceManager &SM,
                                         DiagnosticEngine &Diags);

/// Appends one reference token to a JSON pointer, escaping '~' and '/'.
std::string appendPointer(const std::string &Pointer, const std::string &Token);

} // namespace cclc::plan
