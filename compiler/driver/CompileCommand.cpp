//===- CompileCommand.cpp - cclc compile ----------------------------------===//
//
// The compiler's main path: check the algorithm, build the target (a searched
// and connected topology, or a bare rank count), instantiate, verify, run the
// pass pipeline and emit the requested format.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"
#include "InputOutput.h"
#include "Library.h"
#include "MemoryBudget.h"
#include "NcclOptions.h"
#include "Templates.h"

#include "compiler/codegen/KernelEmit.h"
#include "compiler/cost/Explain.h"
#include "compiler/Compile.h"
#include "compiler/topology/Machine.h"
#include "dsl/Frontend.h"
#include "plan/Limits.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <span>

namespace cclc::driver {

namespace {

struct CompileOptions {
  std::string File;
  compiler::TargetOptions Target;
  std::string Emit = "schedule";
  std::string Output = "-";
  /// --emit=host|cuda: the element types and operators to instantiate.
  std::vector<std::string> DTypes = {"f32"};
  std::vector<std::string> RedOps = {"sum"};
  /// --emit=cuda: threads of each block.
  int BlockThreads = codegen::KernelEmitOptions().BlockThreads;
  compiler::BuildOptions Build;
  TemplateOptions Templates;
  /// Print the cost model's predictions and compare with the library.
  bool Explain = false;
  /// Where --explain finds the library algorithms to compare with.
  std::string Algorithms = defaultAlgorithmsDir();
  /// Whether --channels, --chunks-factor and --protocol were given: what is
  /// not given, --explain chooses.
  bool ChannelsGiven = false;
  bool ChunksGiven = false;
  bool ProtocolGiven = false;
  /// --max-memory: the address space the compile may use (0: no budget).
  uint64_t MaxMemory = defaultMemoryBudget();
  /// --calls and --buffers: the calls the plan is for (plan::PlanInfo).
  std::optional<bool> InPlace;
  std::optional<bool> MappedBuffers;
};

/// What --explain chose for the plan: the channels, chunk factor and
/// protocol of the variant the cost model finds best in the plan's window.
struct VariantChoice {
  int32_t Channels = 1;
  int32_t ChunkFactor = 1;
  sched::Protocol Proto = sched::Protocol::Simple;
};

/// The protocols --explain weighs: the one --protocol gives, else every one
/// (the simple one alone for CPUs).
std::vector<sched::Protocol> openProtocols(const CompileOptions &Opts) {
  if (Opts.ProtocolGiven)
    return {Opts.Build.Pipeline.Proto};
  if (Opts.Target.Cpu)
    return {sched::Protocol::Simple}; // Host executors send every message the simple way.
  auto All = plan::allProtocols();
  return {All.begin(), All.end()};
}

/// The variants of Algo whose choice is left to the cost model, predicted
/// at Sizes: a flat algorithm on 1, 2, 4, ... and all of the target's ring
/// channels unless --channels fixes them, every chunk factor unless
/// --chunks-factor fixes it, every protocol unless --protocol fixes it.
/// Variants that fail to build are left out. S, built with Opts, and
/// SPredictions, its predictions for every factor and protocol left open,
/// stand for the variants they equal; the others share one instantiation and
/// differ in the passes.
std::vector<cost::Variant>
buildVariants(const dsl::Algorithm &Algo, const sched::Schedule &S,
              const std::vector<std::vector<cost::Prediction>> &SPredictions,
              const target::Target &Target, const CompileOptions &Opts,
              const std::vector<uint64_t> &Sizes, SourceManager &SM) {
  std::vector<int32_t> ChannelCounts = {S.NChannels};
  int32_t Rings = int32_t(Target.Rings.size());
  if (S.Topology == plan::TopologyKind::None && !Opts.ChannelsGiven && Rings > 1) {
    ChannelCounts.clear();
    for (int32_t C = 1; C < Rings; C *= 2)
      ChannelCounts.push_back(C);
    ChannelCounts.push_back(Rings);
  }
  DiagnosticEngine Quiet(SM);
  Quiet.setSilent(true);
  std::ostream Discard(nullptr);
  cost::CostModel Model(Target);
  std::optional<sched::Schedule> Instantiated;
  std::vector<cost::Variant> Variants;
  for (int32_t Channels : ChannelCounts) {
    compiler::BuildOptions Build = Opts.Build;
    Build.Channels = Channels;
    Build.Pipeline.PrintAfter.clear();
    Build.Pipeline.Stats = false;
    if (!Opts.ChunksGiven)
      Build.Pipeline.ChunksFactor = 1;
    std::vector<std::vector<cost::Prediction>> PerVariant;
    if (compiler::pipelineChannels(Build, Target) ==
            compiler::pipelineChannels(Opts.Build, Target) &&
        Build.Pipeline.ChunksFactor == Opts.Build.Pipeline.ChunksFactor) {
      PerVariant = SPredictions;
    } else {
      if (!Instantiated)
        Instantiated = compiler::instantiateSchedule(Algo, Target, Build, Quiet);
      if (!Instantiated)
        continue;
      sched::Schedule Built = *Instantiated;
      if (!compiler::optimizeSchedule(Built, Target, Build, Discard, Quiet))
        continue;
      PerVariant = Model.predictEachFactor(Built, Sizes, openProtocols(Opts));
    }
    for (std::vector<cost::Prediction> &Points : PerVariant) {
      // A factor given on the command line is already in the schedule.
      if (Opts.ChunksGiven && Points[0].ChunkFactor != 1)
        continue;
      int32_t Factor = Opts.ChunksGiven ? Build.Pipeline.ChunksFactor : Points[0].ChunkFactor;
      Variants.push_back({Channels, Factor, Points[0].Proto, std::move(Points)});
    }
  }
  return Variants;
}

/// --explain: the cost model's table for S, then S against the library's
/// algorithms of the same collective on the same target (those that compile
/// for it), each at its fastest chunk factor and protocol; the sizes where S
/// wins become the plan's size window. Then the variants of Algo (channels,
/// chunk factor, protocol) the cost model may choose among, and the choice
/// for that window. The tables go to OS.
std::optional<VariantChoice> explain(const dsl::Algorithm &Algo, const sched::Schedule &S,
                                     const target::Target &Target, const CompileOptions &Opts,
                                     SourceManager &SM, plan::PlanInfo &Info, std::ostream &OS) {
  cost::CostModel Model(Target);
  std::vector<uint64_t> Sizes = cost::explainSizes();
  const std::vector<sched::Protocol> Protocols = openProtocols(Opts);
  std::vector<std::vector<cost::Prediction>> PerVariant =
      Model.predictEachFactor(S, Sizes, Protocols);
  std::vector<cost::AlgorithmCurve> Curves = {{S.Algorithm, cost::fastestOf(PerVariant)}};
  cost::printPredictions(S.Algorithm, Target.Description, Curves[0].Points, OS);

  // Library algorithms that do not fit this target are left out silently, and
  // the user's pass printing is for the compiled algorithm only.
  DiagnosticEngine Quiet(SM);
  Quiet.setSilent(true);
  CompileOptions LibraryOpts = Opts;
  LibraryOpts.Build.Pipeline.PrintAfter.clear();
  LibraryOpts.Build.Pipeline.Stats = false;
  std::ostream Discard(nullptr);
  dsl::OperationCatalog Ops;
  for (const LibraryAlgorithm &Other : libraryAlgorithms(Opts.Algorithms, S.Collective, SM, Ops)) {
    if (Other.Algo->Name == S.Algorithm)
      continue;
    if (std::optional<sched::Schedule> Built =
            compiler::buildSchedule(*Other.Algo, Target, LibraryOpts.Build, Discard, Quiet))
      Curves.push_back(
          {Built->Algorithm, cost::fastestOf(Model.predictEachFactor(*Built, Sizes, Protocols))});
  }
  // The window the variants are judged in: where S is the fastest, else
  // every size.
  cost::SizeWindow Window;
  if (Curves.size() == 1) {
    OS << "compare: no other " << plan::collectiveName(S.Collective)
       << " algorithm in " << Opts.Algorithms << " compiles for this target\n";
  } else {
    cost::printComparison(Curves, OS);
    if (std::optional<cost::SizeWindow> Fastest = cost::fastestWindow(Curves, 0)) {
      Window = *Fastest;
      Info.MinBytes = Window.MinBytes;
      Info.MaxBytes = Window.MaxBytes;
      OS << "window: " << S.Algorithm << " is the fastest " << cost::describeWindow(Window)
         << "\n";
    } else {
      OS << "window: " << S.Algorithm << " is never the fastest; the plan keeps every size\n";
    }
  }
  std::vector<cost::Variant> Variants =
      buildVariants(Algo, S, PerVariant, Target, Opts, Sizes, SM);
  if (Variants.size() < 2)
    return std::nullopt;
  size_t Chosen = cost::chooseVariant(Variants, Window);
  cost::printVariants(Variants, Chosen, Window, OS);
  const cost::Variant &V = Variants[Chosen];
  return VariantChoice{V.Channels, V.ChunkFactor, V.Proto};
}

/// The spellings of every value of an enumeration, for CLI11's IsMember.
template <class E, class NameFn>
std::vector<std::string> spellings(std::span<const E> Values, NameFn Name) {
  std::vector<std::string> Names;
  for (E V : Values)
    Names.emplace_back(Name(V));
  return Names;
}

/// The --emit formats of compile: every schedule format and the kernel targets.
std::vector<std::string> compileFormats() {
  std::vector<std::string> Formats = scheduleFormats();
  Formats.insert(Formats.end(), {"host", "cuda"});
  return Formats;
}

bool isKernelFormat(const std::string &Emit) { return Emit == "host" || Emit == "cuda"; }

/// --emit=host|cuda: the kernels' header and source in directory Opts.Output,
/// created if missing.
bool writeKernels(const sched::Schedule &S, const codegen::TemplateCatalog &Catalog,
                  const CompileOptions &Opts, const plan::PlanInfo &Info,
                  DiagnosticEngine &Diags) {
  codegen::KernelEmitOptions KOpts;
  KOpts.Target = primitiveTarget(Opts.Emit);
  KOpts.Stem = codegen::kernelStem(Opts.File);
  KOpts.Info = Info;
  KOpts.BlockThreads = Opts.BlockThreads;
  // The option checks admit only known names; repeats are dropped.
  KOpts.Types.clear();
  for (const std::string &Name : Opts.DTypes)
    if (plan::DType T = *plan::parseDType(Name);
        std::find(KOpts.Types.begin(), KOpts.Types.end(), T) == KOpts.Types.end())
      KOpts.Types.push_back(T);
  KOpts.Ops.clear();
  for (const std::string &Name : Opts.RedOps)
    if (plan::RedOp Op = *plan::parseRedOp(Name);
        std::find(KOpts.Ops.begin(), KOpts.Ops.end(), Op) == KOpts.Ops.end())
      KOpts.Ops.push_back(Op);
  std::optional<std::vector<codegen::GeneratedFile>> Files =
      codegen::emitKernels(S, Catalog, KOpts, Diags);
  if (!Files)
    return false;
  std::error_code Error;
  std::filesystem::create_directories(Opts.Output, Error);
  if (Error) {
    Diags.error(SourceLoc{}, "cannot create directory '" + Opts.Output + "': " + Error.message());
    return false;
  }
  for (const codegen::GeneratedFile &File : *Files)
    if (!writeFile((std::filesystem::path(Opts.Output) / File.Name).string(), File.Text, Diags))
      return false;
  return true;
}

int compile(const CompileOptions &Opts, const CommonOptions &Common) {
  applyMemoryBudget(Opts.MaxMemory);
  SourceManager SM;
  DiagnosticEngine Diags(SM);
  configure(Diags, Common);
  std::optional<uint32_t> Id = loadSource(SM, Diags, Opts.File);
  if (!Id)
    return 1;
  codegen::CatalogCache Catalogs(Opts.Templates.Dir, Opts.Templates.Primitives, SM, Diags);
  if (Opts.Build.Pipeline.Stats)
    Catalogs.setStats(&std::cerr);
  dsl::OperationCatalog Ops;
  std::unique_ptr<dsl::Algorithm> Algo =
      checkWithTemplates(*Id, Catalogs, primitiveTarget(Opts.Emit), Ops, Diags);
  if (!Algo)
    return 1;

  std::optional<compiler::BuiltTarget> Built = compiler::buildTarget(Opts.Target, SM, Diags);
  if (!Built)
    return 1;
  const target::Target &Target = Built->Target;

  // A plan is written rank by rank from rank 0's program where every rank
  // runs it rotated; the other outputs read every rank's program.
  compiler::BuildOptions Build = Opts.Build;
  Build.RankZeroOnly = Opts.Emit == "json";
  std::optional<sched::Schedule> Schedule =
      compiler::buildSchedule(*Algo, Target, Build, std::cerr, Diags);
  if (!Schedule)
    return 1;

  plan::PlanInfo Info;
  Info.Source = Opts.File;
  // The plan quotes its source from the text it carries, never from the file.
  Info.SourceText = std::string(SM.getText(*Id));
  Info.Target = Target.Description;
  Info.Generator = generatorName();
  Info.InPlace = Opts.InPlace;
  Info.MappedBuffers = Opts.MappedBuffers;
  // The tables go to stdout unless the plan or schedule does: then to
  // stderr, so that what stdout carries stays one valid document.
  bool OutputOnStdout = !isKernelFormat(Opts.Emit) && Opts.Output == "-";
  if (Opts.Explain) {
    sched::expandRotation(*Schedule);
    std::optional<VariantChoice> Choice =
        explain(*Algo, *Schedule, Target, Opts, SM, Info, OutputOnStdout ? std::cerr : std::cout);
    if (Choice && (Choice->Channels != Schedule->NChannels ||
                   Choice->ChunkFactor != Opts.Build.Pipeline.ChunksFactor ||
                   Choice->Proto != Opts.Build.Pipeline.Proto)) {
      compiler::BuildOptions Chosen = Build;
      Chosen.Channels = Choice->Channels;
      Chosen.Pipeline.ChunksFactor = Choice->ChunkFactor;
      Chosen.Pipeline.Proto = Choice->Proto;
      Schedule = compiler::buildSchedule(*Algo, Target, Chosen, std::cerr, Diags);
      if (!Schedule)
        return 1;
    }
  }
  if (Opts.Emit != "json")
    sched::expandRotation(*Schedule);
  if (isKernelFormat(Opts.Emit)) {
    const codegen::TemplateCatalog *Catalog = Catalogs.get(primitiveTarget(Opts.Emit));
    return Catalog && writeKernels(*Schedule, *Catalog, Opts, Info, Diags) && !Diags.hasErrors()
               ? 0
               : 1;
  }
  bool Written = writeOutput(Opts.Output, Diags, [&](std::ostream &OS) {
    emitSchedule(*Schedule, Opts.Emit, Info, OS, Diags);
  });
  return Written && !Diags.hasErrors() ? 0 : 1;
}

} // namespace

void addCompileCommand(CLI::App &App, const CommonOptions &Common, int &ExitCode) {
  CLI::App *Cmd = App.add_subcommand(
      "compile", "Instantiate a .ccl algorithm for a target, verify it, optimize it and emit "
                 "a schedule, plan or kernels");
  auto Opts = std::make_shared<CompileOptions>();
  Cmd->add_option("file", Opts->File, ".ccl algorithm")->required();
  CLI::Option *Topo =
      Cmd->add_option("--topo", Opts->Target.Topo,
                      "NCCL topology XML of one node (default: the file NCCL_TOPO_FILE names, "
                      "unless --nranks is given)")
          ->check(CLI::ExistingFile);
  Cmd->add_option("--nodes", Opts->Target.Nodes,
                  "Number of identical nodes: of the --topo machine, or over which --nranks "
                  "ranks are spread (node-major: rank = node * local_nranks + local_rank)")
      ->check(CLI::Range(1, topo::MaxNodes))
      ->capture_default_str();
  CLI::Option *NRanks = Cmd->add_option("--nranks", Opts->Target.NRanks,
                                        "Compile for N ranks without a topology: one ring in "
                                        "rank order and NCCL's double binary trees")
                            ->check(CLI::Range(1, int(plan::MaxRanks)));
  Topo->excludes(NRanks);
  Cmd->add_flag("--cpu", Opts->Target.Cpu,
                "With --nranks: the ranks are processes on this host's CPUs, joined by shared "
                "memory, as the runtime's host calls run; --explain prices their messages and "
                "reductions as a CPU's, not a GPU's, and weighs the simple protocol alone")
      ->needs(NRanks);
  addNcclOptions(*Cmd, Opts->Target.Nccl);
  Cmd->add_option("--root", Opts->Build.Root, "Root rank of broadcast and reduce")
      ->capture_default_str();
  Cmd->add_option("--buffer-slots", Opts->Build.BufferSlots,
                  "Messages each connection buffers (the runtime's slots)")
      ->check(CLI::Range(1, int(plan::MaxBufferSlots)))
      ->capture_default_str();
  Cmd->add_option("--emit", Opts->Emit, "Output format; host and cuda write kernels")
      ->check(CLI::IsMember(compileFormats()))
      ->capture_default_str();
  Cmd->add_option("-o,--output", Opts->Output,
                  "Output file ('-' for stdout); for --emit=host|cuda, the directory of the "
                  "generated header and source")
      ->capture_default_str();
  Cmd->add_option("--dtypes", Opts->DTypes,
                  "Element types to generate kernels for (--emit=host|cuda), comma-separated")
      ->delimiter(',')
      ->check(CLI::IsMember(spellings(plan::allDTypes(), plan::dtypeName)))
      ->capture_default_str();
  Cmd->add_option("--ops", Opts->RedOps,
                  "Reduction operators to generate kernels for (--emit=host|cuda), "
                  "comma-separated")
      ->delimiter(',')
      ->check(CLI::IsMember(spellings(plan::allRedOps(), plan::redOpName)))
      ->capture_default_str();
  Cmd->add_option("--block-threads", Opts->BlockThreads,
                  "Threads of each CUDA block (--emit=cuda): a multiple of 32 up to 1024")
      ->check(CLI::Range(32, 1024))
      ->check(CLI::Validator(
          [](const std::string &Text) -> std::string {
            return std::strtol(Text.c_str(), nullptr, 10) % 32 == 0
                       ? ""
                       : "a block runs whole warps: pass a multiple of 32";
          },
          "MULTIPLE OF 32"))
      ->capture_default_str();
  CLI::Option *Chunks =
      Cmd->add_option("--chunks-factor", Opts->Build.Pipeline.ChunksFactor,
                      "Split every chunk into F sub-chunks and pipeline the steps over them "
                      "(default: 1, or with --explain the cost model's choice)")
          ->check(CLI::Range(1, 1 << 16));
  CLI::Option *Channels =
      Cmd->add_option("--channels", Opts->Build.Channels,
                      "Channels a flat algorithm runs on (default: the target's ring channels, "
                      "or with --explain the cost model's choice)")
          ->check(CLI::Range(1, int(plan::MaxChannels)));
  CLI::Option *ProtocolOption = Cmd->add_option_function<std::string>(
         "--protocol",
         [Opts](const std::string &Text) {
           Opts->Build.Pipeline.Proto = *plan::parseProtocol(Text);
         },
         "How the plan's messages travel: simple, or ll (a flag in every 16-byte line, for "
         "small messages on GPUs; host executors run it as simple). Default: simple, or "
         "with --explain the cost model's choice")
      ->check(CLI::IsMember(spellings(plan::allProtocols(), plan::protocolName)))
      ->default_str("simple");
  std::vector<std::string> PassNames = passes::passNames();
  Cmd->add_option("--disable-pass", Opts->Build.Pipeline.Disabled, "Do not run pass NAME")
      ->check(CLI::IsMember(PassNames));
  PassNames.push_back("all");
  Cmd->add_option("--print-after", Opts->Build.Pipeline.PrintAfter,
                  "Print the schedule to stderr after pass NAME ('all': after every pass)")
      ->check(CLI::IsMember(PassNames));
  Cmd->add_flag("--verify-each", Opts->Build.Pipeline.VerifyEach,
                "Verify the schedule after every pass, not only at the end");
  Cmd->add_flag(
      "--exhaustive-verify", [Opts](int64_t) { Opts->Build.Verify.UseSymmetry = false; },
      "Run every rank's program in the proofs, even where the schedule is rank 0's renamed "
      "(a ring's rotation, a butterfly's bit flips) and running rank 0 proves the same");
  Cmd->add_flag("--explain", Opts->Explain,
                "Print predicted time and bandwidth per message size, compare with the "
                "library's algorithms of the same collective, record in the plan the "
                "sizes where this algorithm is the fastest, and compile the channels, "
                "chunk factor and protocol the cost model predicts fastest there");
  Cmd->add_option("--algorithms", Opts->Algorithms,
                  "Library algorithms --explain compares with")
      ->capture_default_str();
  Cmd->add_option_function<std::string>(
         "--max-memory",
         [Opts](const std::string &Text) { Opts->MaxMemory = *parseMemorySize(Text); },
         "Memory the compile may use (address space it maps, as ulimit -v counts it), e.g. "
         "512M, 8G; 'unlimited' for no budget. A compile that needs more stops with an error. "
         "Default: 8 GiB, or 3/4 of physical memory where that is less (here " +
             plan::formatBytes(defaultMemoryBudget()) + ")")
      ->check(CLI::Validator(
          [](const std::string &Text) -> std::string {
            return parseMemorySize(Text) ? ""
                                         : "'" + Text + "' is not a size (like 512M, 8G, or "
                                                        "'unlimited')";
          },
          "SIZE"));
  Cmd->add_option_function<std::string>(
         "--calls", [Opts](const std::string &Text) { Opts->InPlace = Text == "in-place"; },
         "The calls the plan is for, which a runtime holding plans for both serves with it "
         "(plan field in_place): in-place or out-of-place. Default: either")
      ->check(CLI::IsMember({"in-place", "out-of-place"}));
  Cmd->add_option_function<std::string>(
         "--buffers", [Opts](const std::string &Text) { Opts->MappedBuffers = Text == "mapped"; },
         "The host buffers the plan is for (plan field mapped_buffers): mapped, from "
         "cclcMemAlloc, which the ranks of a host map, or unmapped. Default: either")
      ->check(CLI::IsMember({"mapped", "unmapped"}));
  addTemplateOptions(*Cmd, Opts->Templates);
  Cmd->add_flag("--stats", Opts->Build.Pipeline.Stats,
                "Print what every pass did, and how long reading the template library took, to "
                "stderr");
  Cmd->callback([Cmd, Topo, NRanks, Chunks, Channels, ProtocolOption, Opts, &Common, &ExitCode] {
    Opts->ChunksGiven = Chunks->count() > 0;
    Opts->ChannelsGiven = Channels->count() > 0;
    Opts->ProtocolGiven = ProtocolOption->count() > 0;
    if (!*NRanks)
      Opts->Target.Topo = topologyFileOrEnvironment(Opts->Target.Topo, "--topo");
    if (!*NRanks && Opts->Target.Topo.empty())
      throw CLI::RequiredError("compile needs a target: --topo FILE, NCCL_TOPO_FILE or "
                               "--nranks N");
    if (isKernelFormat(Opts->Emit) && Opts->Output == "-")
      throw CLI::ValidationError("--emit=" + Opts->Emit + " writes a header and a source file: "
                                 "give their directory with -o DIR");
    ExitCode = compile(*Opts, Common);
  });
}

} // namespace cclc::driver
