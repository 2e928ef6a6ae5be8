//===- MemoryBudget.cpp - How much memory a command may use ---------------===//

#include "MemoryBudget.h"

#include "plan/Vocabulary.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cinttypes>
#include <cstdio>
#include <sys/resource.h>
#include <unistd.h>

namespace cclc::driver {

namespace {

/// The budget applied (0 while none is) and the address-space limit it set.
uint64_t Budget = 0;
rlim_t BudgetLimit = 0;

/// The address space mapped now (VmSize), in bytes; 0 when unknown.
uint64_t addressSpaceInUse() {
  FILE *Status = std::fopen("/proc/self/status", "r");
  if (!Status)
    return 0;
  char Line[256];
  uint64_t KiB = 0;
  while (std::fgets(Line, sizeof Line, Status))
    if (std::sscanf(Line, "VmSize: %" SCNu64 " kB", &KiB) == 1)
      break;
  std::fclose(Status);
  return KiB * 1024;
}

bool equalsIgnoringCase(std::string_view A, std::string_view B) {
  return A.size() == B.size() &&
         std::equal(A.begin(), A.end(), B.begin(), [](char X, char Y) {
           return std::tolower(static_cast<unsigned char>(X)) ==
                  std::tolower(static_cast<unsigned char>(Y));
         });
}

} // namespace

std::optional<uint64_t> parseMemorySize(std::string_view Text) {
  if (equalsIgnoringCase(Text, "none") || equalsIgnoringCase(Text, "unlimited"))
    return 0;
  uint64_t Value = 0;
  auto [End, Error] = std::from_chars(Text.data(), Text.data() + Text.size(), Value);
  if (Error != std::errc() || End == Text.data())
    return std::nullopt;
  std::string_view Suffix(End, static_cast<size_t>(Text.data() + Text.size() - End));
  unsigned Shift = 0;
  if (!Suffix.empty()) {
    switch (std::toupper(static_cast<unsigned char>(Suffix[0]))) {
    case 'K': Shift = 10; break;
    case 'M': Shift = 20; break;
    case 'G': Shift = 30; break;
    case 'T': Shift = 40; break;
    case 'B': Shift = 0; break;
    default: return std::nullopt;
    }
    std::string_view Rest = Suffix.substr(1);
    bool Bytes = std::toupper(static_cast<unsigned char>(Suffix[0])) == 'B';
    if (!(Rest.empty() || (!Bytes && (equalsIgnoringCase(Rest, "iB") ||
                                      equalsIgnoringCase(Rest, "B")))))
      return std::nullopt;
  }
  if (Shift && Value > (UINT64_MAX >> Shift))
    return std::nullopt;
  return Value << Shift;
}

uint64_t defaultMemoryBudget() {
  uint64_t Budget = uint64_t(8) << 30;
  long Pages = sysconf(_SC_PHYS_PAGES);
  long PageSize = sysconf(_SC_PAGESIZE);
  if (Pages > 0 && PageSize > 0)
    Budget = std::min(Budget, uint64_t(Pages) / 4 * 3 * uint64_t(PageSize));
  // Whole MiB, so that messages print it as a round number.
  return Budget & ~((uint64_t(1) << 20) - 1);
}

void applyMemoryBudget(uint64_t Bytes) {
  if (Bytes == 0)
    return;
  rlimit Limit{};
  if (getrlimit(RLIMIT_AS, &Limit) != 0)
    return;
  // The budget is for what the command allocates: the libraries and stacks
  // already mapped come on top.
  uint64_t InUse = addressSpaceInUse();
  rlim_t Want = static_cast<rlim_t>(Bytes > UINT64_MAX - InUse ? UINT64_MAX : Bytes + InUse);
  if (Limit.rlim_cur != RLIM_INFINITY && Limit.rlim_cur <= Want)
    return; // A lower limit is already in force and stays.
  if (Limit.rlim_max != RLIM_INFINITY)
    Want = std::min(Want, Limit.rlim_max);
  Limit.rlim_cur = Want;
  if (setrlimit(RLIMIT_AS, &Limit) == 0) {
    Budget = Bytes;
    BudgetLimit = Want;
  }
}

std::string outOfMemoryMessage() {
  rlimit Limit{};
  if (getrlimit(RLIMIT_AS, &Limit) != 0 || Limit.rlim_cur == RLIM_INFINITY)
    return "out of memory";
  if (Budget && Limit.rlim_cur == BudgetLimit)
    return "out of memory: this needs more than its memory budget of " +
           plan::formatBytes(Budget) + "; raise it with --max-memory=SIZE";
  return "out of memory: the process may use at most " + plan::formatBytes(Limit.rlim_cur) +
         " of address space (ulimit -v)";
}

} // namespace cclc::driver
