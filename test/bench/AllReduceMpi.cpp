//===- AllReduceMpi.cpp - The collective sweep through Open MPI -----------===//
//
// The MPI side of cclc-allreduce-bench, started by it under mpirun: every
// rank runs the common sweep of one collective with MPI's call for it and
// prints its times. The MPI library chooses its algorithm by
// size itself, so the figures name it only as "default".
//
//===----------------------------------------------------------------------===//

#include "AllReduceSweep.h"

#include <mpi.h>

using namespace cclc::bench;

namespace {

/// MPI's call for one collective: its input, its output and the message.
using MpiCall = void (*)(const float *In, float *Out, const Message &M);

struct MpiCollective {
  const char *Collective;
  /// MPI_Bcast has one buffer, which the root reads and the others write.
  bool InPlace;
  MpiCall Call;
};

/// Each collective of the sweep as MPI runs it, out of place where MPI can.
const MpiCollective MpiCollectives[] = {
    {"allreduce", false,
     [](const float *In, float *Out, const Message &M) {
       MPI_Allreduce(In, Out, int(M.SendCount), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
     }},
    {"allgather", false,
     [](const float *In, float *Out, const Message &M) {
       MPI_Allgather(In, int(M.Block), MPI_FLOAT, Out, int(M.Block), MPI_FLOAT, MPI_COMM_WORLD);
     }},
    {"reduce-scatter", false,
     [](const float *In, float *Out, const Message &M) {
       MPI_Reduce_scatter_block(In, Out, int(M.Block), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
     }},
    {"broadcast", true,
     [](const float *, float *Out, const Message &M) {
       MPI_Bcast(Out, int(M.SendCount), MPI_FLOAT, Root, MPI_COMM_WORLD);
     }},
    {"reduce", false,
     [](const float *In, float *Out, const Message &M) {
       MPI_Reduce(In, Out, int(M.SendCount), MPI_FLOAT, MPI_SUM, Root, MPI_COMM_WORLD);
     }},
};

class MpiRunner : public CollectiveRunner {
public:
  explicit MpiRunner(const MpiCollective &Call) : CollectiveRunner(Call.InPlace), Call(Call.Call) {}
  void run() override { Call(Input.data(), outputBuffer(), Msg); }
  void barrier() override { MPI_Barrier(MPI_COMM_WORLD); }
  std::string algorithm() override { return "default"; }

private:
  MpiCall Call;
};

} // namespace

int main(int Argc, char **Argv) {
  MPI_Init(&Argc, &Argv);
  CLI::App App("Runs the sweep of one collective with MPI's call on every rank mpirun started");
  SweepOptions Options;
  addSweepOptions(App, Options);
  std::string Name = "allreduce";
  std::vector<std::string> Names;
  for (const Collective &C : Collectives)
    Names.push_back(C.Name);
  App.add_option("--collective", Name, "The collective to measure")
      ->capture_default_str()
      ->check(CLI::IsMember(Names));
  try {
    App.parse(Argc, Argv);
  } catch (const CLI::ParseError &E) {
    int Status = App.exit(E);
    MPI_Finalize();
    return Status;
  }
  int Rank = 0, NRanks = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &Rank);
  MPI_Comm_size(MPI_COMM_WORLD, &NRanks);
  const Collective &C = *findCollective(Name);
  MpiRunner Runner(entryFor(MpiCollectives, C));
  size_t Wrong = runSweep(Runner, C, Rank, NRanks, Options, stdout);
  MPI_Finalize();
  return Wrong ? 1 : 0;
}
