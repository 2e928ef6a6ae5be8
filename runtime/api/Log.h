//===- Log.h - Where the runtime's log lines go -----------------*- C++ -*-===//
//
// The runtime's INFO and WARN lines (algorithm choices, fallbacks, how peers
// are reached) go to stderr as "cclc LEVEL rank R: message", or to the
// handler a program installed with cclcSetLogHandler: NCCL's API over cclc
// writes them in NCCL's own format, so that tools reading NCCL's logs read
// cclc's too.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "cclc.h"

#include <string>

namespace cclc::runtime {

/// Writes one line of Level ("INFO", "WARN") about Rank.
void logLine(const char *Level, int Rank, const std::string &Message);

/// Sends every later line to Handler; null restores stderr.
void setLogHandler(cclcLogHandler_t Handler);

} // namespace cclc::runtime
