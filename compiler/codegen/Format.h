//===- Format.h - Formats generated kernel code -----------------*- C++ -*-===//
//
// The emitters write code without caring for layout; clang's formatting
// library then gives it the project's style (LLVM, 100 columns), so generated
// kernels read like hand-written ones and diff cleanly between compiles.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "compiler/codegen/TemplateCatalog.h"

#include <string>

namespace cclc::codegen {

/// Code laid out in the LLVM style with 100 columns, as a .cpp (host) or .cu
/// (CUDA) file.
std::string formatCode(std::string Code, KernelTarget Target);

} // namespace cclc::codegen
