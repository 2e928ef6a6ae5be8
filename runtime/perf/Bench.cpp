//===- Bench.cpp - One rank's measurements --------------------------------===//

#include "runtime/perf/Bench.h"
#include "runtime/perf/Calls.h"
#include "runtime/perf/LocalRanks.h"
#include "runtime/perf/Memory.h"
#include "runtime/perf/Report.h"

#include "runtime/api/Comm.h"
#include "runtime/api/Types.h"
#include "runtime/exec/Interpreter.h"

#include "host/Kernel.h"

#include "plan/Diagnostics.h"
#include "plan/PlanJson.h"

#include <chrono>
#include <dlfcn.h>
#include <cstdio>
#include <cstring>
#include <algorithm>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <unistd.h>

namespace cclc::perf {

namespace {

using plan::CollectiveKind;

size_t typeBytes(cclcDataType_t Type) { return plan::dtypeBytes(runtime::hostType(Type)); }

class Bench {
public:
  /// Mem receives the rank's memory, so that it outlives a failure of the
  /// benchmark: device buffers must stay until the communicator has stopped
  /// the kernels that may still use them.
  Bench(const Options &Opts, cclcComm_t Comm, std::unique_ptr<Memory> &Mem)
      : Opts(Opts), Comm(Comm), Mem(Mem), Print(Opts, stdout) {
    check(cclcCommUserRank(Comm, &Rank), "cclcCommUserRank");
    check(cclcCommCount(Comm, &NRanks), "cclcCommCount");
  }

  int run() {
    std::vector<Identity> Ids = allGather(identity());
    std::vector<std::string> Devices = openMemory(Ids);
    for (const std::string &Plan : Opts.Plans) {
      check(cclcCommLoadPlan(Comm, Plan.c_str()), "loading plan " + Plan);
      requireMeasured(planCollective(Plan), "plan " + Plan);
    }
    for (const std::string &Kernels : Opts.Kernels)
      registerKernels(Kernels);
    if (Rank == 0) {
      std::vector<RankInfo> Ranks;
      for (size_t R = 0; R < Ids.size(); ++R)
        Ranks.push_back({Ids[R].Pid,
                         std::string(Ids[R].Host, strnlen(Ids[R].Host, sizeof Ids[R].Host)),
                         Devices[R]});
      Print.header(Ranks);
    }
    std::vector<Call> Tables;
    for (CollectiveKind Collective : Opts.Collectives)
      Tables.push_back({Collective, cclcFloat32, cclcSum, Opts.Root});
    if (Opts.SendRecv)
      Tables.push_back({CollectiveKind::AllReduce, cclcFloat32, cclcSum, 0, 0, /*SendRecv=*/true});
    for (Call C : Tables) {
      if (Rank == 0)
        Print.columns(C);
      std::vector<cclcRedOp_t> Ops = reduces(C) ? Opts.Ops : std::vector<cclcRedOp_t>{cclcSum};
      for (cclcDataType_t Type : Opts.Types)
        for (cclcRedOp_t Op : Ops)
          for (uint64_t Bytes = Opts.MinBytes; Bytes <= Opts.MaxBytes;
               Bytes = Opts.StepFactor > 1 ? Bytes * Opts.StepFactor : Bytes + Opts.StepBytes) {
            C.Type = Type;
            C.Op = Op;
            measureSize(C, Bytes);
            if (Bytes == 0 && Opts.StepFactor > 1)
              break;
          }
    }
    if (Rank == 0)
      Print.footer();
    return Print.wrong() || Wrong ? 1 : 0;
  }

private:
  /// A rank's process and host, as every rank learns them.
  struct Identity {
    int32_t Pid;
    char Host[60];
  };

  Identity identity() const {
    Identity Mine{int32_t(::getpid()), {}};
    ::gethostname(Mine.Host, sizeof Mine.Host - 1);
    return Mine;
  }

  /// Every rank's Mine, in rank order. The ranks agree on what they print
  /// and time through the bootstrap, not a collective, so that the calls
  /// measured are the only ones that choose an algorithm (or warn that they
  /// fall back).
  template <class T> std::vector<T> allGather(const T &Mine) {
    std::vector<T> All(static_cast<size_t>(NRanks));
    All[size_t(Rank)] = Mine;
    Comm->allGatherOutOfBand(All.data(), sizeof Mine);
    return All;
  }

  /// The sum over the ranks of V.
  template <class T> T sumOverRanks(T V) {
    T Sum{};
    for (T Each : allGather(V))
      Sum += Each;
    return Sum;
  }

  /// The collective of plan Path, which the runtime has loaded.
  static CollectiveKind planCollective(const std::string &Path) {
    SourceManager SM;
    std::string Why;
    std::ostringstream Log;
    DiagnosticEngine Diags(SM, Log);
    std::optional<uint32_t> File = SM.loadFile(Path, Why);
    std::optional<plan::Plan> Plan = File ? plan::readPlanFile(*File, SM, Diags) : std::nullopt;
    if (!Plan)
      throw std::runtime_error("plan " + Path + " cannot be read again: " + Why + Log.str());
    return Plan->Sched.Collective;
  }

  /// Refuses What (a plan or kernels of Collective) when no measured call
  /// can run it: the calls would fall back on the library's ring while the
  /// header named it. Every rank loads the same ones, so every rank refuses.
  void requireMeasured(CollectiveKind Collective, const std::string &What) const {
    const std::string Name = callLabel(Call{Collective});
    if (std::find(Opts.Collectives.begin(), Opts.Collectives.end(), Collective) ==
        Opts.Collectives.end())
      throw std::runtime_error(What + " is for " + Name + ", which no call measured here runs; "
                               "give " + Name + " (or all) as the collective to measure it");
  }

  /// Registers the generated host kernels that Spec, "LIBRARY:ALGORITHM",
  /// names. The library stays loaded until the process ends, since the
  /// communicator calls its kernels until it is destroyed.
  void registerKernels(const std::string &Spec) {
    const size_t Colon = Spec.rfind(':');
    const std::string Library = Spec.substr(0, Colon), Algorithm = Spec.substr(Colon + 1);
    void *Handle = ::dlopen(Library.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!Handle)
      throw std::runtime_error("cannot load kernels from " + Library + ": " + ::dlerror());
    const std::string Symbol = "cclc_host_kernels_" + Algorithm;
    const auto *Table = static_cast<const host::KernelTable *>(::dlsym(Handle, Symbol.c_str()));
    if (!Table)
      throw std::runtime_error(Library + " holds no kernels of algorithm " + Algorithm + " (no " +
                               Symbol + "); build it from the .cpp that cclc compile " +
                               "--emit=host generated for " + Algorithm);
    const std::string What = "kernels " + Spec;
    check(cclcCommRegisterKernels(Comm, Table->Kernels, Table->Count), "registering " + What);
    if (Table->Count)
      requireMeasured(*plan::parseCollective(Table->Kernels[0].Collective), What);
  }

  /// Opens the rank's memory: on GPUs, device (local rank) modulo the GPUs
  /// of the host, where the local rank counts the ranks before this one on
  /// its host, as nccl-tests counts them. Returns every rank's device for the
  /// header. Every rank fails when one cannot open its memory, so that none
  /// waits in a later call for a rank that gave up.
  std::vector<std::string> openMemory(const std::vector<Identity> &Ids) {
    std::string Why;
    try {
      if (!Opts.Gpu)
        Mem = makeHostMemory(Opts.MaxBytes, Opts.Registered);
      else {
        int LocalRank = 0;
        for (int R = 0; R < Rank; ++R)
          LocalRank += std::strncmp(Ids[size_t(R)].Host, Ids[size_t(Rank)].Host,
                                    sizeof(Identity::Host)) == 0;
        Mem = makeDeviceMemory(Opts.MaxBytes, LocalRank, Opts.GraphLaunches, Comm);
      }
    } catch (const std::exception &E) {
      Why = E.what();
    }
    /// The device, or why there is none.
    struct Placed {
      int32_t Failed;
      char Text[124];
    } Mine{!Mem, {}};
    (Mem ? Mem->describe() : Why).copy(Mine.Text, sizeof Mine.Text - 1);
    std::vector<Placed> All = allGather(Mine);
    if (!Mem)
      throw std::runtime_error(Why);
    std::vector<std::string> Devices;
    for (size_t R = 0; R < All.size(); ++R) {
      if (All[R].Failed)
        throw std::runtime_error("rank " + std::to_string(R) +
                                 " could not place its buffers: " + All[R].Text);
      Devices.push_back(All[R].Text);
    }
    return Devices;
  }

  Measurement measure(const Call &C, bool InPlace) {
    CallBuffers B = placeBuffers(C, Rank, InPlace, Mem->send(), Mem->recv());
    Extents E = extents(C, NRanks);
    auto Fill = [&](void *Input) { fillInput(C, Rank, NRanks, Input); };
    std::string What = std::string(callLabel(C)) + " of " + std::to_string(C.Count) + " " +
                       typeLabel(C.Type) + (InPlace ? " in place" : " out of place");
    auto Invoke = [&] { check(invoke(C, B.Send, B.Recv, Comm, Mem->stream()), What); };

    Mem->write(B.Input, E.Send * typeBytes(C.Type), Fill);
    for (int I = 0; I < Opts.Warmup; ++I)
      Invoke();
    Mem->wait(What);
    Batch Timed = Mem->batch(Opts.Iters, Invoke);
    sumOverRanks<int32_t>(0); // Start the timed loops together.
    auto Start = std::chrono::steady_clock::now();
    Timed.Run();
    Mem->wait(What);
    std::chrono::duration<double> Took = std::chrono::steady_clock::now() - Start;
    Measurement M;
    M.Seconds = sumOverRanks<double>(Took.count() / Timed.Calls) / NRanks;
    if (Opts.Check && (!InPlace || definedInPlace(C))) {
      // Output the call leaves alone keeps bits no result has (NaN, -1,
      // 255), so a call that did nothing fails the check rather than
      // passing on the timed calls' results.
      size_t RecvBytes = E.Recv * typeBytes(C.Type);
      Mem->write(B.Recv, RecvBytes, [&](void *Out) { std::memset(Out, 0xff, RecvBytes); });
      Mem->write(B.Input, E.Send * typeBytes(C.Type), Fill);
      Invoke();
      Mem->wait(What);
      uint64_t Mine = Mem->read(
          B.Recv, RecvBytes, [&](const void *Recv) { return countWrong(C, Rank, NRanks, Recv); });
      if (Mine)
        Wrong = true;
      M.Wrong = sumOverRanks<uint64_t>(Mine);
    }
    return M;
  }

  /// Measures C, whose count is set here, on Bytes as nccl-tests counts
  /// them: the larger buffer.
  void measureSize(Call C, uint64_t Bytes) {
    CollectiveKind Collective = C.Collective;
    bool Shared = !C.SendRecv && (Collective == CollectiveKind::AllGather ||
                                  Collective == CollectiveKind::ReduceScatter ||
                                  Collective == CollectiveKind::AllToAll);
    C.Count = size_t(Bytes) / typeBytes(C.Type) / (Shared ? size_t(NRanks) : 1);
    Measurement OutOfPlace = measure(C, false);
    Measurement InPlace = measure(C, true);
    uint64_t Count = C.Count * (Shared ? size_t(NRanks) : 1);
    if (Rank == 0)
      Print.row(C, NRanks, Count * typeBytes(C.Type), Count, OutOfPlace, InPlace);
  }

  const Options &Opts;
  cclcComm_t Comm;
  std::unique_ptr<Memory> &Mem;
  Report Print;
  int Rank = 0;
  int NRanks = 1;
  /// Whether this rank saw a wrong element.
  bool Wrong = false;
};

} // namespace

int runBenchmarks(const Options &Opts, cclcComm_t Comm) {
  int Rank = 0;
  cclcCommUserRank(Comm, &Rank);
  std::unique_ptr<Memory> Mem;
  try {
    int Code = Bench(Opts, Comm, Mem).run();
    check(cclcCommDestroy(Comm), "cclcCommDestroy");
    return Code;
  } catch (const std::runtime_error &E) {
    printWhole("cclc-perf: rank " + std::to_string(Rank) + ": " + E.what());
    // Stops the kernels of a failed call before their buffers are freed.
    cclcCommAbort(Comm);
    return 1;
  }
}

} // namespace cclc::perf
