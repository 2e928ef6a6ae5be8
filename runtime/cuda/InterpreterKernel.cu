//===- InterpreterKernel.cu - The generic plan-interpreter kernel -*- CUDA -*-===//
//
// A launch of the instantiation of cuda::interpret for a call's element type
// and operator, picked at run time. The instantiations are compiled once,
// into the runtime, so that applications need not compile the interpreter;
// each element type's lie in a file of their own (InterpreterInstance.cu.in).
//
//===----------------------------------------------------------------------===//

#include "runtime/cuda/InterpreterKernel.h"

#include "common/Dispatch.h"
#include "cuda/Interpreter.cuh"

namespace cclc::gpu {

namespace {

/// The instantiation of the kernel for Type and Op.
const void *kernelFor(kern::DType Type, kern::RedOp Op) {
  return kern::withElementType<cuda::TypeSet>(
      Type, [&]<class T>() { return interpreterFor<T>(Op); });
}

} // namespace

cudaError_t launchInterpreter(kern::DType Type, kern::RedOp Op, const cuda::KernelArgs &Args,
                              const kern::ProgramView &Program, cudaStream_t Stream,
                              std::string &Why) {
  const void *Fn = kernelFor(Type, Op);
  void *Params[] = {const_cast<cuda::KernelArgs *>(&Args),
                    const_cast<kern::ProgramView *>(&Program)};
  return cuda::launchBlocks(
      Fn, Program.Shape.Grid.NChannels, cuda::InterpreterThreads, Params, Stream,
      [] { return "plan interpreter"; }, Why);
}

cudaError_t loadInterpreter() {
  for (uint8_t Type = 0; Type <= uint8_t(kern::DType::U64); ++Type)
    for (uint8_t Op = 0; Op <= uint8_t(kern::RedOp::Max); ++Op) {
      const void *Fn = kernelFor(kern::DType(Type), kern::RedOp(Op));
      cudaFuncAttributes Attributes;
      if (cudaError_t Err = cudaFuncGetAttributes(&Attributes, Fn); Err != cudaSuccess)
        return Err;
    }
  return cudaSuccess;
}

} // namespace cclc::gpu
