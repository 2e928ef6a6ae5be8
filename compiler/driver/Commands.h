//===- Commands.h - cclc subcommands ----------------------------*- C++ -*-===//
//
// Each subcommand lives in its own file and registers itself on the driver's
// CLI11 application. Its callback stores the process exit status in ExitCode:
// 0 on success, 1 when the input had errors, 2 for unusable command lines.
//
//===----------------------------------------------------------------------===//
#pragma once

namespace CLI {
class App;
}

namespace cclc::driver {

/// Options every subcommand shares.
struct CommonOptions {
  bool WarningsAsErrors = false;
  bool Color = false;
};

void addCheckCommand(CLI::App &App, const CommonOptions &Common, int &ExitCode);
void addParseCommand(CLI::App &App, const CommonOptions &Common, int &ExitCode);
void addCompileCommand(CLI::App &App, const CommonOptions &Common, int &ExitCode);
void addTopoCommand(CLI::App &App, const CommonOptions &Common, int &ExitCode);
void addTuneCommand(CLI::App &App, const CommonOptions &Common, int &ExitCode);
/// plan-check and import-msccl.
void addPlanCommands(CLI::App &App, const CommonOptions &Common, int &ExitCode);

} // namespace cclc::driver
