//===- LauncherTest.cpp - Rendezvous from launcher environments -----------===//

#include "runtime/bootstrap/Launcher.h"

#include "NetTestSupport.h"

#include <cstdlib>
#include <gtest/gtest.h>

using namespace cclc::net;
using namespace cclc::net::test;
using namespace std::chrono_literals;

namespace {

/// Starts and ends every test with none of the launchers' variables set.
class LauncherEnv : public ::testing::Test {
protected:
  void SetUp() override { clear(); }
  void TearDown() override { clear(); }

  static void clear() {
    for (const char *Name :
         {"RANK", "WORLD_SIZE", "LOCAL_RANK", "TORCHELASTIC_RUN_ID", "OMPI_COMM_WORLD_RANK",
          "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_MCA_ess_base_jobid",
          "PMIX_NAMESPACE", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", "SLURM_JOB_ID",
          "SLURM_STEP_ID", "MASTER_ADDR", "MASTER_PORT", "CCLC_ROOT_ADDR", "CCLC_SECRET"})
      ::unsetenv(Name);
  }
  static void set(const char *Name, const std::string &Value) { ::setenv(Name, Value.c_str(), 1); }
};

} // namespace

TEST_F(LauncherEnv, TorchrunStyle) {
  set("RANK", "2");
  set("WORLD_SIZE", "4");
  set("LOCAL_RANK", "0");
  set("MASTER_ADDR", "node0");
  set("MASTER_PORT", "29500");
  set("TORCHELASTIC_RUN_ID", "run-a");
  Rendezvous R = rendezvousFromEnvironment();
  EXPECT_EQ(R.Launcher, "torchrun");
  EXPECT_EQ(R.Rank, 2);
  EXPECT_EQ(R.Size, 4);
  EXPECT_EQ(R.LocalRank, 0);
  EXPECT_EQ(R.RootHost, "node0");
  EXPECT_EQ(R.RootPort, 29500);
  // Every rank of the job derives the same secret; another job another one.
  EXPECT_EQ(rendezvousFromEnvironment().Secret, R.Secret);
  set("TORCHELASTIC_RUN_ID", "run-b");
  EXPECT_NE(rendezvousFromEnvironment().Secret, R.Secret);
  set("MASTER_PORT", "29501");
  EXPECT_NE(rendezvousFromEnvironment().Secret, R.Secret);
}

TEST_F(LauncherEnv, OpenMpiWithRootAddress) {
  set("OMPI_COMM_WORLD_RANK", "1");
  set("OMPI_COMM_WORLD_SIZE", "2");
  set("OMPI_COMM_WORLD_LOCAL_RANK", "1");
  set("OMPI_MCA_ess_base_jobid", "12345");
  EXPECT_THROW(rendezvousFromEnvironment(), NetError); // no root address
  set("CCLC_ROOT_ADDR", "[fd00::1]:6000");
  Rendezvous R = rendezvousFromEnvironment();
  EXPECT_EQ(R.Launcher, "Open MPI");
  EXPECT_EQ(R.Rank, 1);
  EXPECT_EQ(R.Size, 2);
  EXPECT_EQ(R.LocalRank, 1);
  EXPECT_EQ(R.RootHost, "fd00::1");
  EXPECT_EQ(R.RootPort, 6000);
}

TEST_F(LauncherEnv, SlurmAndExplicitSecret) {
  set("SLURM_PROCID", "5");
  set("SLURM_NTASKS", "8");
  set("SLURM_JOB_ID", "1234");
  set("SLURM_STEP_ID", "0");
  set("CCLC_ROOT_ADDR", "login1:7000");
  Rendezvous R = rendezvousFromEnvironment();
  EXPECT_EQ(R.Launcher, "Slurm");
  EXPECT_EQ(R.Rank, 5);
  EXPECT_EQ(R.Size, 8);
  EXPECT_EQ(R.LocalRank, -1);
  EXPECT_EQ(R.RootHost, "login1");
  EXPECT_EQ(R.RootPort, 7000);
  set("SLURM_JOB_ID", "1235");
  EXPECT_NE(rendezvousFromEnvironment().Secret, R.Secret);
  // CCLC_SECRET alone decides the secret.
  set("CCLC_SECRET", "s3cret");
  uint64_t Explicit = rendezvousFromEnvironment().Secret;
  set("SLURM_JOB_ID", "1234");
  EXPECT_EQ(rendezvousFromEnvironment().Secret, Explicit);
  EXPECT_NE(Explicit, R.Secret);
}

TEST_F(LauncherEnv, TorchrunVariablesTakePrecedence) {
  set("SLURM_PROCID", "3");
  set("SLURM_NTASKS", "4");
  set("RANK", "1");
  set("WORLD_SIZE", "2");
  set("MASTER_ADDR", "127.0.0.1");
  set("MASTER_PORT", "1234");
  Rendezvous R = rendezvousFromEnvironment();
  EXPECT_EQ(R.Launcher, "torchrun");
  EXPECT_EQ(R.Rank, 1);
}

TEST_F(LauncherEnv, MalformedEnvironment) {
  EXPECT_THROW(rendezvousFromEnvironment(), NetError);
  set("MASTER_ADDR", "127.0.0.1");
  set("MASTER_PORT", "1234");
  set("WORLD_SIZE", "4");
  set("RANK", "abc");
  EXPECT_THROW(rendezvousFromEnvironment(), NetError);
  set("RANK", "4");
  EXPECT_THROW(rendezvousFromEnvironment(), NetError);
  set("RANK", "3");
  set("MASTER_PORT", "70000");
  EXPECT_THROW(rendezvousFromEnvironment(), NetError);
  set("CCLC_ROOT_ADDR", "no-port");
  EXPECT_THROW(rendezvousFromEnvironment(), NetError);
  set("CCLC_ROOT_ADDR", "127.0.0.1:1234");
  EXPECT_NO_THROW(rendezvousFromEnvironment());
  // A job larger than MaxRanks is refused where the size is read.
  set("WORLD_SIZE", "65537");
  try {
    rendezvousFromEnvironment();
    ADD_FAILURE() << "accepted a job of 65537 ranks";
  } catch (const NetError &E) {
    EXPECT_NE(std::string(E.what()).find("WORLD_SIZE=65537 is not an integer in [1, 65536]"),
              std::string::npos)
        << E.what();
  }
}

TEST_F(LauncherEnv, TorchrunStyleJob) {
  constexpr int N = 3;
  set("MASTER_ADDR", "127.0.0.1");
  set("MASTER_PORT", std::to_string(freePort()));
  set("WORLD_SIZE", std::to_string(N));
  std::vector<int> Status = forkRanks(N, [](int Rank) {
    set("RANK", std::to_string(Rank));
    // Rank 0, and with it the root, comes last: the others wait for it.
    if (Rank == 0)
      std::this_thread::sleep_for(300ms);
    std::unique_ptr<Bootstrap> B = bootstrapFromRendezvous(rendezvousFromEnvironment(), 10s);
    std::vector<int32_t> Ranks(N, -1);
    Ranks[size_t(Rank)] = Rank;
    B->allgather(Ranks.data(), sizeof(int32_t));
    for (int R = 0; R < N; ++R)
      require(Ranks[size_t(R)] == R, "allgathered rank " + std::to_string(R));
    B->barrier();
    return 0;
  });
  for (int S : Status)
    EXPECT_TRUE(exitedWith(S, 0));
}
