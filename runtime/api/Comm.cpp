//===- Comm.cpp - One rank's communicator ---------------------------------===//

#include "runtime/api/Comm.h"
#include "runtime/api/Status.h"

namespace cclc::runtime {

Communicator::Communicator(std::unique_ptr<net::Bootstrap> Boot)
    : Boot(std::move(Boot)), Rank(this->Boot->rank()), NRanks(this->Boot->size()),
      Links(*this->Boot), Table(Rank, NRanks) {}

// The members go in reverse order: threads, memory, algorithms, transports
// (TCP sends what was posted), then the bootstrap.
Communicator::~Communicator() = default;

void Communicator::checkUsable() const {
  if (!Failure.empty())
    throw ApiError(cclcInvalidUsage,
                   "the communicator failed in an earlier call (" + Failure +
                       "); its peers are gone or mid-collective, so it takes no more calls: "
                       "destroy it with cclcCommAbort and create a new one");
}

void Communicator::finish() {
  std::lock_guard<std::mutex> Guard(CallLock);
  if (Failure.empty())
    Boot->barrier();
}

void Communicator::abort(const std::string &Cause) {
  Links.abort(Cause);
  Boot->abort();
  std::lock_guard<std::mutex> Guard(CallLock);
  if (Failure.empty())
    Failure = Cause;
}

} // namespace cclc::runtime
