//===- Environment.cpp - Runtime settings from the environment ------------===//

#include "runtime/api/Environment.h"
#include "runtime/api/Status.h"

#include <cerrno>
#include <cstdlib>
#include <string>
#include <strings.h>

namespace cclc::runtime {

std::chrono::milliseconds timeoutFromEnvironment() {
  const char *Text = std::getenv("CCLC_TIMEOUT_MS");
  if (!Text || !*Text)
    return std::chrono::milliseconds(60000);
  char *End = nullptr;
  errno = 0;
  long long Ms = std::strtoll(Text, &End, 10);
  require(*End == 0 && errno == 0 && Ms > 0 && Ms <= MaxTimeout.count(),
          std::string("CCLC_TIMEOUT_MS=") + Text + " is not a number of milliseconds in [1, " +
              std::to_string(MaxTimeout.count()) + "] (at most 24 days)");
  return std::chrono::milliseconds(Ms);
}

bool debugInfoFromEnvironment() {
  const char *Level = std::getenv("CCLC_DEBUG");
  return Level && strcasecmp(Level, "INFO") == 0;
}

} // namespace cclc::runtime
