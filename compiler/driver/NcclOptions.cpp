//===- NcclOptions.cpp - NCCL knobs on the command line -------------------===//

#include "NcclOptions.h"

#include <CLI/CLI.hpp>

#include <iostream>

namespace cclc::driver {

namespace {

/// An option that takes its knob's value as text, for readNcclEnv to parse
/// as it parses the variable.
struct ValueOption {
  const char *Name;
  std::string topo::NcclEnvOptions::*Field;
  const char *Help;
};

const ValueOption ValueOptions[] = {
    {"--p2p-level", &topo::NcclEnvOptions::P2pLevel,
     "NCCL_P2P_LEVEL: farthest path type for GPU P2P (LOC, NVL, NVB, C2C, PIX, PXB, P2C, PXN, "
     "PHB, SYS, or 0-4 as NCCL numbers them); LOC disables P2P"},
    {"--shm-disable", &topo::NcclEnvOptions::ShmDisable,
     "NCCL_SHM_DISABLE: 1 forbids shared memory between GPUs that cannot use P2P"},
    {"--net-gdr-level", &topo::NcclEnvOptions::NetGdrLevel,
     "NCCL_NET_GDR_LEVEL: farthest path type between GPU and NIC for GPU Direct RDMA"},
    {"--cross-nic", &topo::NcclEnvOptions::CrossNic,
     "NCCL_CROSS_NIC: 0 rings leave a node by the NIC they entered by, 1 by any NIC, 2 by any "
     "NIC when needed"},
    {"--min-nchannels", &topo::NcclEnvOptions::MinChannels,
     "NCCL_MIN_NCHANNELS: repeat the channels up to this count"},
    {"--max-nchannels", &topo::NcclEnvOptions::MaxChannels,
     "NCCL_MAX_NCHANNELS: keep at most this many channels"},
};

} // namespace

void addNcclOptions(CLI::App &Cmd, topo::NcclEnvOptions &Options) {
  const char *Group = "NCCL environment (an option wins over its variable)";
  for (const ValueOption &O : ValueOptions)
    Cmd.add_option(O.Name, Options.*O.Field, O.Help)->group(Group);
  Cmd.add_flag("--no-p2p", Options.NoPeerAccess,
               "The GPUs have no CUDA peer access (NVML's P2P status, e.g. GeForce cards): "
               "traffic between them goes through the CPU")
      ->group(Group);
}

std::string topologyFileOrEnvironment(const std::string &Given, const char *OptionName) {
  topo::Knob<std::string> File = topo::topologyFile(Given, OptionName);
  if (File.Source.Name == "environment")
    std::cerr << "cclc: note: the topology is " << File.Source.Text << "\n";
  return File.Value;
}

} // namespace cclc::driver
