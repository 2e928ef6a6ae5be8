//===- Main.cpp - The cclc driver -----------------------------------------===//
//
// cclc check | parse | topo | compile | tune: one tool, one subcommand per stage.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"
#include "InputOutput.h"
#include "MemoryBudget.h"
#include "Version.h"

#include "plan/Assert.h"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <new>
#include <string>
#include <unistd.h>

int main(int Argc, char **Argv) {
  CLI::App App{"cclc: compiles collective-communication algorithms (.ccl) and machine "
               "topologies into verified schedules and kernels"};
  App.set_version_flag("--version", std::string("cclc version ") + CCLC_VERSION);
  App.require_subcommand(1);
  App.fallthrough();

  cclc::driver::CommonOptions Common;
  Common.Color = isatty(STDERR_FILENO);
  App.add_flag("--Werror", Common.WarningsAsErrors, "Treat warnings as errors");
  App.add_flag("--color,!--no-color", Common.Color, "Colour diagnostics (default: on a terminal)");

  int ExitCode = 0;
  cclc::driver::addCheckCommand(App, Common, ExitCode);
  cclc::driver::addParseCommand(App, Common, ExitCode);
  cclc::driver::addTopoCommand(App, Common, ExitCode);
  cclc::driver::addCompileCommand(App, Common, ExitCode);
  cclc::driver::addPlanCommands(App, Common, ExitCode);
  cclc::driver::addTuneCommand(App, Common, ExitCode);

  // Every failure ends as a diagnostic and a nonzero status: no exception
  // leaves main, and no output is lost silently.
  try {
    App.parse(Argc, Argv);
  } catch (const CLI::ParseError &E) {
    int Status = App.exit(E);
    return Status == 0 ? 0 : 2;
  } catch (const cclc::InternalError &E) {
    // A bug in cclc: say where, and leave a core for the report.
    std::fflush(stdout);
    std::fprintf(stderr, "cclc: %s\n", E.what());
    std::abort();
  } catch (const std::bad_alloc &) {
    // The stack is unwound: what the command held is freed, so this prints.
    std::fflush(stdout);
    std::fprintf(stderr, "cclc: error: %s\n", cclc::driver::outOfMemoryMessage().c_str());
    return 1;
  } catch (const std::exception &E) {
    std::fflush(stdout);
    std::fprintf(stderr, "cclc: error: unexpected failure: %s\n", E.what());
    return 1;
  }
  std::string WriteError;
  if (!cclc::driver::flushStdout(WriteError)) {
    std::fprintf(stderr, "cclc: error: %s\n", WriteError.c_str());
    return ExitCode ? ExitCode : 1;
  }
  return ExitCode;
}
