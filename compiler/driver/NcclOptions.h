//===- NcclOptions.h - NCCL knobs on the command line -----------*- C++ -*-===//
//
// `cclc topo` and `cclc compile --topo` take the NCCL environment knobs that
// change the topology search as options too; an option wins over the
// variable of the same knob (topo::readNcclEnv). The topology file itself
// comes from NCCL_TOPO_FILE where the command line names none.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "compiler/topology/NcclEnv.h"

namespace CLI {
class App;
}

namespace cclc::driver {

/// Adds --p2p-level, --no-p2p, --shm-disable, --net-gdr-level, --cross-nic,
/// --min-nchannels and --max-nchannels, stored as given into Options.
void addNcclOptions(CLI::App &Cmd, topo::NcclEnvOptions &Options);

/// The topology file: Given (the option OptionName), else NCCL_TOPO_FILE,
/// which a note on stderr then names, else empty.
std::string topologyFileOrEnvironment(const std::string &Given, const char *OptionName);

} // namespace cclc::driver
