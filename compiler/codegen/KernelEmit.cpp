//===- KernelEmit.cpp - Specialized host and CUDA kernels -----------------===//
//
// The text of the kernels, from the structure analyzeKernel found. Each
// channel program becomes a function template over (T, Op) that runs one
// round: the calls of the rank's class, on slices of the round's chunk grid.
// runChannel loops over the rounds and picks the channel's program; the
// entry points instantiate it. The two targets differ only in spelling (see
// TargetSyntax), so one writer prints both.
//
//===----------------------------------------------------------------------===//

#include "compiler/codegen/KernelEmit.h"
#include "compiler/codegen/Format.h"
#include "compiler/codegen/KernelStructure.h"
#include "plan/Assert.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <set>
#include <sstream>

namespace cclc::codegen {

namespace {

/// How the templates spell an element type; the names are plan::dtypeName's.
struct TypeSpelling {
  const char *HostType; ///< C++ type of the host templates, within namespace cclc.
  const char *CudaType; ///< C++ type of the CUDA templates.
  const char *Enum;     ///< DType enumerator.
};
/// Indexed by plan::DType.
constexpr TypeSpelling TypeSpellings[] = {
    {"float", "float", "F32"},      {"double", "double", "F64"},
    {"host::f16", "__half", "F16"}, {"host::bf16", "__nv_bfloat16", "BF16"},
    {"int8_t", "int8_t", "I8"},     {"uint8_t", "uint8_t", "U8"},
    {"int32_t", "int32_t", "I32"},  {"uint32_t", "uint32_t", "U32"},
    {"int64_t", "int64_t", "I64"},  {"uint64_t", "uint64_t", "U64"},
};

/// Operator type and RedOp enumerator of the templates, indexed by plan::RedOp.
constexpr const char *OpTypes[] = {"Sum", "Prod", "Min", "Max"};

/// How a target spells what differs between host and CUDA code. The
/// generated source lives in namespace cclc::gen, so it names the templates
/// from namespace cclc on (host::Slice): shorter lines read better and keep
/// clang-format from searching for ways to break them.
struct TargetSyntax {
  std::string Namespace; ///< Of the templates, within cclc: host, cuda.
  std::string HeaderExt;
  std::string SourceExt;
  /// Before functions the kernel calls: "" or "__device__ ".
  std::string Device;
  /// How the kernel's arguments reach the connections: Net is a pointer to
  /// the host runtime's object, a table in device memory on the GPU.
  std::string Net;
};

TargetSyntax syntaxOf(KernelTarget Target) {
  if (Target == KernelTarget::Cuda)
    return {"cuda", ".cuh", ".cu", "__device__ ", "Args.Net."};
  return {"host", ".h", ".cpp", "", "Args.Net->"};
}

std::string join(const std::vector<std::string> &Parts, std::string_view Sep) {
  std::string Text;
  for (size_t I = 0; I < Parts.size(); ++I)
    Text += (I ? std::string(Sep) : "") + Parts[I];
  return Text;
}

/// "ranks 0, 3" / "rank 2".
std::string rankList(const std::vector<int32_t> &Ranks) {
  std::vector<std::string> Names;
  for (int32_t R : Ranks)
    Names.push_back(std::to_string(R));
  return (Ranks.size() == 1 ? "rank " : "ranks ") + join(Names, ", ");
}

std::string fieldDescription(Field F) {
  switch (F) {
  case Field::RecvPeer: return "peers received from";
  case Field::SendPeer: return "peers sent to";
  case Field::SrcChunk: return "source chunks";
  case Field::DstChunk: return "destination chunks";
  case Field::SrcCount: return "source slice sizes";
  case Field::DstCount: return "destination slice sizes";
  }
  CCLC_UNREACHABLE("unknown field");
}

/// What a round function's body refers to, so that its prologue declares
/// exactly that (generated code compiles without warnings).
struct BodyUses {
  bool Rank = false;
  bool Channel = false;
  /// By buffer: slices of it are read, written.
  bool Read[3] = {false, false, false};
  bool Written[3] = {false, false, false};
  /// By numbering of the program: its variable is read.
  std::set<uint8_t> Numberings;
};

class KernelWriter {
public:
  KernelWriter(const sched::Schedule &S, const KernelStructure &K, const TemplateCatalog &Catalog,
               const KernelEmitOptions &Opts, DiagnosticEngine &Diags)
      : S(S), K(K), Catalog(Catalog), Opts(Opts), Diags(Diags), Syntax(syntaxOf(Opts.Target)) {}

  std::optional<std::vector<GeneratedFile>> write();

private:
  const sched::Schedule &S;
  const KernelStructure &K;
  const TemplateCatalog &Catalog;
  const KernelEmitOptions &Opts;
  DiagnosticEngine &Diags;
  TargetSyntax Syntax;
  bool Failed = false;
  /// The numbering tables the code reads, by name.
  std::set<std::string> UsedTables;
  /// Primitives already reported missing or mismatched.
  std::set<std::string> Reported;
  /// The first global table number of each program.
  std::vector<size_t> TableBase;

  std::string entryName(plan::DType T, plan::RedOp Op) const {
    return S.Algorithm + "_" + std::string(plan::dtypeName(T)) + "_" +
           std::string(plan::redOpName(Op));
  }
  std::string typeOf(plan::DType T) const {
    const TypeSpelling &TS = TypeSpellings[size_t(T)];
    return Opts.Target == KernelTarget::Cuda ? TS.CudaType : TS.HostType;
  }
  std::string banner(const std::string &FileName) const;
  std::string header() const;
  /// The C name of the kernel table (host kernels only).
  std::string cTableName() const;
  std::string source();
  std::string constants() const;
  std::string roundFunction(size_t P);
  std::string classCode(size_t P, const RankClass &Class, BodyUses &Uses);
  std::string callText(size_t P, const Run &R, std::optional<int32_t> Step, BodyUses &Uses);
  /// With Operand, the text may be an operand of +.
  std::string fieldText(size_t P, const Run &R, Field F, std::optional<int32_t> Step,
                        BodyUses &Uses, bool Operand = false);
  std::string chunkText(size_t P, const Run &R, Field F, std::optional<int32_t> Step,
                        BodyUses &Uses);
  std::string channelText(size_t P, BodyUses &Uses) const;
  /// The round function's lambda making slices of Buf to read (Src) or to
  /// write: readInput, writeOutput, ...
  static std::string sliceMaker(sched::BufferKind Buf, bool Src) {
    std::string Name(sched::bufferName(Buf));
    Name[0] = char(std::toupper(Name[0]));
    return (Src ? "read" : "write") + Name;
  }
  const PrimitiveInfo *primitiveFor(const Run &R);
  std::string dispatchFunction() const;
  std::string entryPoints() const;
};

std::string KernelWriter::banner(const std::string &FileName) const {
  std::string Source = std::filesystem::path(Opts.Info.Source).filename().string();
  std::ostringstream OS;
  OS << "// " << FileName << ": " << S.Algorithm << " (" << plan::collectiveName(S.Collective)
     << ") kernels for "
     << (Opts.Info.Target.empty() ? std::to_string(S.NRanks) + " ranks" : Opts.Info.Target)
     << ",\n// generated by " << Opts.Info.Generator << " from " << Source
     << ". Do not edit: regenerate.\n";
  return OS.str();
}

std::string KernelWriter::header() const {
  std::ostringstream OS;
  std::string Name = Opts.Stem + Syntax.HeaderExt;
  OS << banner(Name) << "#pragma once\n\n#include \"" << Catalog.includes().front() << "\"\n";
  if (Opts.Target == KernelTarget::Cuda)
    OS << "\n#include <cuda_runtime.h>\n\n#include <string>\n";
  OS << "\nnamespace cclc::gen {\n\n";
  for (plan::DType T : Opts.Types)
    for (plan::RedOp Op : Opts.Ops) {
      std::string Entry = entryName(T, Op);
      std::string_view TypeName = plan::dtypeName(T), OpName = plan::redOpName(Op);
      if (Opts.Target == KernelTarget::Host)
        OS << "/// Runs channel Channel of " << S.Algorithm << " on rank Args.Rank, for "
           << TypeName << " and " << OpName << ".\n"
           << "void " << Entry << "(const cclc::host::KernelArgs &Args, int Channel);\n";
      else
        OS << "/// Runs " << S.Algorithm << " on rank Args.Rank, for " << TypeName << " and "
           << OpName << ": block b runs channel b.\n"
           << "__global__ void __launch_bounds__(" << Opts.BlockThreads << ") " << Entry
           << "_kernel(cclc::cuda::KernelArgs Args);\n"
           << "/// Launches it on Stream, one block per channel; on failure Why says what to "
              "do.\n"
           << "cudaError_t " << Entry
           << "(const cclc::cuda::KernelArgs &Args, cudaStream_t Stream, std::string &Why);\n";
      OS << "extern const cclc::" << Syntax.Namespace << "::KernelInfo " << Entry << "_info;\n\n";
    }
  OS << "/// Every kernel above, for the runtime to register.\n"
     << "extern const cclc::" << Syntax.Namespace << "::KernelInfo " << S.Algorithm << "_kernels["
     << Opts.Types.size() * Opts.Ops.size() << "];\n\n} // namespace cclc::gen\n";
  if (Opts.Target == KernelTarget::Host)
    OS << "\n/// The same table under a C name, for programs that load it from a shared\n"
       << "/// library at run time (cclc-perf --kernels LIBRARY:" << S.Algorithm << ").\n"
       << "extern \"C\" const cclc::host::KernelTable " << cTableName() << ";\n";
  return OS.str();
}

std::string KernelWriter::cTableName() const { return "cclc_host_kernels_" + S.Algorithm; }

/// The schedule's constants and the tables the code reads.
std::string KernelWriter::constants() const {
  std::ostringstream OS;
  OS << "constexpr kern::GridShape Shape = {" << S.NChannels << ", " << S.ChunksPerChannel << ", "
     << K.MaxMessageChunks << "};\n";
  auto Array = [&](const std::vector<int32_t> &Values) {
    std::vector<std::string> Items;
    for (int32_t V : Values)
      Items.push_back(std::to_string(V));
    return "{" + join(Items, ", ") + "}";
  };
  std::set<std::string> Emitted;
  auto NumberingTable = [&](const std::string &Name, const std::vector<int32_t> &Values,
                            const std::string &Doc) {
    if (!UsedTables.count(Name) || !Emitted.insert(Name).second)
      return;
    OS << "/// " << Doc << "\n"
       << Syntax.Device << "constexpr int " << Name << "[" << S.NRanks << "] = " << Array(Values)
       << ";\n";
  };
  for (const ChannelProgram &Program : K.Programs)
    for (const Numbering &N : Program.Numberings) {
      NumberingTable(N.OfTable, N.Of, N.OfTable + "[physical rank]: " + N.Meaning + ".");
      NumberingTable(N.BackTable, N.Back,
                     N.BackTable + "[n]: the physical rank whose number in " + N.OfTable +
                         " is n.");
    }
  for (size_t P = 0; P < K.Programs.size(); ++P) {
    const ChannelProgram &Program = K.Programs[P];
    if (Program.Classes.size() > 1)
      OS << "/// The code path of each rank in channel program " << P << ".\n"
         << Syntax.Device << "constexpr int RankClass" << P << "[" << S.NRanks
         << "] = " << Array(Program.ClassOfRank) << ";\n";
    for (size_t T = 0; T < Program.Tables.size(); ++T) {
      const IndexTable &Table = Program.Tables[T];
      OS << "/// Values no closed form fits, by physical rank"
         << (Table.Steps > 1 ? " and step" : "") << ": the " << fieldDescription(Table.Of)
         << " of the calls";
      if (Table.Loc.isValid())
        OS << " at line " << Table.Loc.Line;
      OS << (Table.Shared ? ", and others" : "") << ".\n"
         << Syntax.Device << "constexpr int Table" << TableBase[P] + T << "[" << S.NRanks << "]";
      if (Table.Steps == 1) {
        OS << " = " << Array(Table.Values) << ";\n";
        continue;
      }
      OS << "[" << Table.Steps << "] = {";
      for (int32_t R = 0; R < S.NRanks; ++R)
        OS << (R ? ", " : "")
           << Array({Table.Values.begin() + R * Table.Steps,
                     Table.Values.begin() + (R + 1) * Table.Steps});
      OS << "};\n";
    }
  }
  return OS.str();
}

std::string KernelWriter::channelText(size_t P, BodyUses &Uses) const {
  const std::vector<int32_t> &Channels = K.Programs[P].Channels;
  if (Channels.size() == 1)
    return std::to_string(Channels[0]);
  Uses.Channel = true;
  return "Channel";
}

std::string KernelWriter::fieldText(size_t P, const Run &R, Field F, std::optional<int32_t> Step,
                                    BodyUses &Uses, bool Operand) {
  const FieldCode &Code = R.Fields[size_t(F)];
  if (!Code.Expr) {
    Uses.Rank = true;
    std::string Ref = "Table" + std::to_string(TableBase[P] + Code.Table) + "[Rank]";
    if (K.Programs[P].Tables[Code.Table].Steps > 1)
      Ref += "[" + (Step ? std::to_string(*Step) : std::string(StepVariable)) + "]";
    return Ref;
  }
  const IndexExpr &E = *Code.Expr;
  const std::vector<Numbering> &Nums = K.Programs[P].Numberings;
  if (!constantIndex(E, R.Domain, Step, Nums)) {
    Uses.Rank = true;
    if (E.Var) {
      Uses.Numberings.insert(E.Var);
      UsedTables.insert(Nums[E.Var].OfTable);
    }
    if (E.MapBack)
      UsedTables.insert(Nums[E.Var].BackTable);
  }
  return printIndex(E, R.Domain, Step, Nums, Operand);
}

/// A chunk field is relative to its channel's block of chunks.
std::string KernelWriter::chunkText(size_t P, const Run &R, Field F, std::optional<int32_t> Step,
                                    BodyUses &Uses) {
  const std::vector<int32_t> &Channels = K.Programs[P].Channels;
  sched::BufferKind Buf = R.Shape.bufferOf(F);
  int32_t Block = S.channelChunks(Buf);
  std::optional<int64_t> Constant;
  if (const std::optional<IndexExpr> &E = R.Fields[size_t(F)].Expr)
    Constant = constantIndex(*E, R.Domain, Step, K.Programs[P].Numberings);
  if (Channels.size() == 1) {
    int64_t Base = int64_t(Channels[0]) * Block;
    if (Constant)
      return std::to_string(Base + *Constant);
    return Base ? std::to_string(Base) + " + " + fieldText(P, R, F, Step, Uses, true)
                : fieldText(P, R, F, Step, Uses);
  }
  Uses.Channel = true;
  std::string Base = "Channel * " + std::to_string(Block);
  if (Constant)
    return *Constant ? Base + " + " + std::to_string(*Constant) : Base;
  return Base + " + " + fieldText(P, R, F, Step, Uses, true);
}

const PrimitiveInfo *KernelWriter::primitiveFor(const Run &R) {
  std::string Effect(plan::opName(R.Shape.Kind));
  // A step's protocol picks the library's primitive for it: the CUDA
  // library has one per protocol (send_ll, ...); the host runs every
  // protocol with the simple one's (common/Protocol.h).
  std::string Own = R.Shape.Proto != sched::Protocol::Simple && Opts.Target == KernelTarget::Cuda
                        ? Effect + "_" + std::string(plan::protocolName(R.Shape.Proto))
                        : Effect;
  std::string Name = R.Shape.Primitive.empty() ? Own : R.Shape.Primitive;
  const PrimitiveInfo *Prim = Catalog.lookup(Name);
  std::string Problem;
  if (!Prim)
    Problem = "the " + std::string(targetName(Opts.Target)) +
              " template library has no primitive '" + Name + "'";
  else if (Prim->Effect != Effect)
    Problem = "primitive '" + Name + "' (" + Prim->QualifiedName + ") has effect '" + Prim->Effect +
              "', but the step needs '" + Effect + "'";
  else if (Prim->TemplateParams != 1 && Prim->TemplateParams != 2)
    Problem = "primitive '" + Name + "' (" + Prim->QualifiedName + ") has " +
              std::to_string(Prim->TemplateParams) +
              " template parameters; kernels instantiate primitives with <T> or <T, Op>";
  if (Problem.empty())
    return Prim;
  Failed = true;
  if (Reported.insert(Name).second)
    Diags.error(R.Loc, Problem);
  return nullptr;
}

std::string KernelWriter::callText(size_t P, const Run &R, std::optional<int32_t> Step,
                                   BodyUses &Uses) {
  const PrimitiveInfo *Prim = primitiveFor(R);
  if (!Prim)
    return "";
  std::string Channel = channelText(P, Uses);
  auto Out = [&] {
    return Syntax.Net + "out(" + fieldText(P, R, Field::SendPeer, Step, Uses) + ", " + Channel +
           ")";
  };
  auto In = [&] {
    return Syntax.Net + "in(" + fieldText(P, R, Field::RecvPeer, Step, Uses) + ", " + Channel + ")";
  };
  auto Slice = [&](Field F) {
    bool Src = isSourceField(F);
    sched::BufferKind Buf = R.Shape.bufferOf(F);
    (Src ? Uses.Read : Uses.Written)[size_t(Buf)] = true;
    return sliceMaker(Buf, Src) + "(" + chunkText(P, R, F, Step, Uses) + ", " +
           fieldText(P, R, Src ? Field::SrcCount : Field::DstCount, Step, Uses) + ")";
  };
  std::vector<std::string> Params;
  switch (R.Shape.Kind) {
  case OpKind::Send: Params = {Out(), Slice(Field::SrcChunk)}; break;
  case OpKind::Recv:
  case OpKind::RecvReduce: Params = {In(), Slice(Field::DstChunk)}; break;
  case OpKind::Copy:
  case OpKind::Reduce: Params = {Slice(Field::SrcChunk), Slice(Field::DstChunk)}; break;
  case OpKind::RecvReduceSend:
  case OpKind::RecvCopySend: Params = {In(), Out(), Slice(Field::DstChunk)}; break;
  case OpKind::RecvReduceCopy:
    Params = {In(), Slice(Field::SrcChunk), Slice(Field::DstChunk)};
    break;
  case OpKind::Exchange:
  case OpKind::ExchangeReduce:
    Params = {Out(), In(), Slice(Field::SrcChunk), Slice(Field::DstChunk)};
    break;
  }
  // The generated code is in namespace cclc::gen.
  std::string_view Name = Prim->QualifiedName;
  if (Name.starts_with("cclc::"))
    Name.remove_prefix(std::string_view("cclc::").size());
  return std::string(Name) + (Prim->TemplateParams == 2 ? "<T, Op>" : "<T>") + "(" +
         join(Params, ", ") + ");\n";
}

/// "line 12: send by copy_streaming": where a run's calls come from.
std::string runLabel(const Run &R) {
  std::string Label;
  if (R.Loc.isValid())
    Label += "line " + std::to_string(R.Loc.Line) + ": ";
  Label += std::string(plan::opName(R.Shape.Kind));
  if (!R.Shape.Primitive.empty())
    Label += " by " + R.Shape.Primitive;
  if (R.Shape.Proto != sched::Protocol::Simple)
    Label += " (" + std::string(plan::protocolName(R.Shape.Proto)) + ")";
  return Label;
}

std::string KernelWriter::classCode(size_t P, const RankClass &Class, BodyUses &Uses) {
  std::string Code;
  const std::string Var = StepVariable;
  for (const RunBlock &B : Class.Blocks) {
    std::vector<std::string> Labels;
    for (const Run &R : B.Body)
      Labels.push_back(runLabel(R));
    Code += "// " + join(Labels, ", ") + (B.steps() > 1 ? " x" + std::to_string(B.steps()) : "") +
            "\n";
    if (B.steps() <= MaxUnrolledSteps) {
      for (int32_t Step = 0; Step < B.steps(); ++Step)
        for (const Run &R : B.Body)
          Code += callText(P, R, Step, Uses);
      continue;
    }
    std::string Body;
    for (const Run &R : B.Body)
      Body += callText(P, R, std::nullopt, Uses);
    Code += "for (int " + Var + " = 0; " + Var + " < " + std::to_string(B.steps()) + "; ++" + Var +
            ")" + (B.Body.size() > 1 ? " {\n" + Body + "}\n" : "\n" + Body);
  }
  return Code;
}

std::string KernelWriter::roundFunction(size_t P) {
  const ChannelProgram &Program = K.Programs[P];
  BodyUses Uses;
  std::string Body;
  if (Program.Classes.size() == 1) {
    Body = classCode(P, Program.Classes[0], Uses);
  } else {
    Uses.Rank = true;
    Body = "switch (RankClass" + std::to_string(P) + "[Rank]) {\n";
    for (size_t C = 0; C < Program.Classes.size(); ++C)
      Body += "case " + std::to_string(C) + ": // " + rankList(Program.Classes[C].Ranks) + "\n" +
              classCode(P, Program.Classes[C], Uses) + "break;\n";
    Body += "}\n";
  }
  std::vector<std::string> Names;
  for (int32_t H : Program.Channels)
    Names.push_back(std::to_string(H));
  bool Several = Program.Channels.size() > 1;
  std::ostringstream OS;
  OS << "/// One round of channel" << (Several ? "s " : " ") << join(Names, ", ") << ".\n"
     << "template <class T, class Op>\n"
     << Syntax.Device << "void channelRound" << P << "(const " << Syntax.Namespace
     << "::KernelArgs &Args" << (Several ? ", int Channel" : "")
     << ", const kern::Layout &Grid) {\n";
  if (Uses.Rank)
    OS << "const int Rank = Args.Rank;\n";
  for (uint8_t Var : Uses.Numberings) {
    const Numbering &N = Program.Numberings[Var];
    OS << "const int " << N.Var << " = " << N.OfTable << "[Rank];\n";
  }
  for (sched::BufferKind Buf :
       {sched::BufferKind::Input, sched::BufferKind::Output, sched::BufferKind::Scratch})
    for (bool Src : {true, false}) {
      if (!(Src ? Uses.Read : Uses.Written)[size_t(Buf)])
        continue;
      std::string Base(sched::bufferName(Buf));
      Base[0] = char(std::toupper(Base[0]));
      std::string Type = Src ? "const T" : "T";
      OS << "auto " << sliceMaker(Buf, Src) << " = [&](int Chunk, int Count) {\n"
         << "return " << Syntax.Namespace << "::Slice<" << Type << ">{static_cast<" << Type
         << " *>(Args." << Base << "), &Grid, " << S.Units.of(Buf) << ", Chunk, Count};\n};\n";
    }
  OS << Body << "}\n\n";
  return OS.str();
}

/// runChannel<T, Op>(Args, Channel): each round, the channel's program. The
/// rounds' bodies are functions of their own rather than the lambda's, which
/// keeps formatting fast: clang-format lays out a lambda argument together
/// with the call around it.
std::string KernelWriter::dispatchFunction() const {
  std::ostringstream OS;
  OS << "template <class T, class Op>\n"
     << Syntax.Device << "void runChannel(const " << Syntax.Namespace
     << "::KernelArgs &Args, int Channel) {\n"
     << Syntax.Namespace << "::forEachRound<T>(Args, Shape, [&](const kern::Layout &Grid) {\n"
     << "switch (Channel) {\n";
  for (size_t P = 0; P < K.Programs.size(); ++P) {
    for (int32_t H : K.Programs[P].Channels)
      OS << "case " << H << ":\n";
    OS << "channelRound" << P << "<T, Op>(Args"
       << (K.Programs[P].Channels.size() > 1 ? ", Channel" : "") << ", Grid);\nbreak;\n";
  }
  OS << "}\n});\n}\n\n";
  return OS.str();
}

std::string KernelWriter::entryPoints() const {
  std::ostringstream OS;
  std::string Ns = Syntax.Namespace;
  std::vector<std::string> Infos;
  for (plan::DType T : Opts.Types)
    for (plan::RedOp Op : Opts.Ops) {
      std::string Entry = entryName(T, Op);
      std::string OpType = OpTypes[size_t(Op)];
      std::string Instance = "<" + typeOf(T) + ", " + Ns + "::" + OpType + ">";
      bool Cuda = Opts.Target == KernelTarget::Cuda;
      if (Cuda)
        OS << "__global__ void __launch_bounds__(" << Opts.BlockThreads << ") " << Entry
           << "_kernel(cuda::KernelArgs Args) {\n"
           << "runChannel" << Instance << "(Args, int(blockIdx.x));\n}\n\n";
      else
        OS << "void " << Entry << "(const host::KernelArgs &Args, int Channel) {\n"
           << "runChannel" << Instance << "(Args, Channel);\n}\n\n";
      OS << "constexpr " << Ns << "::KernelInfo " << Entry << "_info = {\n"
         << ".Algorithm = \"" << S.Algorithm << "\",\n"
         << ".Collective = \"" << plan::collectiveName(S.Collective) << "\",\n"
         << ".NRanks = " << S.NRanks << ",\n"
         << ".Root = " << S.Root << ",\n"
         << ".Shape = Shape,\n"
         << ".InputUnits = " << S.Units.Input << ",\n"
         << ".OutputUnits = " << S.Units.Output << ",\n"
         << ".ScratchUnits = " << K.ScratchUnits << ",\n"
         << ".Type = " << Ns << "::DType::" << TypeSpellings[size_t(T)].Enum << ",\n"
         << ".Op = " << Ns << "::RedOp::" << OpType << ",\n"
         << ".MinBytes = " << Opts.Info.MinBytes << ",\n"
         << ".MaxBytes = " << Opts.Info.MaxBytes.value_or(0) << ",\n";
      if (Cuda)
        OS << ".BlockThreads = " << Opts.BlockThreads << ",\n"
           << ".Run = " << Entry << "_kernel,\n};\n\n"
           << "cudaError_t " << Entry
           << "(const cuda::KernelArgs &Args, cudaStream_t Stream, std::string &Why) {\n"
           << "return cuda::launch(" << Entry << "_info, Args, Stream, Why);\n}\n\n";
      else
        OS << ".Run = " << Entry << ",\n};\n\n";
      Infos.push_back(Entry + "_info");
    }
  OS << "const " << Ns << "::KernelInfo " << S.Algorithm << "_kernels[" << Infos.size() << "] = {"
     << join(Infos, ", ") << "};\n";
  return OS.str();
}

std::string KernelWriter::source() {
  size_t Tables = 0;
  for (const ChannelProgram &Program : K.Programs) {
    TableBase.push_back(Tables);
    Tables += Program.Tables.size();
  }
  std::string Programs;
  for (size_t P = 0; P < K.Programs.size(); ++P)
    Programs += roundFunction(P);

  std::ostringstream OS;
  OS << banner(Opts.Stem + Syntax.SourceExt) << "\n#include \"" << Opts.Stem << Syntax.HeaderExt
     << "\"\n\n";
  for (const std::string &Include : Catalog.includes())
    OS << "#include \"" << Include << "\"\n";
  OS << "\nnamespace cclc::gen {\nnamespace {\n\n"
     << constants() << "\n"
     << Programs << dispatchFunction() << "} // namespace\n\n"
     << entryPoints() << "\n} // namespace cclc::gen\n";
  if (Opts.Target == KernelTarget::Host)
    OS << "\nconst cclc::host::KernelTable " << cTableName() << " = {cclc::gen::" << S.Algorithm
       << "_kernels, " << Opts.Types.size() * Opts.Ops.size() << "};\n";
  return OS.str();
}

std::optional<std::vector<GeneratedFile>> KernelWriter::write() {
  std::string Source = source();
  if (Failed)
    return std::nullopt;
  return std::vector<GeneratedFile>{
      {Opts.Stem + Syntax.HeaderExt, formatCode(header(), Opts.Target)},
      {Opts.Stem + Syntax.SourceExt, formatCode(std::move(Source), Opts.Target)}};
}

} // namespace

std::string kernelStem(std::string_view File) {
  std::string Name = std::filesystem::path(File).filename().string();
  return Name.substr(0, Name.find('.'));
}

std::optional<std::vector<GeneratedFile>> emitKernels(const sched::Schedule &S,
                                                      const TemplateCatalog &Catalog,
                                                      const KernelEmitOptions &Opts,
                                                      DiagnosticEngine &Diags) {
  return KernelWriter(S, analyzeKernel(S), Catalog, Opts, Diags).write();
}

} // namespace cclc::codegen
