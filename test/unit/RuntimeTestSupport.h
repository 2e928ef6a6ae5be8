//===- RuntimeTestSupport.h - Jobs of forked ranks on the C API -*- C++ -*-===//
//
// The runtime's multi-process tests run each job as cclc-perf -np does: the
// test process forks the ranks, then starts the root and sends them its id.
// A rank checks its own results and ends with exit code 0; a failed check or
// call throws, and the rank prints why and exits with 1, which the test
// process reports. Plans are compiled in the test process, as
// `cclc compile --nranks N --emit=json` compiles them, and every rank loads
// the same text.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "NetTestSupport.h"

#include "runtime/api/cclc.h"
#include "runtime/perf/Calls.h"
#include "runtime/perf/LocalRanks.h"
#include "runtime/transport/shm/SharedBuffers.h"

#include "plan/PlanJson.h"
#include "compiler/Compile.h"
#include "dsl/Frontend.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>

#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace cclc::test {

/// Throws, ending the rank with a failure, unless Result is success.
inline void ok(cclcResult_t Result, const std::string &What) {
  if (Result != cclcSuccess)
    throw std::runtime_error(What + ": " + cclcGetErrorString(Result) + ": " +
                             cclcGetLastError(nullptr));
}

/// Throws, ending the rank with a failure, unless Holds.
inline void expect(bool Holds, const std::string &What) {
  if (!Holds)
    throw std::runtime_error("check failed: " + What);
}

/// Repeats Call until it fails, for at most 20 s, with rank Victim killed
/// KillAfter into the loop (when Rank is Victim); checks that the failure
/// came within KillAfter + Within and returns it.
inline cclcResult_t callUntilPeerDies(int Rank, int Victim, std::chrono::milliseconds KillAfter,
                                      std::chrono::milliseconds Within,
                                      const std::function<cclcResult_t()> &Call) {
  using Clock = std::chrono::steady_clock;
  if (Rank == Victim)
    std::thread([=] {
      std::this_thread::sleep_for(KillAfter);
      ::kill(::getpid(), SIGKILL);
    }).detach();
  Clock::time_point Start = Clock::now();
  cclcResult_t Result = cclcSuccess;
  while (Result == cclcSuccess && Clock::now() - Start < std::chrono::seconds(20))
    Result = Call();
  auto Took = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - Start);
  expect(Took < KillAfter + Within,
         "the error came after " + std::to_string(Took.count()) + " ms");
  return Result;
}

/// How a test compiles a plan.
struct PlanOptions {
  int Root = 0;
  /// Ring channels of the target: the first in rank order, the second
  /// reversed (so that ring algorithms run two channels over other links).
  int RingChannels = 1;
  /// The chunking pass's factor.
  int ChunksFactor = 1;
  /// Instantiate rank 0 alone where the algorithm rotates, as `cclc compile
  /// --emit=json` does: a ring's plan is then rank 0's program and a rotation.
  bool RankZeroOnly = false;
  /// How every step's messages travel.
  plan::Protocol Proto = plan::Protocol::Simple;
};

/// algorithms/<Name>.ccl compiled for NRanks ranks into a plan's JSON text;
/// empty when the algorithm does not fit NRanks (its requirements fail).
inline std::string compilePlan(const std::string &Name, int NRanks, const PlanOptions &Plan = {}) {
  SourceManager SM;
  std::ostringstream Log;
  DiagnosticEngine Diags(SM, Log);
  std::string Error;
  std::string File = std::string(CCLC_SOURCE_DIR) + "/algorithms/" + Name + ".ccl";
  std::optional<uint32_t> Id = SM.loadFile(File, Error);
  EXPECT_TRUE(Id) << Error;
  dsl::OperationCatalog Ops;
  std::unique_ptr<dsl::Algorithm> Algo = Id ? dsl::parseAndCheck(*Id, Ops, Diags) : nullptr;
  EXPECT_TRUE(Algo) << Log.str();
  if (!Algo)
    return {};
  target::Target Target = target::flatTarget(NRanks);
  if (Plan.RingChannels > 1)
    Target.Rings.emplace_back(Target.Rings[0].rbegin(), Target.Rings[0].rend());
  compiler::BuildOptions Options;
  Options.Root = Plan.Root;
  Options.Pipeline.ChunksFactor = Plan.ChunksFactor;
  Options.RankZeroOnly = Plan.RankZeroOnly;
  Options.Pipeline.Proto = Plan.Proto;
  std::ostream Discard(nullptr);
  std::optional<sched::Schedule> S =
      compiler::buildSchedule(*Algo, Target, Options, Discard, Diags);
  if (!S)
    return {};
  plan::PlanInfo Info;
  Info.Source = File;
  Info.SourceText = std::string(SM.getText(*Id));
  return plan::scheduleToPlan(*S, Info).dump(1);
}

/// A communicator of Control's ranks, joined through an id that rank 0
/// makes and broadcasts over Control (how NCCL applications use MPI).
inline cclcComm_t newComm(cclcComm_t Control) {
  int Rank = 0, NRanks = 0;
  ok(cclcCommUserRank(Control, &Rank), "cclcCommUserRank");
  ok(cclcCommCount(Control, &NRanks), "cclcCommCount");
  cclcUniqueId Id{};
  if (Rank == 0)
    ok(cclcGetUniqueId(&Id), "cclcGetUniqueId");
  ok(cclcBroadcast(&Id, &Id, sizeof Id, cclcUint8, 0, Control, nullptr), "broadcasting an id");
  cclcComm_t Comm = nullptr;
  ok(cclcCommInitRank(&Comm, NRanks, Id, Rank), "cclcCommInitRank");
  return Comm;
}

/// What a rank of a job does with its communicator.
using JobBody = std::function<void(cclcComm_t Comm, int Rank)>;

/// Whether runJob's ranks may make no memory file, as in a sandbox whose
/// seccomp policy refuses memfd_create: nothing can then be mapped by a
/// peer. Set before the ranks fork.
inline bool &withoutMemoryFiles() {
  static bool Without = false;
  return Without;
}

/// Makes every later memfd_create of this process (and of its children)
/// fail with EPERM, with a seccomp filter; false where none can be
/// installed.
inline bool refuseMemoryFiles() {
#if defined(__x86_64__)
  constexpr uint32_t Arch = AUDIT_ARCH_X86_64;
#elif defined(__aarch64__)
  constexpr uint32_t Arch = AUDIT_ARCH_AARCH64;
#else
  return false;
#endif
  sock_filter Filter[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, Arch, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_memfd_create, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA)),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  sock_fprog Program{static_cast<unsigned short>(std::size(Filter)), Filter};
  return ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 &&
         ::prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &Program) == 0;
}

/// Runs Body on NRanks forked ranks, each with a communicator of the job
/// that it destroys afterwards; expects every rank to succeed within Limit.
inline void runJob(int NRanks, const JobBody &Body,
                   std::chrono::seconds Limit = std::chrono::seconds(60)) {
  std::vector<int> Status = perf::runLocalRanks(
      NRanks,
      [&](int Rank, const cclcUniqueId &Id) {
        if (withoutMemoryFiles())
          expect(refuseMemoryFiles(), "refusing memfd_create with a seccomp filter");
        cclcComm_t Comm = nullptr;
        ok(cclcCommInitRank(&Comm, NRanks, Id, Rank), "cclcCommInitRank");
        Body(Comm, Rank);
        ok(cclcCommDestroy(Comm), "cclcCommDestroy");
        return 0;
      },
      Limit);
  for (int Rank = 0; Rank < NRanks; ++Rank)
    EXPECT_EQ(perf::describeStatus(Status[size_t(Rank)]), "exited with 0") << "rank " << Rank;
}

using net::test::ScopedEnv;

/// Whether the tests' buffers (TestBuffer) come from cclcMemAlloc, which
/// the ranks of a host map, rather than the heap. Set before the ranks fork.
inline bool &mappedBuffers() {
  static bool Mapped = false;
  return Mapped;
}

/// A test's buffer of Count elements of T, each Value: from cclcMemAlloc
/// where mappedBuffers() says so, else from the heap.
template <class T> class TestBuffer {
public:
  explicit TestBuffer(size_t Count, T Value = T()) : Count(Count), Mapped(mappedBuffers()) {
    void *P = nullptr;
    if (Mapped)
      ok(cclcMemAlloc(&P, std::max<size_t>(Count, 1) * sizeof(T)), "cclcMemAlloc");
    else
      P = ::operator new(std::max<size_t>(Count, 1) * sizeof(T));
    Data = static_cast<T *>(P);
    std::fill(Data, Data + Count, Value);
  }
  ~TestBuffer() {
    if (Mapped)
      cclcMemFree(Data);
    else
      ::operator delete(Data);
  }
  TestBuffer(const TestBuffer &) = delete;
  TestBuffer &operator=(const TestBuffer &) = delete;

  T *data() const { return Data; }
  size_t size() const { return Count; }
  T *begin() const { return Data; }
  T *end() const { return Data + Count; }

private:
  T *Data;
  size_t Count;
  bool Mapped;
};

/// How many of its peers' buffers from cclcMemAlloc (or the runtime's
/// workspaces, which are such buffers) this process maps: the mappings
/// /proc/self/maps names by those buffers' memory files that do not start
/// one of this process's own.
inline int peerBufferMappings() {
  FILE *Maps = std::fopen("/proc/self/maps", "r");
  int N = 0;
  char Line[512];
  while (Maps && std::fgets(Line, sizeof Line, Maps))
    if (std::strstr(Line, "/memfd:cclc-buffer-")) {
      const void *Start = reinterpret_cast<const void *>(std::strtoull(Line, nullptr, 16));
      N += !net::SharedBuffers::process().owns(Start);
    }
  if (Maps)
    std::fclose(Maps);
  return N;
}

/// A transport for a test's ranks, by name: "shm", "tcp",
/// "shm_single_copy", shared memory with every message of a collective that
/// lands in the receiver's buffer written there by the sender in one copy
/// (CCLC_SINGLE_COPY=1) rather than through a slot, "shm_mapped", the
/// same into buffers from cclcMemAlloc, which the sender maps, or
/// "shm_sandboxed", single copy in ranks that may make no memory file.
class ScopedTransport {
public:
  explicit ScopedTransport(const std::string &Name)
      : Transport("CCLC_TRANSPORT", Name.substr(0, Name.find('_'))),
        SingleCopy("CCLC_SINGLE_COPY", Name != "shm" && Name != "tcp"
                                           ? std::optional<std::string>("1")
                                           : std::nullopt),
        WasMapped(mappedBuffers()), WasWithout(withoutMemoryFiles()) {
    mappedBuffers() = Name == "shm_mapped";
    withoutMemoryFiles() = Name == "shm_sandboxed";
  }
  ~ScopedTransport() {
    mappedBuffers() = WasMapped;
    withoutMemoryFiles() = WasWithout;
  }

private:
  ScopedEnv Transport, SingleCopy;
  bool WasMapped, WasWithout;
};

/// Runs C out of place and in place on rank Rank of Comm with checked
/// inputs, throwing on a failed call or a wrong element.
inline void runChecked(cclcComm_t Comm, const perf::Call &C, int Rank, int NRanks) {
  perf::Extents E = perf::extents(C.Collective, C.Count, NRanks);
  size_t ElemBytes = 8; // the largest type: enough for any
  TestBuffer<std::byte> Send(E.Send * ElemBytes + 1), Recv(E.Recv * ElemBytes + 1);
  for (bool InPlace : {false, true}) {
    perf::CallBuffers B = perf::placeBuffers(C, Rank, InPlace, Send.data(), Recv.data());
    perf::fillInput(C, Rank, NRanks, B.Input);
    std::string What = std::string(plan::collectiveName(C.Collective)) + " of " +
                       std::to_string(C.Count) + " elements of type " +
                       std::to_string(int(C.Type)) + ", op " + std::to_string(int(C.Op)) +
                       ", root " + std::to_string(C.Root) + (InPlace ? ", in place" : "");
    ok(perf::invoke(C, B.Send, B.Recv, Comm), What);
    size_t Wrong = perf::countWrong(C, Rank, NRanks, B.Recv);
    expect(Wrong == 0,
           What + ": " + std::to_string(Wrong) + " wrong elements on rank " + std::to_string(Rank));
  }
}

} // namespace cclc::test
