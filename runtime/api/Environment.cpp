//===- Environment.cpp - Runtime settings from the environment ------------===//

#include "runtime/api/Environment.h"
#include "runtime/api/Status.h"

#include "plan/Limits.h"

#include <cerrno>
#include <cstdlib>
#include <string>
#include <strings.h>

namespace cclc::runtime {

namespace {

/// The integer variable Name holds, Default where it is unset or empty;
/// refuses anything but a number in [Least, Most], saying that it should be
/// What.
long long integerFromEnvironment(const char *Name, long long Least, long long Most,
                                 long long Default, const std::string &What) {
  const char *Text = std::getenv(Name);
  if (!Text || !*Text)
    return Default;
  char *End = nullptr;
  errno = 0;
  long long Value = std::strtoll(Text, &End, 10);
  require(*End == 0 && errno == 0 && Value >= Least && Value <= Most,
          std::string(Name) + "=" + Text + " is not " + What + " in [" + std::to_string(Least) +
              ", " + std::to_string(Most) + "]");
  return Value;
}

std::chrono::milliseconds millisecondsFromEnvironment(const char *Name, long long Least,
                                                      std::chrono::milliseconds Default) {
  return std::chrono::milliseconds(integerFromEnvironment(
      Name, Least, MaxTimeout.count(), Default.count(), "a number of milliseconds"));
}

} // namespace

std::chrono::milliseconds timeoutFromEnvironment() {
  return millisecondsFromEnvironment("CCLC_TIMEOUT_MS", 1, std::chrono::milliseconds(60000));
}

std::chrono::milliseconds kernelTimeoutFromEnvironment() {
  return millisecondsFromEnvironment("CCLC_KERNEL_TIMEOUT_MS", 0, std::chrono::milliseconds(0));
}

int64_t proofStepsFromEnvironment() {
  return integerFromEnvironment("CCLC_PROOF_STEPS", 0, plan::MaxPlanSteps,
                                plan::RuntimeProofSteps, "a number of steps");
}

bool debugInfoFromEnvironment() {
  const char *Level = std::getenv("CCLC_DEBUG");
  return Level && strcasecmp(Level, "INFO") == 0;
}

} // namespace cclc::runtime
