//===- Environment.cpp - Runtime settings from the environment ------------===//

#include "runtime/api/Environment.h"
#include "runtime/api/Status.h"

#include <cerrno>
#include <cstdlib>
#include <string>
#include <strings.h>

namespace cclc::runtime {

namespace {

/// The milliseconds variable Name holds, Default where it is unset or empty;
/// refuses anything but a number in [Least, MaxTimeout].
std::chrono::milliseconds millisecondsFromEnvironment(const char *Name, long long Least,
                                                      std::chrono::milliseconds Default) {
  const char *Text = std::getenv(Name);
  if (!Text || !*Text)
    return Default;
  char *End = nullptr;
  errno = 0;
  long long Ms = std::strtoll(Text, &End, 10);
  require(*End == 0 && errno == 0 && Ms >= Least && Ms <= MaxTimeout.count(),
          std::string(Name) + "=" + Text + " is not a number of milliseconds in [" +
              std::to_string(Least) + ", " + std::to_string(MaxTimeout.count()) +
              "] (at most 24 days)");
  return std::chrono::milliseconds(Ms);
}

} // namespace

std::chrono::milliseconds timeoutFromEnvironment() {
  return millisecondsFromEnvironment("CCLC_TIMEOUT_MS", 1, std::chrono::milliseconds(60000));
}

std::chrono::milliseconds kernelTimeoutFromEnvironment() {
  return millisecondsFromEnvironment("CCLC_KERNEL_TIMEOUT_MS", 0, std::chrono::milliseconds(0));
}

bool debugInfoFromEnvironment() {
  const char *Level = std::getenv("CCLC_DEBUG");
  return Level && strcasecmp(Level, "INFO") == 0;
}

} // namespace cclc::runtime
