//===- Assert.h - Internal invariant checks ---------------------*- C++ -*-===//
//
// Internal invariants are never user errors: a broken one means cclc itself is
// wrong, so it aborts with the file and line of the check. User mistakes go
// through the DiagnosticEngine instead.
//
//===----------------------------------------------------------------------===//
#pragma once

namespace cclc {
/// Prints "cclc: internal error at FILE:LINE: ..." and aborts.
[[noreturn]] void assertionFailed(const char *Cond, const char *Msg, const char *File, int Line);
} // namespace cclc

#define CCLC_ASSERT(Cond, Msg)                                                 \
  ((Cond) ? (void)0 : ::cclc::assertionFailed(#Cond, Msg, __FILE__, __LINE__))
#define CCLC_UNREACHABLE(Msg)                                                  \
  ::cclc::assertionFailed("unreachable", Msg, __FILE__, __LINE__)
