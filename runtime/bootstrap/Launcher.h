//===- Launcher.h - Rendezvous from a launcher's environment -------*- C++ -*-===//
//
// Jobs started by a launcher need no id passed around: every rank reads its
// rank and the job size from the launcher's environment, rank 0 runs the
// root on a well-known port, and every rank derives the same UniqueId from
// the environment alone. Recognised, in this order:
//
//   torchrun-style  RANK, WORLD_SIZE, LOCAL_RANK (job id TORCHELASTIC_RUN_ID)
//   Open MPI        OMPI_COMM_WORLD_RANK, _SIZE, _LOCAL_RANK (job id
//                   OMPI_MCA_ess_base_jobid or PMIX_NAMESPACE)
//   Slurm           SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID (job id
//                   SLURM_JOB_ID.SLURM_STEP_ID)
//
// The root listens on CCLC_ROOT_ADDR=host:port ([v6addr]:port for IPv6), or
// else on MASTER_ADDR:MASTER_PORT; the host must be rank 0's.
//
// Trust model. The secret that every connection must present is
// CCLC_SECRET when set (any string; it is hashed). Otherwise it is derived
// from the launcher, the job id and the root's address: that keeps ranks of
// other jobs, or a stale job on the same port, from joining by accident, but
// it is not a defence against a user of the network who can guess the job id
// and the port. Where other users share the network, set CCLC_SECRET to a
// random value the launcher passes to the ranks only (for example from a
// file that only the job's user can read).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/bootstrap/Bootstrap.h"

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

namespace cclc::net {

/// What a launcher's environment says about this rank's job.
struct Rendezvous {
  std::string Launcher; ///< "torchrun", "Open MPI" or "Slurm".
  int Rank = 0;
  int Size = 1;
  int LocalRank = -1; ///< -1 when the launcher does not say.
  std::string RootHost;
  uint16_t RootPort = 0;
  uint64_t Secret = 0;
};

/// Reads the environment; throws NetError saying what to set when no
/// launcher is recognised or a variable is malformed.
Rendezvous rendezvousFromEnvironment();

/// Joins the job R describes; rank 0 also serves as its root while the
/// ranks register.
std::unique_ptr<Bootstrap> bootstrapFromRendezvous(const Rendezvous &R,
                                                   std::chrono::milliseconds Timeout);

} // namespace cclc::net
