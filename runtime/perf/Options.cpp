//===- Options.cpp - cclc-perf's command line -----------------------------===//

#include "runtime/perf/Options.h"
#include "runtime/perf/LocalRanks.h"
#include "runtime/api/Types.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

namespace cclc::perf {

namespace {

using plan::CollectiveKind;

/// nccl-tests' names of the types, printed in rows; -d also takes cclc's
/// (plan::dtypeName).
struct TypeName {
  cclcDataType_t Type;
  const char *Label;
};
constexpr TypeName TypeNames[] = {
    {cclcInt8, "int8"},       {cclcUint8, "uint8"},   {cclcInt32, "int32"},
    {cclcUint32, "uint32"},   {cclcInt64, "int64"},   {cclcUint64, "uint64"},
    {cclcFloat16, "half"},    {cclcFloat32, "float"}, {cclcFloat64, "double"},
    {cclcBfloat16, "bfloat16"},
};

struct CollectiveName {
  CollectiveKind Kind;
  const char *Label;
};
constexpr CollectiveName CollectiveNames[] = {
    {CollectiveKind::AllReduce, "allreduce"},
    {CollectiveKind::AllGather, "allgather"},
    {CollectiveKind::ReduceScatter, "reducescatter"},
    {CollectiveKind::Broadcast, "broadcast"},
    {CollectiveKind::Reduce, "reduce"},
    {CollectiveKind::AllToAll, "alltoall"},
};
/// nccl-tests' sendrecv, which is no plan::CollectiveKind.
constexpr const char *SendRecvLabel = "sendrecv";

const char *Usage =
    "usage: cclc-perf <allreduce|allgather|reducescatter|broadcast|reduce|alltoall|sendrecv|all>\n"
    "                 [options]\n"
    "  -b, --minbytes N      smallest size (K, M, G suffixes; default 32M)\n"
    "  -e, --maxbytes N      largest size (default 32M)\n"
    "  -i, --stepbytes N     grow sizes by N bytes (default 1M)\n"
    "  -f, --stepfactor N    grow sizes by a factor N instead\n"
    "  -n, --iters N         timed iterations per size (default 20)\n"
    "  -w, --warmup_iters N  untimed iterations first (default 5)\n"
    "  -c, --check 0|1       check every element of the results (default 1)\n"
    "  -d, --datatype T      int8 uint8 int32 uint32 int64 uint64 half float double\n"
    "                        bfloat16 (or f32, bf16, ...), or all (default float)\n"
    "  -o, --op OP           sum prod max min, or all (default sum)\n"
    "  -r, --root N          root of broadcast and reduce (default 0)\n"
    "  -R, --registered 0|1  host buffers from cclcMemAlloc, which the ranks of a host\n"
    "                        map to copy large messages into (default 0: malloc)\n"
    "  -np N                 fork N ranks on this host; without it, join the job of a\n"
    "                        launcher (mpirun, srun, torchrun)\n"
    "  --plan FILE           load a plan (cclc compile --emit=json) on every rank; repeat\n"
    "                        for more\n"
    "  --kernels LIB:ALGO    register the host kernels of algorithm ALGO (cclc compile\n"
    "                        --emit=host) from shared library LIB on every rank; repeat\n"
    "                        for more\n"
    "  --gpu                 buffers in GPU memory, calls on a CUDA stream; a rank uses\n"
    "                        the GPU of its local rank modulo the host's GPU count\n"
    "  -G, --cudagraph N     with --gpu, capture each timed loop in a CUDA graph and\n"
    "                        launch it N times (default 0: no graphs)\n"
    "  --gpu-probe           list the CUDA devices, or say why there are none (exit\n"
    "                        status 1), and run nothing\n";

/// "32M" -> 33554432.
uint64_t parseSize(const std::string &Option, const std::string &Text) {
  char *End = nullptr;
  unsigned long long Value = std::strtoull(Text.c_str(), &End, 10);
  uint64_t Scale = 1;
  if (End != Text.c_str() && *End) {
    switch (*End) {
    case 'K':
    case 'k': Scale = uint64_t(1) << 10; break;
    case 'M':
    case 'm': Scale = uint64_t(1) << 20; break;
    case 'G':
    case 'g': Scale = uint64_t(1) << 30; break;
    default: Scale = 0;
    }
    ++End;
  }
  if (End == Text.c_str() || *End || Scale == 0 || Text[0] == '-')
    throw std::invalid_argument(Option + " takes a size such as 8, 64K or 128M, not '" + Text +
                                "'");
  return uint64_t(Value) * Scale;
}

int parseInt(const std::string &Option, const std::string &Text, int Min) {
  char *End = nullptr;
  long Value = std::strtol(Text.c_str(), &End, 10);
  if (End == Text.c_str() || *End || Value < Min || Value > (1 << 30))
    throw std::invalid_argument(Option + " takes an integer of at least " + std::to_string(Min) +
                                ", not '" + Text + "'");
  return int(Value);
}

std::vector<cclcDataType_t> parseTypes(const std::string &Text) {
  std::vector<cclcDataType_t> Types;
  for (const TypeName &T : TypeNames)
    if (Text == "all" || Text == T.Label || Text == plan::dtypeName(runtime::hostType(T.Type)))
      Types.push_back(T.Type);
  if (Types.empty())
    throw std::invalid_argument("-d takes int8, uint8, int32, uint32, int64, uint64, half, "
                                "float, double, bfloat16 or all, not '" +
                                Text + "'");
  return Types;
}

std::vector<cclcRedOp_t> parseOps(const std::string &Text) {
  std::vector<cclcRedOp_t> Ops;
  for (int Op = 0; Op < cclcNumOps; ++Op)
    if (Text == "all" || Text == opLabel(cclcRedOp_t(Op)))
      Ops.push_back(cclcRedOp_t(Op));
  if (Ops.empty())
    throw std::invalid_argument("-o takes sum, prod, max, min or all, not '" + Text + "'");
  return Ops;
}

/// Sets Opts' collectives and sendrecv to what Text names.
void parseCollectives(const std::string &Text, Options &Opts) {
  for (const CollectiveName &C : CollectiveNames)
    if (Text == "all" || Text == C.Label)
      Opts.Collectives.push_back(C.Kind);
  Opts.SendRecv = Text == "all" || Text == SendRecvLabel;
  if (Opts.Collectives.empty() && !Opts.SendRecv)
    throw std::invalid_argument("unknown collective '" + Text +
                                "': give allreduce, allgather, reducescatter, broadcast, "
                                "reduce, alltoall, sendrecv or all");
}

} // namespace

std::optional<Options> parseOptions(const std::vector<std::string> &Args, int &Exit) {
  Options Opts;
  try {
    for (size_t I = 0; I < Args.size(); ++I) {
      const std::string &A = Args[I];
      if (A == "-h" || A == "--help") {
        std::fputs(Usage, stdout);
        Exit = 0;
        return std::nullopt;
      }
      if (A == "--gpu") {
        Opts.Gpu = true;
        continue;
      }
      if (A == "--gpu-probe") {
        Opts.GpuProbe = true;
        continue;
      }
      if (A.empty() || A[0] != '-') {
        if (!Opts.Collectives.empty() || Opts.SendRecv)
          throw std::invalid_argument("unexpected argument '" + A + "'");
        parseCollectives(A, Opts);
        continue;
      }
      if (I + 1 == Args.size())
        throw std::invalid_argument(A + " needs a value");
      const std::string &V = Args[++I];
      if (A == "-b" || A == "--minbytes")
        Opts.MinBytes = parseSize(A, V);
      else if (A == "-e" || A == "--maxbytes")
        Opts.MaxBytes = parseSize(A, V);
      else if (A == "-i" || A == "--stepbytes") {
        // As in nccl-tests, the last of -i and -f decides how sizes grow.
        Opts.StepBytes = parseSize(A, V);
        Opts.StepFactor = 1;
      } else if (A == "-f" || A == "--stepfactor")
        Opts.StepFactor = uint64_t(parseInt(A, V, 1));
      else if (A == "-n" || A == "--iters")
        Opts.Iters = parseInt(A, V, 1);
      else if (A == "-w" || A == "--warmup_iters")
        Opts.Warmup = parseInt(A, V, 0);
      else if (A == "-c" || A == "--check")
        Opts.Check = parseInt(A, V, 0) != 0;
      else if (A == "-d" || A == "--datatype")
        Opts.Types = parseTypes(V);
      else if (A == "-o" || A == "--op")
        Opts.Ops = parseOps(V);
      else if (A == "-r" || A == "--root")
        Opts.Root = parseInt(A, V, 0);
      else if (A == "-R" || A == "--registered")
        Opts.Registered = parseInt(A, V, 0) != 0;
      else if (A == "-np") {
        Opts.NRanks = parseInt(A, V, 1);
        if (Opts.NRanks > MaxLocalRanks)
          throw std::invalid_argument("-np takes at most " + std::to_string(MaxLocalRanks) +
                                      " ranks on this host, not " + V);
      }
      else if (A == "--plan")
        Opts.Plans.push_back(V);
      else if (A == "--kernels") {
        size_t Colon = V.rfind(':');
        if (Colon == std::string::npos || Colon == 0 || Colon + 1 == V.size())
          throw std::invalid_argument("--kernels takes LIBRARY:ALGORITHM, such as "
                                      "./libring.so:ring_allreduce, not '" + V + "'");
        Opts.Kernels.push_back(V);
      }
      else if (A == "-G" || A == "--cudagraph")
        Opts.GraphLaunches = parseInt(A, V, 0);
      else
        throw std::invalid_argument("unknown option " + A);
    }
    if (Opts.GpuProbe)
      return Opts;
    if (Opts.Collectives.empty() && !Opts.SendRecv)
      throw std::invalid_argument("no collective given");
    if (Opts.Registered && Opts.Gpu)
      throw std::invalid_argument("-R 1 gives host buffers; it does not go with --gpu");
    if (Opts.GraphLaunches && !Opts.Gpu)
      throw std::invalid_argument("-G captures calls on a GPU's stream; give --gpu too");
    if (Opts.MinBytes > Opts.MaxBytes)
      throw std::invalid_argument("-b is larger than -e");
    if (Opts.StepFactor == 1 && Opts.StepBytes == 0)
      throw std::invalid_argument("-i 0 would never reach -e; give a positive step");
  } catch (const std::invalid_argument &E) {
    std::fprintf(stderr, "cclc-perf: %s\n%s", E.what(), Usage);
    Exit = 2;
    return std::nullopt;
  }
  return Opts;
}

const char *typeLabel(cclcDataType_t Type) {
  for (const TypeName &T : TypeNames)
    if (T.Type == Type)
      return T.Label;
  return "?";
}

const char *opLabel(cclcRedOp_t Op) { return plan::redOpName(runtime::hostOp(Op)).data(); }

const char *callLabel(const Call &C) {
  if (C.SendRecv)
    return SendRecvLabel;
  for (const CollectiveName &Name : CollectiveNames)
    if (Name.Kind == C.Collective)
      return Name.Label;
  return "?";
}

} // namespace cclc::perf
