//===- InterpreterKernel.h - The generic plan-interpreter kernel -*- CUDA -*-===//
//
// The GPU's plan interpreter: one __global__ kernel per (element type,
// operator), compiled once into the runtime, that runs any schedule encoded
// as data (common/Program.h). It calls the primitives generated CUDA kernels
// call, through the loop the host interpreter runs, so every executor gives
// the same bits. A generated kernel is faster (its peers and slices are
// folded into code); the interpreter serves plans loaded at run time, for
// which nothing was generated.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "common/KernelTypes.h"
#include "common/Program.h"
#include "cuda/Kernel.cuh"

#include <cuda_runtime.h>

#include <string>

namespace cclc::gpu {

/// Launches the interpreter for Type and Op on Stream: one block per channel
/// of Program, whose arrays are device addresses, once every block is known
/// to fit on the device at the same time. Returns the CUDA error, with Why
/// saying what went wrong and what to do.
cudaError_t launchInterpreter(kern::DType Type, kern::RedOp Op, const cuda::KernelArgs &Args,
                              const kern::ProgramView &Program, cudaStream_t Stream,
                              std::string &Why);

/// Loads every instantiation of the interpreter onto the current device.
/// CUDA loads a kernel lazily, at its first launch, and loading may wait
/// until every kernel of the process has ended; a rank that first launched
/// the interpreter for a new type while kernels of its peers wait for it
/// (ranks that are threads of one process) could then never go on. So a
/// communicator loads them all at its first GPU call, before any of its
/// kernels can wait.
cudaError_t loadInterpreter();

/// The interpreter's kernel for elements of T reduced with Op, as a
/// function pointer for cudaLaunchKernel. Instantiated for every element
/// type, each in a translation unit of its own (InterpreterInstance.cu.in).
template <class T> const void *interpreterFor(kern::RedOp Op);

} // namespace cclc::gpu
