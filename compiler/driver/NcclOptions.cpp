//===- NcclOptions.cpp - NCCL knobs on the command line -------------------===//

#include "NcclOptions.h"

#include <CLI/CLI.hpp>

namespace cclc::driver {

void addNcclOptions(CLI::App &Cmd, topo::NcclEnvOptions &Options) {
  const char *Group = "NCCL environment (an option wins over its variable)";
  Cmd.add_option("--p2p-level", Options.P2pLevel,
                 "NCCL_P2P_LEVEL: farthest path type for GPU P2P (LOC, NVL, NVB, C2C, PIX, PXB, "
                 "P2C, PXN, PHB, SYS, or 0-4 as NCCL numbers them); LOC disables P2P")
      ->group(Group);
  Cmd.add_flag("--no-p2p", Options.NoPeerAccess,
               "The GPUs have no CUDA peer access (NVML's P2P status, e.g. GeForce cards): "
               "traffic between them goes through the CPU")
      ->group(Group);
  Cmd.add_option("--shm-disable", Options.ShmDisable,
                 "NCCL_SHM_DISABLE: 1 forbids shared memory between GPUs that cannot use P2P")
      ->group(Group);
  Cmd.add_option("--net-gdr-level", Options.NetGdrLevel,
                 "NCCL_NET_GDR_LEVEL: farthest path type between GPU and NIC for GPU Direct RDMA")
      ->group(Group);
  Cmd.add_option("--cross-nic", Options.CrossNic,
                 "NCCL_CROSS_NIC: 0 rings leave a node by the NIC they entered by, 1 any NIC, "
                 "2 any NIC when needed")
      ->group(Group);
  Cmd.add_option("--min-nchannels", Options.MinChannels,
                 "NCCL_MIN_NCHANNELS: repeat the channels up to this count")
      ->group(Group);
  Cmd.add_option("--max-nchannels", Options.MaxChannels,
                 "NCCL_MAX_NCHANNELS: keep at most this many channels")
      ->group(Group);
}

} // namespace cclc::driver
