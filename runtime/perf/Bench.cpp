//===- Bench.cpp - One rank's measurements --------------------------------===//

#include "runtime/perf/Bench.h"
#include "runtime/perf/Calls.h"
#include "runtime/perf/Report.h"

#include "runtime/api/Types.h"
#include "runtime/exec/Interpreter.h"

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <unistd.h>

namespace cclc::perf {

namespace {

using dsl::CollectiveKind;

void check(cclcResult_t Result, const std::string &What) {
  if (Result != cclcSuccess)
    throw std::runtime_error(What + " failed: " + cclcGetErrorString(Result) + "\n  " +
                             cclcGetLastError(nullptr));
}

size_t typeBytes(cclcDataType_t Type) { return exec::dtypeBytes(runtime::hostType(Type)); }

struct FreeDeleter {
  void operator()(void *P) const { std::free(P); }
};
using Buffer = std::unique_ptr<std::byte, FreeDeleter>;

Buffer allocate(size_t Bytes) {
  Buffer B(static_cast<std::byte *>(std::aligned_alloc(64, (Bytes + 64) / 64 * 64)));
  if (!B)
    throw std::runtime_error("cannot allocate " + std::to_string(Bytes) + " bytes");
  return B;
}

class Bench {
public:
  Bench(const Options &Opts, cclcComm_t Comm) : Opts(Opts), Comm(Comm), Print(Opts, stdout) {
    check(cclcCommUserRank(Comm, &Rank), "cclcCommUserRank");
    check(cclcCommCount(Comm, &NRanks), "cclcCommCount");
    // nccl-tests' sizes bound the larger buffer, which is never above -e.
    Send = allocate(Opts.MaxBytes);
    Recv = allocate(Opts.MaxBytes);
  }

  int run() {
    for (const std::string &Plan : Opts.Plans)
      check(cclcCommLoadPlan(Comm, Plan.c_str()), "loading plan " + Plan);
    std::vector<RankInfo> Ranks = gatherRanks();
    if (Rank == 0)
      Print.header(Ranks);
    for (CollectiveKind Collective : Opts.Collectives) {
      if (Rank == 0)
        Print.columns(Collective);
      bool Reduces = runtime::reduces(Collective);
      std::vector<cclcRedOp_t> Ops = Reduces ? Opts.Ops : std::vector<cclcRedOp_t>{cclcSum};
      for (cclcDataType_t Type : Opts.Types)
        for (cclcRedOp_t Op : Ops)
          for (uint64_t Bytes = Opts.MinBytes; Bytes <= Opts.MaxBytes;
               Bytes = Opts.StepFactor > 1 ? Bytes * Opts.StepFactor : Bytes + Opts.StepBytes) {
            measureSize(Collective, Type, Reduces ? opLabel(Op) : "none", Op, Bytes);
            if (Bytes == 0 && Opts.StepFactor > 1)
              break;
          }
    }
    if (Rank == 0)
      Print.footer();
    return Print.wrong() || Wrong ? 1 : 0;
  }

private:
  /// Every rank's pid and host, for the header: an allgather of bytes.
  std::vector<RankInfo> gatherRanks() {
    struct Entry {
      int32_t Pid;
      char Host[60];
    } Mine{int32_t(::getpid()), {}};
    ::gethostname(Mine.Host, sizeof Mine.Host - 1);
    std::vector<Entry> All(static_cast<size_t>(NRanks));
    check(cclcAllGather(&Mine, All.data(), sizeof Mine, cclcUint8, Comm, nullptr),
          "gathering the ranks' hosts");
    std::vector<RankInfo> Ranks;
    for (const Entry &E : All)
      Ranks.push_back({E.Pid, std::string(E.Host, strnlen(E.Host, sizeof E.Host))});
    return Ranks;
  }

  /// The sum over the ranks of V, through an allreduce.
  template <class T> T sumOverRanks(T V, cclcDataType_t Type) {
    T Sum{};
    check(cclcAllReduce(&V, &Sum, 1, Type, cclcSum, Comm, nullptr), "summing over the ranks");
    return Sum;
  }

  Measurement measure(const Call &C, bool InPlace) {
    CallBuffers B = placeBuffers(C, Rank, InPlace, Send.get(), Recv.get());
    fillInput(C, Rank, NRanks, B.Input);
    std::string What = std::string(collectiveLabel(C.Collective)) + " of " +
                       std::to_string(C.Count) + " " + typeLabel(C.Type) +
                       (InPlace ? " in place" : " out of place");
    for (int I = 0; I < Opts.Warmup; ++I)
      check(invoke(C, B.Send, B.Recv, Comm), What);
    sumOverRanks<int32_t>(0, cclcInt32); // Start the timed loops together.
    auto Start = std::chrono::steady_clock::now();
    for (int I = 0; I < Opts.Iters; ++I)
      check(invoke(C, B.Send, B.Recv, Comm), What);
    std::chrono::duration<double> Took = std::chrono::steady_clock::now() - Start;
    Measurement M;
    M.Seconds = sumOverRanks<double>(Took.count() / Opts.Iters, cclcFloat64) / NRanks;
    if (Opts.Check) {
      fillInput(C, Rank, NRanks, B.Input);
      check(invoke(C, B.Send, B.Recv, Comm), What);
      uint64_t Mine = countWrong(C, Rank, NRanks, B.Recv);
      if (Mine)
        Wrong = true;
      M.Wrong = sumOverRanks<uint64_t>(Mine, cclcUint64);
    }
    return M;
  }

  void measureSize(CollectiveKind Collective, cclcDataType_t Type, const char *OpLabel,
                   cclcRedOp_t Op, uint64_t Bytes) {
    bool Shared =
        Collective == CollectiveKind::AllGather || Collective == CollectiveKind::ReduceScatter;
    size_t PerRank = size_t(Bytes) / typeBytes(Type) / (Shared ? size_t(NRanks) : 1);
    bool Rooted = runtime::hasRoot(Collective);
    Call C{Collective, Type, Op, Opts.Root, PerRank};
    Measurement OutOfPlace = measure(C, false);
    Measurement InPlace = measure(C, true);
    uint64_t Count = PerRank * (Shared ? size_t(NRanks) : 1);
    if (Rank == 0)
      Print.row(Collective, NRanks, Count * typeBytes(Type), Count, Type, OpLabel,
                Rooted ? Opts.Root : -1, OutOfPlace, InPlace);
  }

  const Options &Opts;
  cclcComm_t Comm;
  Report Print;
  int Rank = 0;
  int NRanks = 1;
  Buffer Send, Recv;
  /// Whether this rank saw a wrong element.
  bool Wrong = false;
};

} // namespace

int runBenchmarks(const Options &Opts, cclcComm_t Comm) { return Bench(Opts, Comm).run(); }

} // namespace cclc::perf
