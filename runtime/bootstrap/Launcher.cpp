//===- Launcher.cpp - Rendezvous from a launcher's environment ------------===//

#include "runtime/bootstrap/Launcher.h"

#include <charconv>
#include <cstdlib>

namespace cclc::net {

namespace {

const char *env(const char *Name) {
  const char *Value = std::getenv(Name);
  return Value && *Value ? Value : nullptr;
}

int parseInt(const char *Name, const char *Value, int Min, int Max) {
  int Result = 0;
  const char *End = Value + std::char_traits<char>::length(Value);
  auto [Ptr, Err] = std::from_chars(Value, End, Result);
  if (Err != std::errc() || Ptr != End || Result < Min || Result > Max)
    throw NetError(std::string(Name) + "=" + Value + " is not an integer in [" +
                   std::to_string(Min) + ", " + std::to_string(Max) + "]");
  return Result;
}

/// FNV-1a, then a finalizer that spreads every input bit over the result.
uint64_t hash64(const std::string &Text) {
  uint64_t H = 0xcbf29ce484222325ull;
  for (unsigned char C : Text)
    H = (H ^ C) * 0x100000001b3ull;
  H ^= H >> 33;
  H *= 0xff51afd7ed558ccdull;
  H ^= H >> 33;
  H *= 0xc4ceb9fe1a85ec53ull;
  return H ^ (H >> 33);
}

/// The launcher's variables: rank, size, local rank, and the job id parts.
struct LauncherVars {
  const char *Name, *Rank, *Size, *LocalRank;
  std::initializer_list<const char *> JobId;
};
const LauncherVars Launchers[] = {
    {"torchrun", "RANK", "WORLD_SIZE", "LOCAL_RANK", {"TORCHELASTIC_RUN_ID"}},
    {"Open MPI",
     "OMPI_COMM_WORLD_RANK",
     "OMPI_COMM_WORLD_SIZE",
     "OMPI_COMM_WORLD_LOCAL_RANK",
     {"OMPI_MCA_ess_base_jobid", "PMIX_NAMESPACE"}},
    {"Slurm", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", {"SLURM_JOB_ID", "SLURM_STEP_ID"}},
};

} // namespace

Rendezvous rendezvousFromEnvironment() {
  const LauncherVars *L = nullptr;
  for (const LauncherVars &Candidate : Launchers)
    if (env(Candidate.Rank) && env(Candidate.Size)) {
      L = &Candidate;
      break;
    }
  if (!L)
    throw NetError("no launcher environment found: start the job with mpirun or srun, or set "
                   "RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT");
  Rendezvous R;
  R.Launcher = L->Name;
  R.Size = parseInt(L->Size, env(L->Size), 1, MaxRanks);
  R.Rank = parseInt(L->Rank, env(L->Rank), 0, R.Size - 1);
  if (const char *Local = env(L->LocalRank))
    R.LocalRank = parseInt(L->LocalRank, Local, 0, R.Size - 1);

  if (const char *Addr = env("CCLC_ROOT_ADDR")) {
    std::string Text = Addr;
    size_t Colon = Text.rfind(':');
    if (Colon == std::string::npos || Colon == 0)
      throw NetError(std::string("CCLC_ROOT_ADDR=") + Addr + " is not host:port");
    R.RootHost = Text.substr(0, Colon);
    if (R.RootHost.size() > 2 && R.RootHost.front() == '[' && R.RootHost.back() == ']')
      R.RootHost = R.RootHost.substr(1, R.RootHost.size() - 2);
    R.RootPort = uint16_t(parseInt("the port of CCLC_ROOT_ADDR", Addr + Colon + 1, 1, 65535));
  } else if (env("MASTER_ADDR") && env("MASTER_PORT")) {
    R.RootHost = env("MASTER_ADDR");
    R.RootPort = uint16_t(parseInt("MASTER_PORT", env("MASTER_PORT"), 1, 65535));
  } else {
    throw NetError("the job's root address is unknown: set CCLC_ROOT_ADDR=host:port (a free "
                   "port on the host of rank 0), or MASTER_ADDR and MASTER_PORT");
  }

  if (const char *Secret = env("CCLC_SECRET")) {
    R.Secret = hash64(std::string("secret:") + Secret);
  } else {
    std::string Job = std::string("job:") + L->Name;
    for (const char *Part : L->JobId)
      Job += std::string(":") + (env(Part) ? env(Part) : "");
    R.Secret = hash64(Job + ":" + R.RootHost + ":" + std::to_string(R.RootPort));
  }
  return R;
}

std::unique_ptr<Bootstrap> bootstrapFromRendezvous(const Rendezvous &R,
                                                   std::chrono::milliseconds Timeout) {
  SocketAddress RootAddr = SocketAddress::resolve(R.RootHost, R.RootPort);
  UniqueId Id = makeUniqueId(RootAddr, R.Secret);
  if (R.Rank != 0)
    return Bootstrap::init(Id, R.Rank, R.Size, Timeout);
  // The root has served every rank once this rank's init returns. It
  // listens where the other ranks reach it: on loopback only, where
  // MASTER_ADDR names it (a job of this host), else on every interface, as
  // the address other hosts resolve MASTER_ADDR to may be any of this one's.
  SocketAddress Bind =
      RootAddr.isLoopback() ? RootAddr : SocketAddress::any(RootAddr.Sa.sa_family, R.RootPort);
  Root Server(Bind, RootAddr, R.Secret, Timeout);
  return Bootstrap::init(Id, R.Rank, R.Size, Timeout);
}

} // namespace cclc::net
