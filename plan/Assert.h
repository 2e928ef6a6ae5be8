//===- Assert.h - Internal invariant checks ---------------------*- C++ -*-===//
//
// Internal invariants are never user errors: a broken one means cclc itself is
// wrong. The check throws InternalError, whose message names the file and line
// of the check. The cclc tool reports it and aborts; the runtime's C API
// returns it as cclcInternalError with that message, so that a bug in cclc
// never takes down the application that loaded the runtime. User mistakes go
// through the DiagnosticEngine (or the runtime's status codes) instead.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <stdexcept>

namespace cclc {

class InternalError : public std::logic_error {
public:
  using std::logic_error::logic_error;
};

/// Throws InternalError("internal error at FILE:LINE: assertion 'COND'
/// failed: MSG").
[[noreturn]] void assertionFailed(const char *Cond, const char *Msg, const char *File, int Line);

} // namespace cclc

#define CCLC_ASSERT(Cond, Msg)                                                 \
  ((Cond) ? (void)0 : ::cclc::assertionFailed(#Cond, Msg, __FILE__, __LINE__))
#define CCLC_UNREACHABLE(Msg)                                                  \
  ::cclc::assertionFailed("unreachable", Msg, __FILE__, __LINE__)
