//===- Comm.cpp - One rank's communicator ---------------------------------===//

#include "runtime/api/Comm.h"
#include "runtime/api/Status.h"

namespace cclc::runtime {

namespace {

/// True for an error that only says another channel or rank stopped first.
bool isAbort(const std::exception_ptr &E) {
  try {
    std::rethrow_exception(E);
  } catch (const host::CommError &C) {
    return C.status() == host::CommStatus::Aborted;
  } catch (...) {
    return false;
  }
}

} // namespace

Communicator::Communicator(std::unique_ptr<net::Bootstrap> Boot)
    : Boot(std::move(Boot)), Rank(this->Boot->rank()), NRanks(this->Boot->size()),
      Links(*this->Boot), WaitsYield(net::waitsYieldAnywhere(*this->Boot)),
      Table(Rank, NRanks) {}

// The members go in reverse order: the GPU context (which first waits for
// its kernels), threads, memory, algorithms, transports (TCP sends what was
// posted), then the bootstrap.
Communicator::~Communicator() = default;

void Communicator::checkUsable() {
  pollGpu();
  if (!Failure.empty())
    throw ApiError(cclcInvalidUsage,
                   "the communicator failed in an earlier call (" + Failure +
                       "); its peers are gone or mid-collective, so it takes no more calls: "
                       "destroy it with cclcCommAbort and create a new one");
}

void Communicator::pollGpu() {
  if (!Failure.empty() || !Gpu)
    return;
  if (std::optional<Classified> F = Gpu->failure())
    recordFailure(F->Result, F->Message);
}

void Communicator::recordFailure(cclcResult_t Result, const std::string &Cause) {
  Failure = Cause;
  FailureResult = Result;
  Links.abort(Cause);
  if (Gpu)
    Gpu->abort(Cause);
}

void Communicator::fail(const std::string &Call, const std::vector<std::exception_ptr> &Errors) {
  // The cause is the first error that is not an abort; an abort alone means
  // the cause lies at a peer, which Links.failure() names.
  std::exception_ptr Cause;
  for (const std::exception_ptr &E : Errors)
    if (E && (!Cause || (isAbort(Cause) && !isAbort(E))))
      Cause = E;
  Classified C = classify(Cause);
  std::string Heard = Links.failure();
  std::string Message = Call + " failed on rank " + std::to_string(Rank) + ": " + C.Message;
  if (!Heard.empty() && C.Message.find(Heard) == std::string::npos &&
      Heard.find(C.Message) == std::string::npos)
    Message += " (first failure: " + Heard + ")";
  recordFailure(C.Result, Message);
  throw ApiError(C.Result, Failure + "; destroy the communicator with cclcCommAbort");
}

std::optional<Classified> Communicator::asyncError() {
  std::lock_guard<std::mutex> Guard(CallLock);
  pollGpu();
  if (Failure.empty())
    return std::nullopt;
  return Classified{FailureResult, Failure + "; destroy the communicator with cclcCommAbort"};
}

GpuContext &Communicator::gpu(const Request &R) {
  if (!Gpu) {
    std::unique_ptr<GpuContext> Made = createGpuContext(
        *Boot, std::string(plan::collectiveName(R.Collective)),
        [this](int Peer, const kern::CallStamp &Sent, const kern::CallStamp &Expected) {
          return describeMismatch(Peer, Sent, Expected);
        });
    Made->loadKernels(Table.loaded());
    std::lock_guard<std::mutex> Guard(GpuLock);
    Gpu = std::move(Made);
  }
  return *Gpu;
}

void Communicator::finish() {
  std::lock_guard<std::mutex> Guard(CallLock);
  bool Known = !Failure.empty();
  if (Gpu) {
    Gpu->synchronize();
    pollGpu();
  }
  // A failure of kernels that nobody asked about is reported here, last.
  if (!Known && !Failure.empty())
    throw ApiError(FailureResult, Failure + "; the communicator is destroyed all the same");
  if (Failure.empty())
    leaveTogether(Gpu.get(), [&] { Boot->barrier(); });
}

void Communicator::allGatherOutOfBand(void *Buf, size_t BytesPerRank) {
  std::lock_guard<std::mutex> Guard(CallLock);
  checkUsable();
  Boot->allgather(Buf, BytesPerRank);
}

void Communicator::abort(const std::string &Cause) {
  Links.abort(Cause);
  {
    std::lock_guard<std::mutex> Guard(GpuLock);
    if (Gpu)
      Gpu->abort(Cause);
  }
  Boot->abort();
  std::lock_guard<std::mutex> Guard(CallLock);
  if (Failure.empty()) {
    Failure = Cause;
    FailureResult = cclcRemoteError;
  }
}

} // namespace cclc::runtime
