//===- AllReduceMpi.cpp - The allreduce sweep through MPI_Allreduce -------===//
//
// The MPI side of cclc-allreduce-bench, started by it under mpirun: every
// rank runs the common sweep with MPI_Allreduce (out of place, like cclc's
// call) and rank 0 prints the figure lines. The MPI library chooses its
// algorithm by size itself, so the figures name it only as "default".
//
//===----------------------------------------------------------------------===//

#include "AllReduceSweep.h"

#include <mpi.h>


using namespace cclc::bench;

namespace {

class MpiRunner : public OutOfPlaceRunner {
public:
  void allReduce() override {
    MPI_Allreduce(Input.data(), Output.data(), static_cast<int>(Input.size()), MPI_FLOAT, MPI_SUM,
                  MPI_COMM_WORLD);
  }
  void barrier() override { MPI_Barrier(MPI_COMM_WORLD); }
  std::string algorithm() override { return "default"; }
};

} // namespace

int main(int Argc, char **Argv) {
  MPI_Init(&Argc, &Argv);
  CLI::App App("Runs the allreduce sweep with MPI_Allreduce on every rank mpirun started");
  SweepOptions Options;
  addSweepOptions(App, Options);
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
  MpiRunner Runner;
  size_t Wrong = runSweep(Runner, Rank, NRanks, Options, stdout);
  MPI_Finalize();
  return Wrong ? 1 : 0;
}
