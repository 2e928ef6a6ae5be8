//===- Format.cpp - Formats generated kernel code -------------------------===//

#include "compiler/codegen/Format.h"
#include "plan/Assert.h"

#include <clang/Format/Format.h>
#include <clang/Tooling/Core/Replacement.h>

namespace cclc::codegen {

std::string formatCode(std::string Code, KernelTarget Target) {
  clang::format::FormatStyle Style = clang::format::getLLVMStyle();
  Style.ColumnLimit = 100;
  Style.Standard = clang::format::FormatStyle::LS_Cpp20;
  // The file name tells clang-format which language it reads.
  llvm::StringRef Name = Target == KernelTarget::Cuda ? "kernel.cu" : "kernel.cpp";
  clang::tooling::Replacements Changes = clang::format::reformat(
      Style, Code, {clang::tooling::Range(0, static_cast<unsigned>(Code.size()))}, Name);
  llvm::Expected<std::string> Formatted = clang::tooling::applyAllReplacements(Code, Changes);
  CCLC_ASSERT(Formatted, "clang-format's replacements apply to the code they were made for");
  return std::move(*Formatted);
}

} // namespace cclc::codegen
