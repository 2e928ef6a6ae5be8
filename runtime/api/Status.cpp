//===- Status.cpp - Status codes and messages of the C API ----------------===//

#include "runtime/api/Status.h"
#include "runtime/net/Socket.h"

#include "host/Connection.h"

#include <new>
#include <system_error>

namespace cclc::runtime {

namespace {
thread_local std::string LastError;
} // namespace

void require(bool Holds, std::string_view Message) {
  if (!Holds)
    throw ApiError(cclcInvalidArgument, std::string(Message));
}

void setLastError(std::string Message) { LastError = std::move(Message); }

const char *lastError() { return LastError.c_str(); }

Classified classify(const std::exception_ptr &Error) {
  cclcResult_t Result = cclcInternalError;
  std::string Message;
  try {
    std::rethrow_exception(Error);
  } catch (const ApiError &E) {
    Result = E.result();
    Message = E.what();
  } catch (const host::CommError &E) {
    Result = E.status() == host::CommStatus::Timeout    ? cclcTimeout
             : E.status() == host::CommStatus::Mismatch ? cclcInvalidUsage
                                                        : cclcRemoteError;
    Message = E.what();
  } catch (const net::NetError &E) {
    Result = cclcRemoteError;
    Message = E.what();
  } catch (const std::bad_alloc &) {
    Result = cclcSystemError;
    Message = "out of memory; use smaller buffers or free memory";
  } catch (const std::system_error &E) {
    Result = cclcSystemError;
    Message = E.what();
  } catch (const std::exception &E) {
    Message = std::string("internal error: ") + E.what();
  } catch (...) {
    Message = "internal error: an unknown exception";
  }
  return {Result, std::move(Message)};
}

cclcResult_t statusOfCurrentException() {
  try {
    Classified C = classify(std::current_exception());
    setLastError(std::move(C.Message));
    return C.Result;
  } catch (...) {
    // No memory even for the message: a short one fits the string itself.
    LastError.clear();
    LastError = "out of memory";
    return cclcSystemError;
  }
}

const char *resultString(cclcResult_t Result) {
  switch (Result) {
  case cclcSuccess: return "no error";
  case cclcSystemError:
    return "a system call or CUDA failed (sockets, shared memory, memory, no usable GPU); "
           "cclcGetLastError names it: check the system's limits (/dev/shm, open files, "
           "ports) or its GPUs";
  case cclcInternalError:
    return "an internal error of cclc; report it with the message of cclcGetLastError";
  case cclcInvalidArgument:
    return "an invalid argument (a null buffer, a bad type, operator, rank or root, or a "
           "plan that fails its checks); cclcGetLastError says which";
  case cclcInvalidUsage:
    return "a call that does not fit the communicator's state; cclcGetLastError says what "
           "to do, and a communicator that failed must be destroyed";
  case cclcRemoteError:
    return "a peer failed, died or disconnected; abort the communicator (cclcCommAbort) "
           "and create a new one";
  case cclcTimeout:
    return "a blocking call ran past its timeout, usually because a peer died or stalled; "
           "abort the communicator, or raise CCLC_TIMEOUT_MS if the peers are only slow";
  case cclcNoAlgorithm:
    return "no algorithm serves the call; load a plan compiled for this collective, rank "
           "count and root (cclcCommLoadPlan)";
  case cclcNumResults: break;
  }
  return "an unknown status code; compare it with cclcResult_t in cclc.h";
}

} // namespace cclc::runtime
