//===- Diagnostics.h - clang-style user diagnostics -------------*- C++ -*-===//
//
// Every user-facing problem (a malformed .ccl file, topology XML, plan JSON, an
// algorithm that fails verification) is reported through one engine, so that
// all of cclc speaks the same format:
//
//   file.ccl:12:5: error: message
//       send(peer, output[c]);
//       ^~~~
//   file.ccl:3:1: note: attached explanation
//
//===----------------------------------------------------------------------===//
#pragma once

#include "plan/SourceManager.h"

#include <iosfwd>
#include <string>

namespace cclc {

enum class DiagLevel { Error, Warning, Note };

class DiagnosticEngine {
public:
  explicit DiagnosticEngine(const SourceManager &SM);
  DiagnosticEngine(const SourceManager &SM, std::ostream &OS);

  void error(SourceLoc Loc, const std::string &Msg, unsigned Length = 1);
  void warning(SourceLoc Loc, const std::string &Msg, unsigned Length = 1);
  /// A note explains the diagnostic reported just before it.
  void note(SourceLoc Loc, const std::string &Msg, unsigned Length = 1);
  /// Range form: underlines Range when it lies on one line.
  void error(SourceRange Range, const std::string &Msg);
  void warning(SourceRange Range, const std::string &Msg);
  void note(SourceRange Range, const std::string &Msg);

  unsigned errorCount() const { return NumErrors; }
  unsigned warningCount() const { return NumWarnings; }
  bool hasErrors() const { return NumErrors != 0; }

  /// Turns every later warning into an error (the driver's --Werror).
  void setWarningsAsErrors(bool Enable) { WarningsAsErrors = Enable; }
  /// Colours follow clang's scheme; off unless the stream is a terminal.
  void setUseColor(bool Enable) { UseColor = Enable; }
  /// Stops printing (counts are kept): fuzzing and benchmarks want no output.
  void setSilent(bool Enable) { Silent = Enable; }
  /// Stops printing after this many errors, as clang's -ferror-limit does.
  void setErrorLimit(unsigned Limit) { ErrorLimit = Limit; }

  const SourceManager &getSourceManager() const { return SM; }

private:
  void report(DiagLevel Level, SourceLoc Loc, const std::string &Msg, unsigned Length);
  unsigned lengthOf(SourceRange Range) const;

  const SourceManager &SM;
  std::ostream &OS;
  unsigned NumErrors = 0;
  unsigned NumWarnings = 0;
  unsigned ErrorLimit = 50;
  bool WarningsAsErrors = false;
  bool UseColor = false;
  bool Silent = false;
  /// Notes that follow a suppressed diagnostic are suppressed too.
  bool LastSuppressed = false;
};

} // namespace cclc
