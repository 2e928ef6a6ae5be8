//===- CodegenBench.cpp - Kernel generation time per algorithm and target -===//
//
// Prints, for every algorithm of the library at 8, 64 and 512 ranks (and at
// 64 ranks with chunks split four ways) and for both kernel targets, what
// `cclc compile --emit=host|cuda` spends generating kernels once the schedule
// exists: the structure analysis (rank classes, runs, closed forms) and the
// whole emission (analysis, text and clang-format), with the size of what
// comes out and how much of it is tables. Reading the template catalog is a
// fixed cost per compile, printed once per target.
//
//===----------------------------------------------------------------------===//

#include "compiler/codegen/KernelEmit.h"
#include "compiler/codegen/KernelStructure.h"
#include "compiler/Compile.h"
#include "compiler/target/Target.h"
#include "dsl/Frontend.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

using namespace cclc;

namespace {

double msSince(std::chrono::steady_clock::time_point Start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - Start)
      .count();
}

/// What one generation produced, summed over the channel programs.
struct Shape {
  size_t Programs = 0, Classes = 0, Runs = 0, Tables = 0;
};

Shape shapeOf(const codegen::KernelStructure &K) {
  Shape S;
  S.Programs = K.Programs.size();
  for (const codegen::ChannelProgram &P : K.Programs) {
    S.Classes += P.Classes.size();
    S.Tables += P.Tables.size();
    for (const codegen::RankClass &C : P.Classes)
      for (const codegen::RunBlock &B : C.Blocks)
        S.Runs += B.Body.size();
  }
  return S;
}

} // namespace

int main() {
  SourceManager SM;
  std::ostringstream Errors;
  DiagnosticEngine Diags(SM, Errors);
  const codegen::KernelTarget Targets[] = {codegen::KernelTarget::Host,
                                           codegen::KernelTarget::Cuda};
  std::vector<codegen::TemplateCatalog> Catalogs;
  for (codegen::KernelTarget Target : Targets) {
    auto Start = std::chrono::steady_clock::now();
    std::optional<codegen::TemplateCatalog> Catalog =
        codegen::TemplateCatalog::load({Target, CCLC_SOURCE_DIR "/templates", {}}, SM, Diags);
    if (!Catalog) {
      std::fprintf(stderr, "%s", Errors.str().c_str());
      return 1;
    }
    std::printf("catalog %-4s: %zu primitives read in %.1f ms\n",
                std::string(codegen::targetName(Target)).c_str(), Catalog->primitives().size(),
                msSince(Start));
    Catalogs.push_back(std::move(*Catalog));
  }

  std::vector<std::filesystem::path> Library;
  for (const auto &Entry : std::filesystem::directory_iterator(CCLC_SOURCE_DIR "/algorithms"))
    if (Entry.path().extension() == ".ccl")
      Library.push_back(Entry.path());
  std::sort(Library.begin(), Library.end());

  std::printf("\n%-28s %6s %6s %6s %8s %8s %8s %6s %6s %12s %9s %8s\n", "algorithm", "nranks",
              "factor", "target", "steps", "programs", "classes", "runs", "tables", "structure ms",
              "emit ms", "lines");
  struct Case {
    int32_t NRanks, ChunksFactor;
  };
  for (const std::filesystem::path &File : Library)
    for (Case C : {Case{8, 1}, Case{64, 1}, Case{512, 1}, Case{64, 4}}) {
      std::string Error;
      std::optional<uint32_t> Id = SM.loadFile(File.string(), Error);
      dsl::OperationCatalog Ops;
      std::unique_ptr<dsl::Algorithm> Algo = Id ? dsl::parseAndCheck(*Id, Ops, Diags) : nullptr;
      compiler::BuildOptions Options;
      Options.Pipeline.ChunksFactor = C.ChunksFactor;
      std::ostringstream Log;
      std::optional<sched::Schedule> S =
          Algo ? compiler::buildSchedule(*Algo, target::flatTarget(C.NRanks), Options, Log, Diags)
               : std::nullopt;
      if (!S)
        continue;
      for (size_t T = 0; T < std::size(Targets); ++T) {
        auto Start = std::chrono::steady_clock::now();
        codegen::KernelStructure K = codegen::analyzeKernel(*S);
        double StructureMs = msSince(Start);
        codegen::KernelEmitOptions Opts;
        Opts.Target = Targets[T];
        Opts.Stem = File.stem().string();
        Opts.Types = {plan::DType::F32, plan::DType::BF16, plan::DType::I32};
        Opts.Ops = {plan::RedOp::Sum, plan::RedOp::Max};
        Start = std::chrono::steady_clock::now();
        std::optional<std::vector<codegen::GeneratedFile>> Files =
            codegen::emitKernels(*S, Catalogs[T], Opts, Diags);
        double EmitMs = msSince(Start);
        if (!Files) {
          std::fprintf(stderr, "%s", Errors.str().c_str());
          return 1;
        }
        size_t Lines = 0;
        for (const codegen::GeneratedFile &F : *Files)
          Lines += std::count(F.Text.begin(), F.Text.end(), '\n');
        Shape Sh = shapeOf(K);
        std::printf("%-28s %6d %6d %6s %8zu %8zu %8zu %6zu %6zu %12.1f %9.1f %8zu\n",
                    Opts.Stem.c_str(), C.NRanks, C.ChunksFactor,
                    std::string(codegen::targetName(Targets[T])).c_str(), S->stepCount(),
                    Sh.Programs, Sh.Classes, Sh.Runs, Sh.Tables, StructureMs, EmitMs, Lines);
      }
    }
  return 0;
}
