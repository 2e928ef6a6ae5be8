//===- Status.h - Status codes and messages of the C API --------*- C++ -*-===//
//
// Inside the runtime a failure is an ApiError carrying the status the C call
// returns and a message saying what went wrong and what to do; the C entry
// points turn it (and the communication and system errors below) into a
// status and keep the message for cclcGetLastError.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/api/cclc.h"

#include <exception>
#include <stdexcept>
#include <string>
#include <string_view>

namespace cclc::runtime {

class ApiError : public std::runtime_error {
public:
  ApiError(cclcResult_t Result, const std::string &Message)
      : std::runtime_error(Message), Result(Result) {}
  cclcResult_t result() const { return Result; }

private:
  cclcResult_t Result;
};

/// Throws ApiError(cclcInvalidArgument, Message) unless Holds. Calls on the
/// path of every collective pass literals, so that passing costs no string.
void require(bool Holds, std::string_view Message);

/// The message cclcGetLastError returns on this thread.
void setLastError(std::string Message);
const char *lastError();

/// What an exception means for the caller of the C API.
struct Classified {
  cclcResult_t Result = cclcInternalError;
  std::string Message;
};
Classified classify(const std::exception_ptr &Error);

/// The status of the current exception, with its message stored as the last
/// error; throws nothing, even out of memory. Call from a catch block only.
cclcResult_t statusOfCurrentException();

/// Runs Body, returning cclcSuccess, or the status of what it threw.
template <class F> cclcResult_t guarded(F &&Body) noexcept {
  try {
    Body();
    return cclcSuccess;
  } catch (...) {
    return statusOfCurrentException();
  }
}

const char *resultString(cclcResult_t Result);

} // namespace cclc::runtime
