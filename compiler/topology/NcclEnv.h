//===- NcclEnv.h - The NCCL environment knobs the search honours -*- C++ -*-===//
//
// NCCL's search result depends on more than the topology file: whether the
// GPUs may reach each other peer to peer (NCCL_P2P_DISABLE, NCCL_P2P_LEVEL,
// and NVML's P2P status, which a topology dump does not record), whether
// shared memory may carry what P2P cannot (NCCL_SHM_DISABLE), how far a NIC
// may be for GPU Direct RDMA (NCCL_NET_GDR_LEVEL), whether a ring may leave a
// node by another NIC than it entered by (NCCL_CROSS_NIC) and how many
// channels the communicator keeps (NCCL_MIN_NCHANNELS, NCCL_MAX_NCHANNELS).
//
// readNcclEnv takes each knob from the command line when given there, else
// from the environment as NCCL reads it, else NCCL's default. NCCL ignores a
// value it cannot parse; cclc refuses it with an error that names the
// variable, so that a typo does not silently search another machine.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "compiler/topology/TopoGraph.h"
#include "plan/Diagnostics.h"

#include <cstdlib>
#include <functional>
#include <iosfwd>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>

namespace cclc::topo {

class System;

/// Where a knob's value came from.
struct KnobSource {
  /// "default", "environment" or the command-line option that set it.
  std::string Name = "default";
  /// The text the value was read from (shown for the environment, so that
  /// "NCCL_P2P_LEVEL=3" reads as PHB and says why).
  std::string Text;
};

template <typename T> struct Knob {
  T Value;
  KnobSource Source;
};

struct NcclEnv {
  /// NCCL_P2P_LEVEL (NCCL_P2P_DISABLE=1 means LOC): the farthest path type
  /// GPUs use P2P over; nullopt keeps NCCL's default (p2pLevel in Paths.h).
  Knob<std::optional<PathType>> P2pLevel{std::nullopt, {}};
  /// Whether CUDA peer access works between the GPUs, as NVML's P2P status
  /// reports it (GeForce cards say no). NCCL asks NVML at run time; the
  /// topology dump does not record it, so --no-p2p says it.
  Knob<bool> PeerAccess{true, {}};
  /// NCCL_IGNORE_DISABLED_P2P: 0 refuses NVLink-connected GPUs without peer
  /// access, 1 routes them through the CPU, 2 does not look at NVML at all.
  Knob<int> IgnoreDisabledP2p{0, {}};
  /// NCCL_SHM_DISABLE=1: GPUs that cannot use P2P cannot use shared memory
  /// either, so NCCL splits them into separate network domains.
  Knob<bool> ShmDisable{false, {}};
  /// NCCL_NET_GDR_LEVEL: the farthest path type between GPU and NIC that
  /// GPU Direct RDMA is used over; nullopt keeps NCCL's PXB.
  Knob<std::optional<PathType>> NetGdrLevel{std::nullopt, {}};
  /// NCCL_CROSS_NIC: 0 never, 1 always, 2 (default) when needed.
  Knob<int> CrossNic{2, {}};
  /// NCCL_MIN_NCHANNELS (or NCCL_MIN_NRINGS) and NCCL_MAX_NCHANNELS (or
  /// NCCL_MAX_NRINGS), clamped to 0..32 and 1..32 as NCCL does.
  Knob<int> MinChannels{0, {}};
  Knob<int> MaxChannels{32, {}};
};

/// The knobs as given on a command line; empty strings are not given.
struct NcclEnvOptions {
  std::string P2pLevel;
  bool NoPeerAccess = false;
  std::string ShmDisable;
  std::string NetGdrLevel;
  std::string CrossNic;
  std::string MinChannels;
  std::string MaxChannels;
};

/// Looks an environment variable up; nullptr when it is not set.
using EnvLookup = std::function<const char *(const char *)>;

/// The effective knobs: Options first, then the variables GetEnv finds, then
/// NCCL's defaults. Errors (an unparsable value, named with its variable or
/// option) are reported through Diags; warnings where NCCL clamps a value.
std::optional<NcclEnv> readNcclEnv(const NcclEnvOptions &Options, DiagnosticEngine &Diags,
                                   const EnvLookup &GetEnv = std::getenv);

/// The topology file, as NCCL finds it: Given (the command line's, the
/// option OptionName) when not empty, else NCCL_TOPO_FILE, else empty.
/// Source says which, for the note that names a file taken from the
/// environment.
Knob<std::string> topologyFile(const std::string &Given, const char *OptionName,
                               const EnvLookup &GetEnv = std::getenv);

/// NCCL's ncclGetLevel: a path type name up to SYS ("PHB"), or a number of
/// the old numbering (0 LOC, 1 PIX, 2 PXB, 3 PHB, 4 and above SYS).
std::optional<PathType> parseLevel(const std::string &Text);

/// One line per knob, "NCCL_P2P_LEVEL = PXB (default)", as the head of
/// `cclc topo`'s text output. Defaults that depend on the machine (the P2P
/// level) are shown as Sys resolves them.
void printNcclEnv(const System &Sys, std::ostream &OS);

/// The same as an object of name -> {value, source}.
nlohmann::json ncclEnvToJson(const System &Sys);

} // namespace cclc::topo
