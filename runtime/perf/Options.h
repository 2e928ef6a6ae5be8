//===- Options.h - cclc-perf's command line ---------------------*- C++ -*-===//
//
// nccl-tests' options, so that scripts written for all_reduce_perf and its
// siblings run cclc-perf unchanged (the collective becomes the first
// argument), plus cclc's own: -np forks the ranks, --plan loads plans,
// --kernels registers generated host kernels from a shared library, and
// --gpu puts the buffers in device memory, where nccl-tests always has them
// (cclc-perf's default is host memory, which the runtime serves as well):
//
//   cclc-perf <allreduce|allgather|reducescatter|broadcast|reduce|alltoall|
//              sendrecv|all>
//             [-b minbytes] [-e maxbytes] [-i stepbytes | -f stepfactor]
//             [-n iters] [-w warmup] [-c check] [-d type|all] [-o op|all]
//             [-r root] [-np ranks] [--plan FILE]... [--kernels LIB:ALGO]...
//             [--gpu [-G launches]]
//   cclc-perf --gpu-probe
//
// -G is nccl-tests' CUDA graph mode, for --gpu.
//
// Sizes take nccl-tests' K, M and G suffixes (powers of 1024).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/api/cclc.h"
#include "runtime/perf/Calls.h"

#include "plan/Vocabulary.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace cclc::perf {

struct Options {
  std::vector<plan::CollectiveKind> Collectives;
  /// Measure nccl-tests' sendrecv too, after the collectives.
  bool SendRecv = false;
  uint64_t MinBytes = 32 << 20;
  uint64_t MaxBytes = 32 << 20;
  uint64_t StepBytes = 1 << 20;
  /// Sizes grow by this factor; 1 means they grow by StepBytes.
  uint64_t StepFactor = 1;
  int Iters = 20;
  int Warmup = 5;
  bool Check = true;
  std::vector<cclcDataType_t> Types = {cclcFloat32};
  std::vector<cclcRedOp_t> Ops = {cclcSum};
  int Root = 0;
  /// Ranks to fork; 0 joins the job of a launcher (mpirun, srun, torchrun).
  int NRanks = 0;
  std::vector<std::string> Plans;
  /// Generated host kernels to register, each "LIBRARY:ALGORITHM": a shared
  /// library built from cclc compile --emit=host and the algorithm whose
  /// table (cclc_host_kernels_ALGORITHM) it holds.
  std::vector<std::string> Kernels;
  /// Host buffers from cclcMemAlloc, which peers of the host map (-R 1).
  bool Registered = false;
  /// Buffers in device memory and calls on a CUDA stream, one per rank.
  bool Gpu = false;
  /// With Gpu: each timed loop is captured in a CUDA graph launched this
  /// many times; 0 makes the calls themselves.
  int GraphLaunches = 0;
  /// Only list the CUDA devices, or say why there are none (--gpu-probe).
  bool GpuProbe = false;
};

/// Parses Args (without the program name). Nullopt after printing the
/// problem to stderr (or the usage to stdout, for -h); Exit is then the exit
/// code.
std::optional<Options> parseOptions(const std::vector<std::string> &Args, int &Exit);

/// nccl-tests' names: "float", "half", "bfloat16", "int8", ...
const char *typeLabel(cclcDataType_t Type);
/// "sum", "prod", "max", "min".
const char *opLabel(cclcRedOp_t Op);
/// nccl-tests' names: "allreduce", "allgather", "reducescatter", ...,
/// "sendrecv".
const char *callLabel(const Call &C);

} // namespace cclc::perf
