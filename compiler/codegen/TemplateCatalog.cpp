//===- TemplateCatalog.cpp - Reads the template library with libTooling -===//
//
// One synthetic translation unit includes the target's primitive header and
// the user's; clang parses it with function bodies skipped, since only
// declarations matter and bodies are most of the parsing time. A visitor then
// collects the functions annotated "cclc.primitive" and checks each signature
// against the canonical parameters of its effect. Clang's own diagnostics and
// the catalog's are reported through cclc's DiagnosticEngine, located in the
// headers.
//
//===----------------------------------------------------------------------===//

#include "compiler/codegen/TemplateCatalog.h"
#include "plan/Assert.h"
#include "dsl/Lexer.h"

#include <clang/AST/ASTConsumer.h>
#include <clang/AST/ASTContext.h>
#include <clang/AST/Attr.h>
#include <clang/Basic/Diagnostic.h>
#include <clang/Basic/FileManager.h>
#include <clang/Frontend/CompilerInstance.h>
#include <clang/Frontend/FrontendAction.h>
#include <clang/Lex/Lexer.h>
#include <clang/Tooling/Tooling.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/VirtualFileSystem.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <ostream>
#include <unordered_map>

namespace cclc::codegen {

std::string_view targetName(KernelTarget Target) {
  switch (Target) {
  case KernelTarget::Host: return "host";
  case KernelTarget::Cuda: return "cuda";
  }
  CCLC_UNREACHABLE("unknown kernel target");
}

namespace {

/// What a primitive's parameter is, judged from its type.
enum class ParamKind {
  Outbox,      ///< Outbox &: the connection to the peer sent to.
  Inbox,       ///< Inbox &: the connection from the peer received from.
  Source,      ///< Slice<const T>: a slice that is read.
  Destination, ///< Slice<T>: a slice that is written or combined into.
  Other,
};

std::string_view kindSpelling(ParamKind Kind) {
  switch (Kind) {
  case ParamKind::Outbox: return "Outbox &";
  case ParamKind::Inbox: return "Inbox &";
  case ParamKind::Source: return "Slice<const T>";
  case ParamKind::Destination: return "Slice<T>";
  case ParamKind::Other: break;
  }
  CCLC_UNREACHABLE("no spelling for an unrecognized parameter");
}

/// The parameters every primitive of an effect takes, in order: how the
/// template library declares the language's own operations.
struct EffectShape {
  std::string_view Effect;
  std::vector<ParamKind> Params;
};

const std::vector<EffectShape> &effectShapes() {
  using K = ParamKind;
  static const std::vector<EffectShape> Shapes = {
      {"send", {K::Outbox, K::Source}},
      {"recv", {K::Inbox, K::Destination}},
      {"recv_reduce", {K::Inbox, K::Destination}},
      {"copy", {K::Source, K::Destination}},
      {"reduce", {K::Source, K::Destination}},
      {"exchange", {K::Outbox, K::Inbox, K::Source, K::Destination}},
      {"exchange_reduce", {K::Outbox, K::Inbox, K::Source, K::Destination}},
      {"recv_reduce_send", {K::Inbox, K::Outbox, K::Destination}},
      {"recv_copy_send", {K::Inbox, K::Outbox, K::Destination}},
      {"recv_reduce_copy", {K::Inbox, K::Source, K::Destination}},
  };
  return Shapes;
}

const EffectShape *lookupShape(std::string_view Effect) {
  for (const EffectShape &S : effectShapes())
    if (S.Effect == Effect)
      return &S;
  return nullptr;
}

/// "(Slice<const T>, Slice<T>)": what an effect's primitives take.
std::string shapeSignature(const EffectShape &Shape) {
  std::string Text = "(";
  for (size_t I = 0; I < Shape.Params.size(); ++I)
    Text += std::string(I ? ", " : "") + std::string(kindSpelling(Shape.Params[I]));
  return Text + ")";
}

ParamKind classify(clang::QualType Ty) {
  if (const auto *Ref = Ty->getAs<clang::LValueReferenceType>()) {
    clang::QualType Pointee = Ref->getPointeeType();
    const clang::RecordDecl *Record = Pointee->getAsRecordDecl();
    if (!Record || Pointee.isConstQualified())
      return ParamKind::Other;
    if (Record->getName() == "Outbox")
      return ParamKind::Outbox;
    if (Record->getName() == "Inbox")
      return ParamKind::Inbox;
    return ParamKind::Other;
  }
  // Slice<X> names a specialization, dependent (X = const T) or not.
  const auto *Spec = Ty->getAs<clang::TemplateSpecializationType>();
  if (!Spec || Ty.isConstQualified())
    return ParamKind::Other;
  const clang::TemplateDecl *Template = Spec->getTemplateName().getAsTemplateDecl();
  if (!Template || Template->getName() != "Slice" || Spec->getNumArgs() != 1 ||
      Spec->getArg(0).getKind() != clang::TemplateArgument::Type)
    return ParamKind::Other;
  return Spec->getArg(0).getAsType().isConstQualified() ? ParamKind::Source
                                                        : ParamKind::Destination;
}

/// Turns clang's locations into cclc's, registering each header in the
/// SourceManager once so that diagnostics can quote it.
class LocationMap {
public:
  /// MainFile, the synthetic file of #includes, is quoted from Code under
  /// a name that says what it is.
  LocationMap(SourceManager &SM, const std::string &MainFile, std::string Code) : SM(SM) {
    Ids[MainFile] = SM.addBuffer("<primitive headers>", std::move(Code));
  }

  SourceLoc map(clang::SourceLocation Loc, const clang::SourceManager &CSM) {
    if (Loc.isInvalid())
      return SourceLoc{};
    clang::PresumedLoc P = CSM.getPresumedLoc(CSM.getFileLoc(Loc));
    if (P.isInvalid())
      return SourceLoc{};
    return SourceLoc{fileId(P.getFilename()), P.getLine(), P.getColumn()};
  }

private:
  uint32_t fileId(const std::string &Path) {
    auto [It, Inserted] = Ids.try_emplace(Path, 0);
    if (Inserted) {
      std::string Error;
      std::optional<uint32_t> Id = SM.loadFile(Path, Error);
      // A header that went away since clang read it: name it, quote nothing.
      It->second = Id ? *Id : SM.addBuffer(Path, "");
    }
    return It->second;
  }

  SourceManager &SM;
  std::unordered_map<std::string, uint32_t> Ids;
};

/// Reports clang's errors and their notes through cclc's engine. Warnings
/// are not the user's concern here (the parse runs with -w).
class ForwardingConsumer : public clang::DiagnosticConsumer {
public:
  ForwardingConsumer(LocationMap &Locations, DiagnosticEngine &Diags)
      : Locations(Locations), Diags(Diags) {}

  void HandleDiagnostic(clang::DiagnosticsEngine::Level Level,
                        const clang::Diagnostic &Info) override {
    DiagnosticConsumer::HandleDiagnostic(Level, Info);
    llvm::SmallString<256> Text;
    Info.FormatDiagnostic(Text);
    SourceLoc Loc = Info.hasSourceManager()
                        ? Locations.map(Info.getLocation(), Info.getSourceManager())
                        : SourceLoc{};
    switch (Level) {
    case clang::DiagnosticsEngine::Error:
    case clang::DiagnosticsEngine::Fatal:
      Diags.error(Loc, std::string(Text));
      break;
    case clang::DiagnosticsEngine::Note:
      Diags.note(Loc, std::string(Text));
      break;
    case clang::DiagnosticsEngine::Ignored:
    case clang::DiagnosticsEngine::Remark:
    case clang::DiagnosticsEngine::Warning:
      break;
    }
  }

private:
  LocationMap &Locations;
  DiagnosticEngine &Diags;
};

/// Collects and checks the annotated functions of a parsed library.
class PrimitiveCollector {
public:
  PrimitiveCollector(KernelTarget Target, clang::ASTContext &Ctx, LocationMap &Locations,
                     DiagnosticEngine &Diags, std::vector<PrimitiveInfo> &Out)
      : Target(Target), Ctx(Ctx), CSM(Ctx.getSourceManager()), Locations(Locations), Diags(Diags),
        Out(Out) {}

  /// Primitives are functions at namespace scope: the walk enters
  /// namespaces and linkage blocks, and leaves the system headers alone.
  void walk(const clang::DeclContext &Context) {
    for (const clang::Decl *D : Context.decls()) {
      if (CSM.isInSystemHeader(D->getLocation()))
        continue;
      if (llvm::isa<clang::NamespaceDecl, clang::LinkageSpecDecl>(D))
        walk(*llvm::cast<clang::DeclContext>(D));
      else if (const auto *Template = llvm::dyn_cast<clang::FunctionTemplateDecl>(D))
        visit(*Template->getTemplatedDecl());
      else if (const auto *Fn = llvm::dyn_cast<clang::FunctionDecl>(D))
        visit(*Fn);
    }
  }

private:
  SourceLoc locOf(clang::SourceLocation Loc) { return Locations.map(Loc, CSM); }

  /// The annotation's I-th argument when it is a string literal.
  static const clang::StringLiteral *stringArg(const clang::AnnotateAttr &A, unsigned I) {
    if (I >= A.args_size())
      return nullptr;
    const clang::Expr *E = A.args_begin()[I];
    if (const auto *Constant = llvm::dyn_cast<clang::ConstantExpr>(E))
      E = Constant->getSubExpr();
    return llvm::dyn_cast<clang::StringLiteral>(E->IgnoreParenImpCasts());
  }

  /// The parameter's type as the header spells it.
  std::string spelledType(const clang::ParmVarDecl &Param) const {
    const clang::TypeSourceInfo *Info = Param.getTypeSourceInfo();
    if (!Info)
      return Param.getType().getAsString();
    clang::CharSourceRange Range =
        clang::CharSourceRange::getTokenRange(Info->getTypeLoc().getSourceRange());
    llvm::StringRef Text = clang::Lexer::getSourceText(Range, CSM, Ctx.getLangOpts());
    return Text.empty() ? Param.getType().getAsString() : Text.str();
  }

  void visit(const clang::FunctionDecl &Fn) {
    for (const clang::AnnotateAttr *A : Fn.specific_attrs<clang::AnnotateAttr>())
      if (A->getAnnotation() == "cclc.primitive" && !A->isInherited())
        collect(Fn, *A);
  }
  void collect(const clang::FunctionDecl &Fn, const clang::AnnotateAttr &A);
  bool checkSignature(const clang::FunctionDecl &Fn, const PrimitiveInfo &P);

  KernelTarget Target;
  clang::ASTContext &Ctx;
  const clang::SourceManager &CSM;
  LocationMap &Locations;
  DiagnosticEngine &Diags;
  std::vector<PrimitiveInfo> &Out;
  /// Where each collected primitive is named, for "declared twice" notes.
  std::vector<SourceLoc> Declared;
};

void PrimitiveCollector::collect(const clang::FunctionDecl &Fn, const clang::AnnotateAttr &A) {
  SourceLoc Where = locOf(Fn.getLocation());
  const clang::StringLiteral *Name = stringArg(A, 0);
  const clang::StringLiteral *Effect = stringArg(A, 1);
  if (A.args_size() != 2 || !Name || !Effect) {
    Diags.error(locOf(A.getLocation()),
                "a primitive's annotation takes two string literals, its name and its effect: "
                "CCLC_PRIMITIVE(\"name\", \"effect\")");
    return;
  }
  PrimitiveInfo P;
  P.Name = Name->getString().str();
  P.Effect = Effect->getString().str();
  P.QualifiedName = Fn.getQualifiedNameAsString();
  for (const clang::ParmVarDecl *Param : Fn.parameters())
    P.ParamTypes.push_back(spelledType(*Param));
  if (const clang::FunctionTemplateDecl *Template = Fn.getDescribedFunctionTemplate())
    P.TemplateParams = Template->getTemplateParameters()->size();
  P.Device = Fn.hasAttr<clang::CUDADeviceAttr>();
  clang::PresumedLoc Presumed = CSM.getPresumedLoc(CSM.getFileLoc(Fn.getLocation()));
  P.File = Presumed.getFilename();
  P.Line = Presumed.getLine();

  if (!dsl::isIdentifier(P.Name)) {
    Diags.error(locOf(Name->getBeginLoc()),
                "primitive name '" + P.Name +
                    "' cannot be called from a .ccl file; a name is letters, digits and '_', "
                    "not starting with a digit, and not a keyword");
    return;
  }
  const EffectShape *Shape = lookupShape(P.Effect);
  if (!Shape) {
    SourceLoc EffectLoc = locOf(Effect->getBeginLoc());
    Diags.error(EffectLoc, "primitive '" + P.Name + "' has unknown effect '" + P.Effect + "'");
    std::vector<std::string_view> Effects;
    for (const EffectShape &S : effectShapes())
      Effects.push_back(S.Effect);
    if (std::string Guess = dsl::closestName(P.Effect, Effects); !Guess.empty())
      Diags.note(EffectLoc, "did you mean '" + Guess + "'?");
    else
      Diags.note(EffectLoc, "an effect is one of the language's operations: send, recv, "
                            "recv_reduce, copy, reduce, exchange, exchange_reduce, "
                            "recv_reduce_send, recv_copy_send");
    return;
  }
  if (lookupShape(P.Name) && P.Name != P.Effect) {
    Diags.error(Where, "primitive '" + P.Name + "' is named after the language's '" + P.Name +
                           "' but has effect '" + P.Effect + "'");
    return;
  }
  if (!checkSignature(Fn, P))
    return;
  if (Target == KernelTarget::Cuda && !P.Device) {
    Diags.error(Where,
                "primitive '" + P.Name + "' is not __device__, so CUDA kernels cannot call it");
    return;
  }
  auto Same = std::find_if(Out.begin(), Out.end(),
                           [&](const PrimitiveInfo &Q) { return Q.Name == P.Name; });
  if (Same != Out.end()) {
    Diags.error(Where, "primitive '" + P.Name + "' is declared twice");
    Diags.note(Declared[Same - Out.begin()], "the first declaration is " + Same->QualifiedName);
    return;
  }
  Out.push_back(std::move(P));
  Declared.push_back(Where);
}

bool PrimitiveCollector::checkSignature(const clang::FunctionDecl &Fn, const PrimitiveInfo &P) {
  const EffectShape &Shape = *lookupShape(P.Effect);
  std::string Expected = "primitives with effect '" + P.Effect + "' take " + shapeSignature(Shape);
  if (Fn.getNumParams() != Shape.Params.size()) {
    Diags.error(locOf(Fn.getLocation()),
                "primitive '" + P.Name + "' takes " + std::to_string(Fn.getNumParams()) +
                    " parameter" + (Fn.getNumParams() == 1 ? "" : "s") + ", but " + Expected);
    return false;
  }
  for (unsigned I = 0; I < Fn.getNumParams(); ++I) {
    const clang::ParmVarDecl *Param = Fn.getParamDecl(I);
    if (classify(Param->getType()) == Shape.Params[I])
      continue;
    Diags.error(locOf(Param->getBeginLoc()), "parameter " + std::to_string(I + 1) +
                                                 " of primitive '" + P.Name + "' is '" +
                                                 P.ParamTypes[I] + "', not '" +
                                                 std::string(kindSpelling(Shape.Params[I])) + "'");
    Diags.note(locOf(Fn.getLocation()), Expected);
    return false;
  }
  return true;
}

class CatalogConsumer : public clang::ASTConsumer {
public:
  CatalogConsumer(KernelTarget Target, LocationMap &Locations, DiagnosticEngine &Diags,
                  std::vector<PrimitiveInfo> &Out)
      : Target(Target), Locations(Locations), Diags(Diags), Out(Out) {}

  void HandleTranslationUnit(clang::ASTContext &Ctx) override {
    // A library that does not parse has been reported; its half-built AST
    // would only add confusing complaints.
    if (Ctx.getDiagnostics().hasErrorOccurred())
      return;
    PrimitiveCollector(Target, Ctx, Locations, Diags, Out).walk(*Ctx.getTranslationUnitDecl());
  }

private:
  KernelTarget Target;
  LocationMap &Locations;
  DiagnosticEngine &Diags;
  std::vector<PrimitiveInfo> &Out;
};

class CatalogAction : public clang::ASTFrontendAction {
public:
  CatalogAction(KernelTarget Target, LocationMap &Locations, DiagnosticEngine &Diags,
                std::vector<PrimitiveInfo> &Out)
      : Target(Target), Locations(Locations), Diags(Diags), Out(Out) {}

protected:
  bool BeginInvocation(clang::CompilerInstance &CI) override {
    CI.getFrontendOpts().SkipFunctionBodies = true;
    return true;
  }
  std::unique_ptr<clang::ASTConsumer> CreateASTConsumer(clang::CompilerInstance &,
                                                        llvm::StringRef) override {
    return std::make_unique<CatalogConsumer>(Target, Locations, Diags, Out);
  }

private:
  KernelTarget Target;
  LocationMap &Locations;
  DiagnosticEngine &Diags;
  std::vector<PrimitiveInfo> &Out;
};

/// The clang command line that parses the synthetic file MainFile.
std::vector<std::string> parseArguments(KernelTarget Target, const std::string &TemplateDir,
                                        const std::string &MainFile) {
  std::vector<std::string> Args = {
      "cclc-catalog", "-fsyntax-only", "-std=c++20", "-DCCLC_CATALOG", "-w",
      "-fno-caret-diagnostics", "-resource-dir", CCLC_CLANG_RESOURCE_DIR, "-I", TemplateDir};
  if (Target == KernelTarget::Cuda) {
    // Without the toolkit's headers (-nocudainc) nothing defines the CUDA
    // keywords; they map to the attributes clang's CUDA mode knows.
    Args.insert(Args.end(), {"-x", "cuda", "--cuda-host-only", "-nocudainc", "-nocudalib",
                             "-D__host__=__attribute__((host))",
                             "-D__device__=__attribute__((device))",
                             "-D__global__=__attribute__((global))",
                             "-D__shared__=__attribute__((shared))",
                             "-D__constant__=__attribute__((constant))",
                             "-D__forceinline__=__inline__ __attribute__((always_inline))"});
  } else {
    Args.insert(Args.end(), {"-x", "c++"});
  }
  Args.push_back(MainFile);
  return Args;
}

} // namespace

std::optional<TemplateCatalog> TemplateCatalog::load(const CatalogOptions &Opts, SourceManager &SM,
                                                     DiagnosticEngine &Diags) {
  namespace fs = std::filesystem;
  std::error_code Error;
  fs::path Root = fs::absolute(Opts.TemplateDir, Error);
  bool Cuda = Opts.Target == KernelTarget::Cuda;
  std::string Primitives = Cuda ? "cuda/Primitives.cuh" : "host/Primitives.h";
  if (!fs::is_regular_file(Root / Primitives, Error)) {
    Diags.error(SourceLoc{}, "'" + Opts.TemplateDir + "' is not a template library: it has no " +
                                 Primitives + " (--templates names the library's root)");
    return std::nullopt;
  }

  TemplateCatalog Catalog;
  Catalog.Includes.push_back(Cuda ? "cuda/Kernel.cuh" : "host/Kernel.h");
  std::string Code = "#include \"" + Primitives + "\"\n";
  for (const std::string &Header : Opts.ExtraHeaders) {
    fs::path Path = fs::absolute(Header, Error).lexically_normal();
    if (!fs::is_regular_file(Path, Error)) {
      Diags.error(SourceLoc{}, "cannot read primitive header '" + Header + "'");
      return std::nullopt;
    }
    Catalog.Includes.push_back(Path.string());
    Code += "#include \"" + Path.string() + "\"\n";
  }

  // The main file exists only in memory, beside the real file system.
  llvm::IntrusiveRefCntPtr<llvm::vfs::OverlayFileSystem> Files(
      new llvm::vfs::OverlayFileSystem(llvm::vfs::getRealFileSystem()));
  llvm::IntrusiveRefCntPtr<llvm::vfs::InMemoryFileSystem> Memory(new llvm::vfs::InMemoryFileSystem);
  Files->pushOverlay(Memory);
  std::string MainFile = (Root / (Cuda ? "<catalog>.cu" : "<catalog>.cpp")).string();
  Memory->addFile(MainFile, 0, llvm::MemoryBuffer::getMemBufferCopy(Code));
  llvm::IntrusiveRefCntPtr<clang::FileManager> FileManager(
      new clang::FileManager(clang::FileSystemOptions(), Files));

  LocationMap Locations(SM, MainFile, Code);
  ForwardingConsumer Forward(Locations, Diags);
  unsigned ErrorsBefore = Diags.errorCount();
  clang::tooling::ToolInvocation Invocation(
      parseArguments(Opts.Target, Root.string(), MainFile),
      std::make_unique<CatalogAction>(Opts.Target, Locations, Diags, Catalog.Prims),
      FileManager.get());
  Invocation.setDiagnosticConsumer(&Forward);
  bool Parsed = Invocation.run();
  if (!Parsed || Diags.errorCount() != ErrorsBefore)
    return std::nullopt;
  return Catalog;
}

const PrimitiveInfo *TemplateCatalog::lookup(std::string_view Name) const {
  for (const PrimitiveInfo &P : Prims)
    if (P.Name == Name)
      return &P;
  return nullptr;
}

void TemplateCatalog::extend(dsl::OperationCatalog &Ops) const {
  for (const PrimitiveInfo &P : Prims) {
    if (Ops.lookup(P.Name))
      continue;
    const dsl::OperationInfo *Effect = Ops.lookup(P.Effect);
    CCLC_ASSERT(Effect && Effect->Effect == P.Effect, "load() accepts only the language's effects");
    dsl::OperationInfo Info = *Effect;
    Info.Name = P.Name;
    Info.Doc = Effect->Doc + ", by " + P.QualifiedName;
    Ops.add(std::move(Info));
  }
}

std::string defaultTemplateDir() {
  namespace fs = std::filesystem;
  // Where /proc/self/exe is missing, an address inside the program finds it.
  static int Anchor;
  fs::path Exe = llvm::sys::fs::getMainExecutable(nullptr, &Anchor);
  fs::path Installed = Exe.parent_path() / CCLC_TEMPLATES_FROM_BINDIR;
  std::error_code Error;
  if (fs::is_regular_file(Installed / "common" / "Primitive.h", Error))
    return Installed.lexically_normal().string();
  return CCLC_TEMPLATE_DIR;
}

CatalogCache::CatalogCache(std::string TemplateDir, std::vector<std::string> ExtraHeaders,
                           SourceManager &SM, DiagnosticEngine &Diags)
    : TemplateDir(std::move(TemplateDir)), ExtraHeaders(std::move(ExtraHeaders)), SM(SM),
      Diags(Diags) {}

const TemplateCatalog *CatalogCache::get(KernelTarget Target) {
  auto [It, Inserted] = Loaded.try_emplace(Target);
  if (Inserted) {
    auto Start = std::chrono::steady_clock::now();
    It->second = TemplateCatalog::load({Target, TemplateDir, ExtraHeaders}, SM, Diags);
    auto Elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::steady_clock::now() - Start);
    if (Stats && It->second)
      *Stats << "stats: catalog: " << It->second->primitives().size() << ' ' << targetName(Target)
             << " primitives from " << 1 + ExtraHeaders.size() << " header"
             << (ExtraHeaders.empty() ? "" : "s") << " in " << Elapsed.count() << " ms\n";
  }
  return It->second ? &*It->second : nullptr;
}

} // namespace cclc::codegen
