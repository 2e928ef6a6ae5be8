//===- Debug.cpp - The shim's log lines, in NCCL's format -----------------===//

#include "Debug.h"

#include <cclc.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <set>
#include <strings.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace cclc::nccl {

namespace {

/// NCCL's prefix: the host name up to its first dot, the process, the
/// thread and the CUDA device.
std::string prefix(int Device, const char *Level) {
  char Host[256] = {};
  if (gethostname(Host, sizeof Host - 1) != 0)
    Host[0] = 0;
  std::string Name(Host);
  Name = Name.substr(0, Name.find('.'));
  return Name + ":" + std::to_string(getpid()) + ":" + std::to_string(long(syscall(SYS_gettid))) +
         " [" + std::to_string(Device) + "] NCCL " + Level + " ";
}

void writeLine(int Device, const char *Level, const std::string &Message) {
  // One write per line, so that the lines of threads and ranks never mix.
  std::string Line = prefix(Device, Level) + Message + "\n";
  std::fwrite(Line.data(), 1, Line.size(), stderr);
  std::fflush(stderr);
}

/// The runtime's lines, about the device current on the logging thread as
/// NCCL's are.
void fromRuntime(const char *Level, int Rank, const char *Message) {
  int Device = 0;
  if (cudaGetDevice(&Device) != cudaSuccess) {
    cudaGetLastError(); // No usable device: NCCL's field reads 0 then.
    Device = 0;
  }
  writeLine(Device, Level, "cclc: rank " + std::to_string(Rank) + ": " + Message);
}

} // namespace

void setUpLogging() {
  static std::once_flag Once;
  std::call_once(Once, [] {
    if (const char *Level = std::getenv("NCCL_DEBUG"); Level && !std::getenv("CCLC_DEBUG"))
      setenv("CCLC_DEBUG", Level, 0);
    cclcSetLogHandler(fromRuntime);
  });
}

std::string address(const void *Pointer) {
  char Text[32];
  std::snprintf(Text, sizeof Text, "%p", Pointer);
  return Text;
}

bool infoEnabled() {
  const char *Level = std::getenv("CCLC_DEBUG");
  return Level && strcasecmp(Level, "INFO") == 0;
}

void info(int Device, const std::string &Message) {
  if (infoEnabled())
    writeLine(Device, "INFO", Message);
}

void infoOnce(int Device, const std::string &Key, const std::string &Message) {
  if (!infoEnabled())
    return;
  static std::mutex Lock;
  static std::set<std::string> Seen;
  {
    std::lock_guard<std::mutex> Guard(Lock);
    if (!Seen.insert(Key).second)
      return;
  }
  writeLine(Device, "INFO", Message);
}

} // namespace cclc::nccl
