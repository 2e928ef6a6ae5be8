//===- InterpreterKernel.cu - The generic plan-interpreter kernel -*- CUDA -*-===//
//
// Every (element type, operator) instantiation of cuda::interpret, compiled
// once here so that applications need not compile the interpreter, and a
// launch that picks one at run time.
//
//===----------------------------------------------------------------------===//

#include "runtime/cuda/InterpreterKernel.h"

#include "common/Dispatch.h"
#include "cuda/Interpreter.cuh"

namespace cclc::gpu {

namespace {

/// The instantiation of the kernel for one (type, operator), for dispatch.
struct KernelFor {
  template <class T, class Op> const void *operator()() const {
    return reinterpret_cast<const void *>(&cuda::interpret<T, Op>);
  }
};

} // namespace

cudaError_t launchInterpreter(kern::DType Type, kern::RedOp Op, const cuda::KernelArgs &Args,
                              const kern::ProgramView &Program, cudaStream_t Stream,
                              std::string &Why) {
  const void *Fn = kern::withTypeAndOperator<cuda::TypeSet>(Type, Op, KernelFor());
  void *Params[] = {const_cast<cuda::KernelArgs *>(&Args),
                    const_cast<kern::ProgramView *>(&Program)};
  return cuda::launchBlocks(
      Fn, Program.Shape.Grid.NChannels, cuda::InterpreterThreads, Params, Stream,
      [] { return "plan interpreter"; }, Why);
}

cudaError_t loadInterpreter() {
  for (uint8_t Type = 0; Type <= uint8_t(kern::DType::U64); ++Type)
    for (uint8_t Op = 0; Op <= uint8_t(kern::RedOp::Max); ++Op) {
      const void *Fn =
          kern::withTypeAndOperator<cuda::TypeSet>(kern::DType(Type), kern::RedOp(Op), KernelFor());
      cudaFuncAttributes Attributes;
      if (cudaError_t Err = cudaFuncGetAttributes(&Attributes, Fn); Err != cudaSuccess)
        return Err;
    }
  return cudaSuccess;
}

} // namespace cclc::gpu
