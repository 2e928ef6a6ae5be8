//===- TemplateCatalog.h - The primitives of the template library -*- C++ -*-===//
//
// What the template library offers, learned by reading its headers with Clang
// libTooling: every function template marked CCLC_PRIMITIVE(Name, Effect)
// (see templates/common/Primitive.h), with its signature. The DSL's operation
// catalog is extended from it, so a primitive added to templates/ is callable
// from a .ccl file without changing the compiler, and the kernel emitters
// call only primitives found here.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "dsl/Builtins.h"
#include "plan/Diagnostics.h"

#include <iosfwd>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace cclc::codegen {

/// The kernel targets.
enum class KernelTarget { Host, Cuda };
std::string_view targetName(KernelTarget Target);

struct PrimitiveInfo {
  std::string Name;          ///< What a .ccl file calls it.
  std::string Effect;        ///< The language operation whose meaning it has.
  std::string QualifiedName; ///< The C++ function, e.g. cclc::host::recvReduceSend.
  std::vector<std::string> ParamTypes; ///< As written, e.g. "Slice<const T>".
  unsigned TemplateParams = 0;
  bool Device = false;       ///< Marked __device__ (CUDA).
  std::string File;          ///< Where it is declared, for diagnostics.
  unsigned Line = 0;
};

struct CatalogOptions {
  KernelTarget Target = KernelTarget::Host;
  /// The template library's root (holding common/, host/, cuda/).
  std::string TemplateDir;
  /// More headers to read, each adding primitives (a user's own library).
  std::vector<std::string> ExtraHeaders;
};

class TemplateCatalog {
public:
  /// Parses the target's primitive headers and the extra ones; reports
  /// parse errors and malformed primitives (unknown effect, a signature that
  /// does not fit the effect) and returns nothing then. The headers are
  /// registered in SM so that diagnostics quote the offending line.
  static std::optional<TemplateCatalog> load(const CatalogOptions &Opts, SourceManager &SM,
                                             DiagnosticEngine &Diags);

  const std::vector<PrimitiveInfo> &primitives() const { return Prims; }
  const PrimitiveInfo *lookup(std::string_view Name) const;
  /// The headers generated code includes, in order: the target's kernel
  /// skeleton, then each extra header by its absolute path.
  const std::vector<std::string> &includes() const { return Includes; }
  /// Registers every primitive not already known with the DSL's catalog,
  /// with the parameters and roles of its effect.
  void extend(dsl::OperationCatalog &Ops) const;

private:
  std::vector<PrimitiveInfo> Prims;
  std::vector<std::string> Includes;
};

/// The template library cclc was installed with (../include/cclc/templates
/// beside the executable), or the source tree's when cclc runs from a build.
std::string defaultTemplateDir();

/// The catalogs of one command, each read on first use: most compiles need
/// none, and reading one costs a clang parse of the library.
class CatalogCache {
public:
  CatalogCache(std::string TemplateDir, std::vector<std::string> ExtraHeaders, SourceManager &SM,
               DiagnosticEngine &Diags);

  /// The catalog of Target, read on the first call; null when reading it
  /// failed (the diagnostics were reported then, once).
  const TemplateCatalog *get(KernelTarget Target);
  /// True when the user named primitive headers of their own: they are read
  /// even when the algorithm calls none of their primitives, so that their
  /// mistakes are reported.
  bool hasExtraHeaders() const { return !ExtraHeaders.empty(); }
  /// When set, each load prints what it found and how long it took (--stats).
  void setStats(std::ostream *OS) { Stats = OS; }

private:
  std::string TemplateDir;
  std::vector<std::string> ExtraHeaders;
  SourceManager &SM;
  DiagnosticEngine &Diags;
  std::ostream *Stats = nullptr;
  /// One entry per target tried; empty when it failed.
  std::map<KernelTarget, std::optional<TemplateCatalog>> Loaded;
};

} // namespace cclc::codegen
