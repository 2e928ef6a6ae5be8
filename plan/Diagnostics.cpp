//===- Diagnostics.cpp - clang-style user diagnostics ---------------------===//

#include "plan/Diagnostics.h"
#include "plan/Assert.h"

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>

namespace cclc {

[[noreturn]] void assertionFailed(const char *Cond, const char *Msg, const char *File, int Line) {
  throw InternalError(std::string("internal error at ") + File + ":" + std::to_string(Line) +
                      ": assertion '" + Cond + "' failed: " + Msg);
}

DiagnosticEngine::DiagnosticEngine(const SourceManager &SM) : DiagnosticEngine(SM, std::cerr) {}

DiagnosticEngine::DiagnosticEngine(const SourceManager &SM, std::ostream &OS) : SM(SM), OS(OS) {}

void DiagnosticEngine::error(SourceLoc Loc, const std::string &Msg, unsigned Length) {
  report(DiagLevel::Error, Loc, Msg, Length);
}
void DiagnosticEngine::warning(SourceLoc Loc, const std::string &Msg, unsigned Length) {
  report(DiagLevel::Warning, Loc, Msg, Length);
}
void DiagnosticEngine::note(SourceLoc Loc, const std::string &Msg, unsigned Length) {
  report(DiagLevel::Note, Loc, Msg, Length);
}
void DiagnosticEngine::error(SourceRange Range, const std::string &Msg) {
  report(DiagLevel::Error, Range.Begin, Msg, lengthOf(Range));
}
void DiagnosticEngine::warning(SourceRange Range, const std::string &Msg) {
  report(DiagLevel::Warning, Range.Begin, Msg, lengthOf(Range));
}
void DiagnosticEngine::note(SourceRange Range, const std::string &Msg) {
  report(DiagLevel::Note, Range.Begin, Msg, lengthOf(Range));
}

unsigned DiagnosticEngine::lengthOf(SourceRange Range) const {
  if (Range.End.Line != Range.Begin.Line || Range.End.Col <= Range.Begin.Col)
    return 1;
  return Range.End.Col - Range.Begin.Col;
}

void DiagnosticEngine::report(DiagLevel Level, SourceLoc Loc, const std::string &Msg,
                              unsigned Length) {
  if (Level == DiagLevel::Warning && WarningsAsErrors)
    Level = DiagLevel::Error;
  if (Level == DiagLevel::Error)
    ++NumErrors;
  else if (Level == DiagLevel::Warning)
    ++NumWarnings;

  if (Level == DiagLevel::Note) {
    if (LastSuppressed)
      return;
  } else {
    LastSuppressed = Silent || (Level == DiagLevel::Error && NumErrors > ErrorLimit);
    if (Level == DiagLevel::Error && NumErrors == ErrorLimit + 1 && !Silent)
      OS << "cclc: fatal error: too many errors emitted, stopping now\n";
    if (LastSuppressed)
      return;
  }

  const char *Bold = UseColor ? "\033[1m" : "";
  const char *Reset = UseColor ? "\033[0m" : "";
  const char *Color = "";
  const char *Label = "error";
  switch (Level) {
  case DiagLevel::Error:
    Color = UseColor ? "\033[1;31m" : "";
    break;
  case DiagLevel::Warning:
    Color = UseColor ? "\033[1;35m" : "";
    Label = "warning";
    break;
  case DiagLevel::Note:
    Color = UseColor ? "\033[1;30m" : "";
    Label = "note";
    break;
  }

  OS << Bold;
  if (Loc.isValid())
    OS << SM.getName(Loc.FileId) << ':' << Loc.Line << ':' << Loc.Col << ": ";
  else
    OS << "cclc: ";
  OS << Color << Label << ": " << Reset << Bold << Msg << Reset << '\n';
  if (!Loc.isValid())
    return;

  std::string_view Line = SM.getLine(Loc.FileId, Loc.Line);
  if (Line.empty() && Loc.Col <= 1)
    return;
  OS << Line << '\n';
  // Keep tabs in the caret line so the caret stays under the right column.
  std::string Caret;
  for (uint32_t I = 1; I < Loc.Col; ++I)
    Caret += (I - 1 < Line.size() && Line[I - 1] == '\t') ? '\t' : ' ';
  Caret += '^';
  for (unsigned I = 1; I < Length && Loc.Col + I - 1 < Line.size(); ++I)
    Caret += '~';
  OS << (UseColor ? "\033[1;32m" : "") << Caret << Reset << '\n';
}

} // namespace cclc
