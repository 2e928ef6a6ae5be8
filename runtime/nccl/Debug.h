//===- Debug.h - The shim's log lines, in NCCL's format ----------*- C++ -*-===//
//
// Programs written for NCCL, and the tools that read their logs, expect
// NCCL's lines: "host:pid:tid [device] NCCL INFO message". The shim writes its
// own lines so and routes the runtime's (cclcSetLogHandler) through the same
// format, prefixed "cclc: rank R:", so that both read as one log. Levels
// follow NCCL_DEBUG, which the shim adopts as cclc's CCLC_DEBUG when that is
// not set.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string>

namespace cclc::nccl {

/// Adopts NCCL_DEBUG and routes the runtime's lines through NCCL's format;
/// called before the first communicator is made.
void setUpLogging();

/// Whether the log level is INFO.
bool infoEnabled();

/// "0x7f...", as NCCL's log names a communicator.
std::string address(const void *Pointer);

/// Writes Message at INFO, in NCCL's format, about Device.
void info(int Device, const std::string &Message);

/// Writes Message at INFO the first time Key is seen in this process, so
/// that a log says once per kind of call which library serves it.
void infoOnce(int Device, const std::string &Key, const std::string &Message);

} // namespace cclc::nccl
