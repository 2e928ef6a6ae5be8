//===- Loading.cpp - Plans and kernels loaded into a communicator ---------===//
//
// A plan is trusted no more than any input: it is read with every field
// checked, then proved again by the verifier, so that a plan edited by hand
// into something wrong is refused with the diagnostic instead of deadlocking
// or corrupting data at run time. A plan too large to prove at every rank's
// load (plan::RuntimeProofSteps) is read for this rank's program alone: its
// fields are still all checked, so it cannot reach outside its buffers, and
// a wrong schedule fails by timeout rather than by proof. Generated kernels carry their schedule's
// shape in their KernelInfo and are checked against the communicator, host
// and CUDA tables alike. Host kernels and plans connect their transports when
// they are loaded; the GPU's transports are connected at an algorithm's first
// GPU call.
//
//===----------------------------------------------------------------------===//

#include "runtime/api/Comm.h"
#include "runtime/api/Fallback.h"
#include "runtime/api/Gpu.h"
#include "runtime/api/Environment.h"
#include "runtime/api/Status.h"

#include "plan/CopyElision.h"
#include "plan/Verifier.h"

#include <algorithm>
#include <map>
#include <optional>
#include <sstream>

namespace cclc::runtime {

namespace {

std::string trimmed(std::string Text) {
  while (!Text.empty() && Text.back() == '\n')
    Text.pop_back();
  return Text;
}

bool sameLayout(const exec::ScheduleShape &A, const exec::ScheduleShape &B) {
  return A.Grid.NChannels == B.Grid.NChannels &&
         A.Grid.ChunksPerChannel == B.Grid.ChunksPerChannel &&
         A.Grid.MaxSliceChunks == B.Grid.MaxSliceChunks && A.InputUnits == B.InputUnits &&
         A.OutputUnits == B.OutputUnits;
}

/// Checks entry Index of a kernel table against a communicator of NRanks;
/// Flag is the cclc compile option that generates such tables.
void checkKernel(const KernelEntry &K, size_t Index, int NRanks, const char *Flag) {
  std::string Entry = "kernel table entry " + std::to_string(Index);
  require(K.Algorithm && K.Collective && K.HasFunction,
          Entry + " has a null name, collective or function; pass the <algorithm>_kernels "
                  "table that cclc compile " + Flag + " generated");
  Entry += " (" + std::string(K.Algorithm) + ")";
  std::optional<plan::CollectiveKind> Collective = plan::parseCollective(K.Collective);
  require(Collective.has_value(),
          Entry + " names an unknown collective '" + std::string(K.Collective) + "'");
  require(K.NRanks == NRanks, Entry + " is compiled for " + std::to_string(K.NRanks) +
                                  " ranks, but the communicator has " + std::to_string(NRanks) +
                                  "; compile it for " + std::to_string(NRanks) + " ranks");
  require(K.Root >= 0 && K.Root < NRanks,
          Entry + " has root " + std::to_string(K.Root) + ", which is not a rank");
  require(K.Shape.NChannels >= 1 && K.Shape.ChunksPerChannel >= 1 && K.Shape.MaxSliceChunks >= 1 &&
              K.InputUnits >= 1 && K.OutputUnits >= 1 && K.ScratchUnits >= 0,
          Entry + " has a malformed grid shape or buffer sizes");
  require(uint8_t(K.Type) <= uint8_t(host::DType::U64) &&
              uint8_t(K.Op) <= uint8_t(host::RedOp::Max),
          Entry + " has an unknown element type or operator");
  require(K.MaxBytes == 0 || K.MaxBytes >= K.MinBytes,
          Entry + " has a size window whose end comes before its start");
  // The most threads a CUDA block has on any device; the primitives move
  // data by whole warps (cuda/Primitives.cuh).
  require(!K.Cuda ||
              (K.BlockThreads >= 32 && K.BlockThreads <= 1024 && K.BlockThreads % 32 == 0),
          Entry + " has " + std::to_string(K.BlockThreads) +
              " threads per block; the kernels run whole warps, 32 to 1024 threads, a multiple "
              "of 32");
}

} // namespace

void Communicator::loadPlan(const std::string &Path) {
  std::lock_guard<std::mutex> Guard(CallLock);
  checkUsable();
  SourceManager SM;
  std::string Error;
  std::optional<uint32_t> Id = SM.loadFile(Path, Error);
  if (!Id)
    throw ApiError(cclcInvalidArgument, "cannot read plan " + Path + ": " + Error +
                                            "; pass a file written by cclc compile --emit=json");
  loadPlanFile(SM, *Id, Path);
}

void Communicator::loadPlanText(std::string Text, const std::string &Name) {
  std::lock_guard<std::mutex> Guard(CallLock);
  checkUsable();
  SourceManager SM;
  loadPlanFile(SM, SM.addBuffer(Name, std::move(Text)), Name);
}

void Communicator::loadPlanFile(SourceManager &SM, uint32_t FileId, const std::string &Name) {
  std::ostringstream Log;
  DiagnosticEngine Diags(SM, Log);
  plan::ReadOptions Options{Rank, proofStepsFromEnvironment()};
  std::optional<plan::Plan> Plan = plan::readPlanFile(FileId, SM, Diags, Options);
  if (!Plan || (Plan->Complete && !verify::verifySchedule(Plan->Sched, Diags)))
    throw ApiError(cclcInvalidArgument,
                   "plan " + Name + " is refused:\n" + trimmed(Log.str()) +
                       "\nrecompile it with cclc compile --emit=json; cclc plan-check " +
                       "explains a plan's problems");
  if (Plan->Sched.NRanks != NRanks)
    throw ApiError(cclcInvalidArgument,
                   "plan " + Name + " is compiled for " + std::to_string(Plan->Sched.NRanks) +
                       " ranks, but the communicator has " + std::to_string(NRanks) +
                       "; compile it with --nranks " + std::to_string(NRanks) +
                       " or for a topology of " + std::to_string(NRanks) + " ranks");
  if (!Plan->Complete)
    Table.info("plan " + Name + " expands to " + std::to_string(Plan->Steps) +
               " steps over its ranks, more than the runtime proves at load (" +
               std::to_string(Options.FullSteps) + ", CCLC_PROOF_STEPS); this rank read its "
               "own program and relies on the proof of cclc compile (cclc plan-check repeats "
               "it)");
  Algorithm A = interpreted(std::move(*Plan), "plan " + Name, true);
  connectSmallCalls(A);
  Table.add(std::move(A));
}

void Communicator::requireFifoBudget(const Algorithm &A) const {
  // The FIFOs a rank shares with one peer, each way, are what one transport
  // segment holds; a plan within the reader's limits (1024 channels, 64
  // slots, a chunk grid of int32 sizes) could still ask for terabytes.
  constexpr uint64_t MaxPeerFifoBytes = uint64_t(1) << 30;
  std::map<std::pair<int, int>, uint64_t> Channels;
  for (const auto &[From, To, Channel] : A.Links)
    if (From == Rank || To == Rank)
      ++Channels[{From, To}];
  uint64_t Most = 0;
  for (const auto &[Pair, N] : Channels)
    Most = std::max(Most, N);
  uint64_t Bytes = Most * A.LinkOptions.NumSlots * A.LinkOptions.SlotBytes;
  require(Bytes <= MaxPeerFifoBytes,
          A.Origin + " needs " + std::to_string(Bytes >> 20) + " MiB of FIFOs (" +
              std::to_string(Most) + " channels of " + std::to_string(A.LinkOptions.NumSlots) +
              " slots of " + std::to_string(A.LinkOptions.SlotBytes) +
              " bytes) between rank " + std::to_string(Rank) +
              " and a peer, more than the runtime's 1 GiB per peer; compile it with fewer "
              "channels, buffer slots or chunks per message");
}

Algorithm Communicator::interpreted(plan::Plan P, std::string Origin, bool ConnectHost) {
  const sched::Schedule &S = P.Sched;
  Algorithm A;
  A.Name = S.Algorithm;
  A.Origin = std::move(Origin);
  A.Collective = S.Collective;
  A.Root = S.Root;
  A.MinBytes = P.Info.MinBytes;
  A.MaxBytes = P.Info.MaxBytes;
  A.ForInPlace = P.Info.InPlace;
  A.ForMapped = P.Info.MappedBuffers;
  A.Kind = Algorithm::Executor::Interpreter;
  A.Links = std::move(P.Links);
  A.InPlace = plan::runsInPlace(S, Rank);
  for (const sched::RankProgram &Program : S.Ranks)
    for (const sched::ChannelProgram &Channel : Program.Channels)
      for (const sched::Step &St : Channel.Steps)
        if (St.Proto != sched::Protocol::Simple)
          A.Lines = St.Proto;
  int32_t BufferSlots = S.BufferSlots;
  A.Interp = std::make_shared<const exec::Interpreter>(std::move(P.Sched), P.Shape);
  A.Shape = A.Interp->shape();
  A.LinkOptions = linkOptionsFor(A.Shape.Grid, BufferSlots);
  requireFifoBudget(A);
  if (ConnectHost)
    connectHost(A);
  return A;
}

void Communicator::connectHost(Algorithm &A) {
  const LinkSets::Set &Set =
      Links.connect(A.Links, hostLinkOptions(A.LinkOptions, A.Shape, A.MaxBytes));
  A.Net = Set.Net.get();
  A.SlotBytes = Set.Options.SlotBytes;
}

void Communicator::connectSmallCalls(Algorithm &A) {
  if (!WaitsYield || A.MinBytes > SmallCallBytes || !someRankOnlySends(A.Links))
    return;
  // Small slots pay where they let a sender run several times as far ahead.
  const net::LinkOptions Small = hostLinkOptions(A.LinkOptions, A.Shape, SmallCallBytes);
  if (Small.NumSlots < 2 * hostLinkOptions(A.LinkOptions, A.Shape, A.MaxBytes).NumSlots)
    return;
  const LinkSets::Set &Set = Links.connect(A.Links, Small);
  A.SmallNet = Set.Net.get();
  A.SmallSlotBytes = Set.Options.SlotBytes;
}

Algorithm Communicator::fallback(const Request &R) {
  sched::Schedule S = fallbackSchedule(R.Collective, NRanks, R.Root);
  return interpreted(plan::wholePlan(std::move(S)), "the library's ring, built into the runtime",
                     R.Where == Target::Host);
}

void Communicator::registerKernels(const host::KernelInfo *Infos, size_t Count) {
  std::lock_guard<std::mutex> Guard(CallLock);
  checkUsable();
  require(Infos || Count == 0, "kernelInfos is null; pass the <algorithm>_kernels table that "
                               "cclc compile --emit=host generated");
  std::vector<KernelEntry> Entries;
  for (size_t I = 0; I < Count; ++I) {
    Entries.push_back(entryOf(Infos[I]));
    Entries.back().Host = Infos[I].Run;
  }
  registerTable(Entries, Algorithm::Executor::Kernel, "--emit=host");
}

void Communicator::registerCudaKernels(const void *Infos, size_t Count) {
  std::lock_guard<std::mutex> Guard(CallLock);
  checkUsable();
  require(Infos || Count == 0, "kernelInfos is null; pass the <algorithm>_kernels table that "
                               "cclc compile --emit=cuda generated");
  registerTable(cudaKernelEntries(Infos, Count), Algorithm::Executor::CudaKernel, "--emit=cuda");
}

void Communicator::registerTable(std::span<const KernelEntry> Entries, Algorithm::Executor Kind,
                                 const char *Flag) {
  // Check every entry first, so that a bad table loads nothing.
  for (size_t I = 0; I < Entries.size(); ++I)
    checkKernel(Entries[I], I, NRanks, Flag);

  // One algorithm per schedule, holding its kernels for every type and operator.
  std::vector<Algorithm> Groups;
  for (const KernelEntry &K : Entries) {
    Algorithm A;
    A.Name = K.Algorithm;
    A.Origin = "kernels";
    A.Collective = *plan::parseCollective(K.Collective);
    A.Root = K.Root;
    A.MinBytes = K.MinBytes;
    A.MaxBytes = K.MaxBytes ? std::optional<uint64_t>(K.MaxBytes) : std::nullopt;
    A.Kind = Kind;
    A.Shape = {K.Shape, K.InputUnits, K.OutputUnits, K.ScratchUnits};
    auto Same = [&](const Algorithm &G) {
      return G.Name == A.Name && G.Collective == A.Collective && G.Root == A.Root &&
             G.MinBytes == A.MinBytes && G.MaxBytes == A.MaxBytes && sameLayout(G.Shape, A.Shape) &&
             G.Shape.ScratchUnits == A.Shape.ScratchUnits;
    };
    auto It = std::find_if(Groups.begin(), Groups.end(), Same);
    if (It == Groups.end())
      It = Groups.insert(Groups.end(), std::move(A));
    if (Kind == Algorithm::Executor::CudaKernel)
      It->CudaKernels[{K.Type, K.Op}] = K.Cuda;
    else
      It->Kernels[{K.Type, K.Op}] = K.Host;
  }

  for (Algorithm &A : Groups) {
    // A kernel table does not list its links. The plan of the same schedule
    // does, when it is loaded; otherwise every pair of ranks is connected.
    const Algorithm *Plan = nullptr;
    for (const Algorithm &L : Table.loaded())
      if (L.Kind == Algorithm::Executor::Interpreter && L.Name == A.Name &&
          L.Collective == A.Collective && L.Root == A.Root && sameLayout(L.Shape, A.Shape))
        Plan = &L;
    if (Plan) {
      A.Links = Plan->Links;
      A.LinkOptions = Plan->LinkOptions;
    } else {
      A.Links = allLinks(NRanks, A.Shape.Grid.NChannels);
      A.LinkOptions = linkOptionsFor(A.Shape.Grid, 0);
    }
    // Host kernels run on the host's connections, connected now (the plan's,
    // when it is loaded); CUDA kernels on the GPU's, connected at their first
    // call.
    if (Kind == Algorithm::Executor::Kernel) {
      connectHost(A);
      connectSmallCalls(A);
    }
    Table.add(std::move(A));
  }
}

} // namespace cclc::runtime
