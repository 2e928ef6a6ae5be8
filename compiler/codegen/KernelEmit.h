//===- KernelEmit.h - Specialized host and CUDA kernels ---------*- C++ -*-===//
//
// `cclc compile --emit=host|cuda -o DIR`: a schedule becomes C++ (host) or
// CUDA source that runs it on any rank, with everything the schedule fixes
// folded in: rank count, channels, chunk grid, root, remap, element type and
// operator. Peers and chunk indices are expressions of the rank wherever a
// closed form exists (see KernelStructure.h and IndexFit.h), and every call
// names a primitive of the template library's catalog whose effect is the
// step's.
//
// For each (dtype, op) asked for there is one entry point, declared in the
// header in namespace cclc::gen:
//
//   host  void <algo>_<dtype>_<op>(const cclc::host::KernelArgs &, int Channel)
//   cuda  __global__ void <algo>_<dtype>_<op>_kernel(cclc::cuda::KernelArgs),
//         block b running channel b, and its launcher
//         cudaError_t <algo>_<dtype>_<op>(const cclc::cuda::KernelArgs &,
//                                         cudaStream_t, std::string &Why)
//
// with its KernelInfo <algo>_<dtype>_<op>_info, and <algo>_kernels listing
// them all for the runtime to register.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "compiler/codegen/TemplateCatalog.h"
#include "plan/PlanJson.h"
#include "plan/Schedule.h"
#include "plan/Diagnostics.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cclc::codegen {

struct KernelEmitOptions {
  KernelTarget Target = KernelTarget::Host;
  /// The generated files' names without extension: the .ccl file's name up
  /// to its first dot (CMake's NAME_WE), which build rules rely on.
  std::string Stem;
  std::vector<plan::DType> Types = {plan::DType::F32};
  std::vector<plan::RedOp> Ops = {plan::RedOp::Sum};
  /// Where the schedule came from and the message sizes it is meant for.
  plan::PlanInfo Info;
  /// CUDA: threads of each block (a channel). The primitives stripe every
  /// copy and reduce over them; 512 keeps one channel's block near a GPU's
  /// copy bandwidth while many channels' blocks still fit on the device at
  /// once. Fewer let more ranks share a GPU; a multiple of 32 (a warp).
  int BlockThreads = 512;
};

struct GeneratedFile {
  std::string Name; ///< File name, e.g. "ring-allreduce.cpp".
  std::string Text;
};

/// The header and the source of S's kernels, formatted. Nullopt after a
/// diagnostic: a step no primitive runs, or a call whose primitive is
/// missing from Catalog or has another effect.
std::optional<std::vector<GeneratedFile>> emitKernels(const sched::Schedule &S,
                                                      const TemplateCatalog &Catalog,
                                                      const KernelEmitOptions &Opts,
                                                      DiagnosticEngine &Diags);

/// The stem of generated files for the algorithm in File.
std::string kernelStem(std::string_view File);

} // namespace cclc::codegen
