//===- SourceManager.h - Source buffers and locations -----------*- C++ -*-===//
//
// Every file cclc reads (.ccl, topology XML, plan JSON) is owned here so that
// diagnostics can quote the offending line with a caret under the column.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cclc {

/// A position in a loaded buffer. Lines and columns start at 1; line 0 means
/// "no location" (errors about a whole file or the command line).
struct SourceLoc {
  uint32_t FileId = 0;
  uint32_t Line = 0;
  uint32_t Col = 0;
  bool isValid() const { return Line != 0; }
};

/// A half-open span on one line, used to underline a token or expression.
struct SourceRange {
  SourceLoc Begin;
  SourceLoc End;
};

class SourceManager {
public:
  /// Reads a whole file. On failure returns nullopt and sets Error to a reason
  /// a user can act on (missing file, not readable, a directory).
  std::optional<uint32_t> loadFile(const std::string &Path, std::string &Error);
  /// Registers text that did not come from disk (tests, generated input).
  uint32_t addBuffer(std::string Name, std::string Text);

  std::string_view getText(uint32_t FileId) const;
  const std::string &getName(uint32_t FileId) const;
  /// The text of one line, without its newline; empty when out of range.
  std::string_view getLine(uint32_t FileId, uint32_t Line) const;
  /// Converts a byte offset (as XML and JSON parsers report) to a location.
  SourceLoc locForOffset(uint32_t FileId, size_t Offset) const;

private:
  struct File {
    std::string Name;
    std::string Text;
    std::vector<uint32_t> LineStarts;
  };
  std::vector<File> Files;
};

} // namespace cclc
