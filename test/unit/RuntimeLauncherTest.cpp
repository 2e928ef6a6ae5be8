//===- RuntimeLauncherTest.cpp - cclc-perf started by mpirun --------------===//
//
// Real launchers start the ranks of real jobs: `mpirun -np 4 cclc-perf ...`
// must find its rank in Open MPI's environment, meet the other ranks at
// CCLC_ROOT_ADDR and produce right results. Skipped where Open MPI is not
// installed.
//
//===----------------------------------------------------------------------===//

#include "NetTestSupport.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <string>

namespace cclc::test {
namespace {

/// The path of Program on PATH, or empty.
std::string findProgram(const std::string &Program) {
  const char *Path = std::getenv("PATH");
  std::stringstream Dirs(Path ? Path : "");
  for (std::string Dir; std::getline(Dirs, Dir, ':');) {
    std::filesystem::path Candidate = std::filesystem::path(Dir) / Program;
    if (::access(Candidate.c_str(), X_OK) == 0)
      return Candidate.string();
  }
  return {};
}

/// Runs Command in a shell; its output (with stderr) and its exit code.
std::pair<std::string, int> run(const std::string &Command) {
  std::string Output;
  FILE *Pipe = ::popen((Command + " 2>&1").c_str(), "r");
  if (!Pipe)
    return {"popen failed", -1};
  char Buffer[4096];
  while (size_t N = std::fread(Buffer, 1, sizeof Buffer, Pipe))
    Output.append(Buffer, N);
  int Status = ::pclose(Pipe);
  return {Output, WIFEXITED(Status) ? WEXITSTATUS(Status) : -1};
}

TEST(Mpirun, StartsCclcPerfOnFourRanks) {
  std::string Mpirun = findProgram("mpirun");
  if (Mpirun.empty())
    GTEST_SKIP() << "mpirun is not on PATH: install Open MPI (openmpi-bin) to run this test";
  std::string Command = "timeout 120 " + Mpirun +
                        " -np 4 --allow-run-as-root --oversubscribe"
                        " -x CCLC_ROOT_ADDR=127.0.0.1:" +
                        std::to_string(net::test::freePort()) + " -x CCLC_TIMEOUT_MS=20000 " +
                        CCLC_PERF + " allreduce -b 8 -e 64K -f 8 -n 2 -w 1 -c 1";
  auto [Output, Exit] = run(Command);
  EXPECT_EQ(Exit, 0) << Command << "\n" << Output;
  for (int Rank = 0; Rank < 4; ++Rank)
    EXPECT_NE(Output.find("#  Rank  " + std::to_string(Rank) + " Group  0 Pid"), std::string::npos)
        << Output;
  EXPECT_NE(Output.find("       32768          8192     float     sum      -1"), std::string::npos)
      << Output;
  EXPECT_NE(Output.find("# Out of bounds values : 0 OK"), std::string::npos) << Output;
}

} // namespace
} // namespace cclc::test
