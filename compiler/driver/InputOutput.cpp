//===- InputOutput.cpp - What every subcommand reads and writes -----------===//

#include "InputOutput.h"
#include "Version.h"

#include "compiler/emit/MscclXml.h"
#include "compiler/emit/ScheduleDot.h"
#include "compiler/emit/ScheduleText.h"
#include "plan/Assert.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>

namespace cclc::driver {

void configure(DiagnosticEngine &Diags, const CommonOptions &Common) {
  Diags.setWarningsAsErrors(Common.WarningsAsErrors);
  Diags.setUseColor(Common.Color);
}

std::optional<uint32_t> loadSource(SourceManager &SM, DiagnosticEngine &Diags,
                                   const std::string &Path) {
  std::string Error;
  std::optional<uint32_t> Id = SM.loadFile(Path, Error);
  if (!Id)
    Diags.error(SourceLoc{}, Error);
  return Id;
}

const std::vector<std::string> &scheduleFormats() {
  static const std::vector<std::string> Formats = {"schedule", "json", "msccl-xml", "dot"};
  return Formats;
}

namespace {

/// " (No space left on device)" for the errno a failed write left, or
/// nothing when it left none.
std::string reason(int Errno) {
  return Errno ? std::string(": ") + std::strerror(Errno) : std::string();
}

} // namespace

bool flushStdout(std::string &Error) {
  std::cout.flush();
  bool Failed = std::fflush(stdout) != 0;
  int Errno = errno;
  Failed |= std::ferror(stdout) != 0 || std::cout.fail();
  if (!Failed)
    return true;
  Error = "cannot write to standard output" + reason(Errno);
  std::clearerr(stdout);
  std::cout.clear();
  return false;
}

bool writeOutput(const std::string &Path, DiagnosticEngine &Diags,
                 const std::function<void(std::ostream &)> &Write) {
  if (Path == "-") {
    Write(std::cout);
    std::string Error;
    if (flushStdout(Error))
      return true;
    Diags.error(SourceLoc{}, Error);
    return false;
  }
  errno = 0;
  std::ofstream OS(Path);
  if (!OS) {
    Diags.error(SourceLoc{}, "cannot write '" + Path + "'" + reason(errno));
    return false;
  }
  // The write that fails (when a buffer fills, or at the final flush)
  // leaves the reason in errno.
  errno = 0;
  Write(OS);
  OS.flush();
  OS.close();
  if (OS.fail()) {
    Diags.error(SourceLoc{}, "cannot write '" + Path + "'" + reason(errno));
    return false;
  }
  return true;
}

bool writeFile(const std::string &Path, const std::string &Text, DiagnosticEngine &Diags) {
  return writeOutput(Path, Diags, [&](std::ostream &OS) { OS << Text; });
}

bool emitSchedule(const sched::Schedule &S, const std::string &Format,
                  const plan::PlanInfo &Info, std::ostream &OS, DiagnosticEngine &Diags) {
  if (Format == "schedule")
    sched::printSchedule(S, OS);
  else if (Format == "json")
    OS << plan::scheduleToPlan(S, Info).dump(2) << '\n';
  else if (Format == "msccl-xml")
    return emit::writeMscclXml(S, Info, OS, Diags);
  else if (Format == "dot")
    emit::printScheduleDot(S, OS);
  else
    CCLC_UNREACHABLE("unknown schedule format");
  return true;
}

std::string generatorName() { return std::string("cclc ") + CCLC_VERSION; }

std::string defaultAlgorithmsDir() {
  namespace fs = std::filesystem;
  std::error_code Error;
  fs::path Exe = fs::read_symlink("/proc/self/exe", Error);
  fs::path Installed = Exe.parent_path() / CCLC_ALGORITHMS_FROM_BINDIR;
  if (!Error && fs::is_directory(Installed, Error))
    return Installed.lexically_normal().string();
  return CCLC_SOURCE_ALGORITHMS_DIR;
}

} // namespace cclc::driver
