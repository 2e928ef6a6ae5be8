//===- Templates.cpp - The template library on the command line -----------===//

#include "Templates.h"

#include "dsl/Frontend.h"
#include "dsl/Sema.h"

#include <CLI/CLI.hpp>

namespace cclc::driver {

void addTemplateOptions(CLI::App &Cmd, TemplateOptions &Opts) {
  Cmd.add_option("--templates", Opts.Dir,
                 "Root of the kernel template library whose primitives algorithms may call")
      ->check(CLI::ExistingDirectory)
      ->capture_default_str();
  Cmd.add_option("--primitives", Opts.Primitives,
                 "A header of primitives of your own (CCLC_PRIMITIVE), read with the template "
                 "library; repeatable")
      ->check(CLI::ExistingFile);
}

codegen::KernelTarget primitiveTarget(const std::string &Format) {
  return Format == "cuda" ? codegen::KernelTarget::Cuda : codegen::KernelTarget::Host;
}

std::unique_ptr<dsl::Algorithm> checkWithTemplates(uint32_t FileId, codegen::CatalogCache &Catalogs,
                                                   codegen::KernelTarget Target,
                                                   dsl::OperationCatalog &Ops,
                                                   DiagnosticEngine &Diags) {
  std::unique_ptr<dsl::Algorithm> Algo = dsl::parse(FileId, Diags);
  if (!Algo)
    return nullptr;
  bool LibraryRead = true;
  if (Catalogs.hasExtraHeaders() || !dsl::unknownOperations(*Algo, Ops).empty()) {
    const codegen::TemplateCatalog *Catalog = Catalogs.get(Target);
    if (Catalog)
      Catalog->extend(Ops);
    LibraryRead = Catalog != nullptr;
  }
  // Without the library an unknown operation still gets sema's diagnostic.
  bool Checked = dsl::Sema(Diags, Ops).check(*Algo);
  return Checked && LibraryRead ? std::move(Algo) : nullptr;
}

} // namespace cclc::driver
