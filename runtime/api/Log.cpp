//===- Log.cpp - Where the runtime's log lines go -------------------------===//

#include "runtime/api/Log.h"

#include <atomic>
#include <cstdio>

namespace cclc::runtime {

namespace {

/// Read on every line, written once by a program at most: an atomic
/// suffices, and a line never waits on a lock.
std::atomic<cclcLogHandler_t> Handler{nullptr};

} // namespace

void logLine(const char *Level, int Rank, const std::string &Message) {
  if (cclcLogHandler_t To = Handler.load()) {
    To(Level, Rank, Message.c_str());
    return;
  }
  // What the program wrote to stdout before stays before the line in a
  // shared pipe (as std::cerr's tie to std::cout keeps it), and one write
  // per line keeps the lines of threads and ranks apart.
  std::fflush(stdout);
  std::string Line = "cclc " + std::string(Level) + " rank " + std::to_string(Rank) + ": " +
                     Message + "\n";
  std::fwrite(Line.data(), 1, Line.size(), stderr);
  std::fflush(stderr);
}

void setLogHandler(cclcLogHandler_t To) { Handler.store(To); }

} // namespace cclc::runtime
