//===- RuntimeKernelsTest.cpp - Generated kernels through the C API -------===//
//
// The build generates host kernels of every library algorithm for four ranks
// (cclc_add_algorithms) and links them here. Registered with
// cclcCommRegisterKernels, they run every call of their types and operators
// (the log says so, and no call falls back), and their results are checked
// element by element, as the plan interpreter's are; with the plan loaded
// too, the interpreter runs the operators the kernels lack.
//
//===----------------------------------------------------------------------===//

#include "RuntimeTestSupport.h"

#include "runtime/api/Types.h"

#include "butterfly-allreduce.h"
#include "halving-doubling-allreduce.h"
#include "ring-allgather.h"
#include "ring-allreduce.h"
#include "ring-broadcast.h"
#include "ring-reduce-scatter.h"
#include "ring-reduce.h"
#include "tree-allreduce.h"

#include <cstdio>
#include <span>
#include <unistd.h>

namespace cclc::test {
namespace {

using plan::CollectiveKind;

constexpr int NRanks = 4; // What CMakeLists.txt generates the kernels for.

struct Generated {
  const char *Stem;
  std::span<const host::KernelInfo> Kernels;
};
const Generated Library[] = {
    {"butterfly-allreduce", gen::butterfly_allreduce_kernels},
    {"halving-doubling-allreduce", gen::halving_doubling_allreduce_kernels},
    {"ring-allgather", gen::ring_allgather_kernels},
    {"ring-allreduce", gen::ring_allreduce_kernels},
    {"ring-broadcast", gen::ring_broadcast_kernels},
    {"ring-reduce-scatter", gen::ring_reduce_scatter_kernels},
    {"ring-reduce", gen::ring_reduce_kernels},
    {"tree-allreduce", gen::tree_allreduce_kernels},
};

/// What Body writes to stderr. The text goes to the real stderr as well
/// when Body throws, so that a failing rank still says why.
std::string captureStderr(const std::function<void()> &Body) {
  std::fflush(stderr);
  int Saved = ::dup(2);
  FILE *Log = std::tmpfile();
  ::dup2(::fileno(Log), 2);
  std::exception_ptr Error;
  try {
    Body();
  } catch (...) {
    Error = std::current_exception();
  }
  std::fflush(stderr);
  ::dup2(Saved, 2);
  ::close(Saved);
  std::string Text;
  std::rewind(Log);
  for (int C; (C = std::fgetc(Log)) != EOF;)
    Text += char(C);
  std::fclose(Log);
  if (Error) {
    std::fputs(Text.c_str(), stderr);
    std::rethrow_exception(Error);
  }
  return Text;
}

/// Every type, operator and size the kernels were generated for.
void runGenerated(cclcComm_t Comm, const Generated &G, int Rank) {
  CollectiveKind Collective = *plan::parseCollective(G.Kernels[0].Collective);
  for (cclcDataType_t Type : {cclcFloat32, cclcBfloat16, cclcInt32})
    for (cclcRedOp_t Op : {cclcSum, cclcMax})
      for (size_t Count : {size_t(0), size_t(1), size_t(1001), size_t(70001)})
        runChecked(Comm, {Collective, Type, Op, G.Kernels[0].Root, Count}, Rank, NRanks);
}

TEST(GeneratedKernels, RunEveryCallTheyServeWithRightResults) {
  ScopedEnv Timeout("CCLC_TIMEOUT_MS", "20000");
  ScopedEnv Debug("CCLC_DEBUG", "INFO");
  std::vector<std::string> Plans;
  for (const Generated &G : Library)
    Plans.push_back(compilePlan(G.Stem, NRanks));
  runJob(NRanks, [&](cclcComm_t Control, int Rank) {
    for (size_t I = 0; I < std::size(Library); ++I) {
      const Generated &G = Library[I];
      std::string Name = G.Kernels[0].Algorithm;
      // Kernels alone: every call they serve runs them, none falls back.
      cclcComm_t Comm = newComm(Control);
      std::string Log = captureStderr([&] {
        ok(cclcCommRegisterKernels(Comm, G.Kernels.data(), G.Kernels.size()),
           "registering the kernels of " + Name);
        runGenerated(Comm, G, Rank);
      });
      expect(Log.find("runs " + Name + " (kernels, generated kernel") != std::string::npos,
             "the kernels of " + Name + " did not run:\n" + Log);
      expect(Log.find("falling back") == std::string::npos,
             "a call the kernels of " + Name + " serve fell back:\n" + Log);
      ok(cclcCommDestroy(Comm), "cclcCommDestroy");

      // With the plan: the kernels still win; the plan runs the rest.
      Comm = newComm(Control);
      Log = captureStderr([&] {
        ok(cclcCommLoadPlanText(Comm, Plans[I].data(), Plans[I].size()), "loading " + Name);
        ok(cclcCommRegisterKernels(Comm, G.Kernels.data(), G.Kernels.size()),
           "registering the kernels of " + Name);
        runGenerated(Comm, G, Rank);
        CollectiveKind Collective = *plan::parseCollective(G.Kernels[0].Collective);
        runChecked(Comm, {Collective, cclcFloat64, cclcProd, G.Kernels[0].Root, 1001}, Rank,
                   NRanks);
      });
      expect(Log.find("runs " + Name + " (kernels, generated kernel") != std::string::npos &&
                 Log.find("runs " + Name + " (plan <plan text>, plan interpreter") !=
                     std::string::npos &&
                 Log.find("falling back") == std::string::npos,
             "the kernels and the plan of " + Name + " did not share the calls:\n" + Log);
      ok(cclcCommDestroy(Comm), "cclcCommDestroy");
    }
  });
}

} // namespace
} // namespace cclc::test
