//===- Templates.h - The template library on the command line ---*- C++ -*-===//
//
// `cclc check` and `cclc compile` accept primitives from the template library
// and from the user's headers (--templates, --primitives). Reading them costs
// a clang parse, so it happens only when needed: when the algorithm calls an
// operation the language does not have, when the user names primitive
// headers, or when kernels are emitted.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "compiler/codegen/TemplateCatalog.h"
#include "dsl/AST.h"

#include <memory>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace cclc::driver {

struct TemplateOptions {
  std::string Dir = codegen::defaultTemplateDir();
  std::vector<std::string> Primitives;
};

void addTemplateOptions(CLI::App &Cmd, TemplateOptions &Opts);

/// The kernel target whose primitives a compile emitting Format may call:
/// the kernels' own, or the host's for schedules and plans, which the host
/// executors run.
codegen::KernelTarget primitiveTarget(const std::string &Format);

/// Parses and checks FileId. When the algorithm calls operations Ops does not
/// know, or the user named primitive headers, Ops is first extended from
/// Target's catalog. Null after a diagnostic.
std::unique_ptr<dsl::Algorithm> checkWithTemplates(uint32_t FileId, codegen::CatalogCache &Catalogs,
                                                   codegen::KernelTarget Target,
                                                   dsl::OperationCatalog &Ops,
                                                   DiagnosticEngine &Diags);

} // namespace cclc::driver
