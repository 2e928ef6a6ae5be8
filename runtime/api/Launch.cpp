//===- Launch.cpp - One collective call -----------------------------------===//
//
// A call is checked, given an algorithm, and run, on the host or on the GPU:
// the caller's buffers (or stand-ins for the buffers NCCL ignores on non-root
// ranks), the input copied aside when it overlaps the output (an in-place
// call: executors read the input while they write the output), and the
// cached scratch. On the host every channel runs on a thread of its own and
// the call returns when all are done; on the GPU the call enqueues one
// kernel on the caller's stream and returns.
//
// A host channel that fails aborts the transports at once, here and at the
// peers, so the other channels and ranks stop instead of waiting out their
// timeouts; the call then reports the failure's cause, not the aborts it led
// to, and the communicator takes no more calls. A GPU call can fail only in
// setting up or launching its kernel; a kernel's own failure is recorded on
// the device, raises the abort word, and is found later (asyncError()).
//
//===----------------------------------------------------------------------===//

#include "plan/Vocabulary.h"
#include "runtime/api/Comm.h"
#include "runtime/api/Status.h"
#include "runtime/api/Types.h"

#include "runtime/net/Socket.h"
#include "runtime/transport/shm/SharedBuffers.h"

#include <cstring>
#include <functional>
#include <optional>

namespace cclc::runtime {

namespace {

/// Which of the caller's buffers a call uses: NCCL reads no send buffer on a
/// broadcast's non-root ranks and writes no receive buffer on a reduce's.
struct Uses {
  bool Send;
  bool Recv;
};

Uses usesOf(const Request &R, int Rank) {
  bool IsRoot = Rank == R.Root;
  return {R.Collective != plan::CollectiveKind::Broadcast || IsRoot,
          R.Collective != plan::CollectiveKind::Reduce || IsRoot};
}

/// Whether R on Rank runs in place as NCCL means it: the output is the input,
/// or, where one is a rank's block of the other, holds it at Rank's block.
bool inPlaceCall(const Request &R, int Rank, const void *Send, const void *Recv) {
  // As addresses: a null buffer plus an offset is not a pointer.
  const uintptr_t Block = R.Count * plan::dtypeBytes(R.Type) * size_t(Rank);
  const uintptr_t In = reinterpret_cast<uintptr_t>(Send);
  const uintptr_t Out = reinterpret_cast<uintptr_t>(Recv);
  switch (R.Collective) {
  case plan::CollectiveKind::AllGather: return In == Out + Block;
  case plan::CollectiveKind::ReduceScatter: return Out == In + Block;
  default: return In == Out;
  }
}

} // namespace

bool Communicator::mappedCall(const Request &R, const void *Send, const void *Recv) {
  const net::SharedBuffers &Mapped = net::SharedBuffers::process();
  const uint64_t Changes = Mapped.changes();
  MappedMemo &M = LastBuffers;
  if (M.Changes == Changes && M.Send == Send && M.Recv == Recv && M.Count == R.Count &&
      M.Type == R.Type && M.Collective == R.Collective && M.Root == R.Root)
    return M.Mapped;
  const Uses U = usesOf(R, Rank);
  const sched::BufferUnits Units = sched::bufferUnits(R.Collective, NRanks);
  const size_t Unit = R.Count * plan::dtypeBytes(R.Type);
  const host::Run In{Send, Unit * size_t(Units.Input)}, Out{Recv, Unit * size_t(Units.Output)};
  host::SharedSpan Span;
  M = {Send, Recv, R.Count, R.Type, R.Collective, R.Root, Changes,
       (!U.Send || Mapped.find({&In, 1}, Span)) && (!U.Recv || Mapped.find({&Out, 1}, Span))};
  return M.Mapped;
}

namespace {

/// Copies Bytes from Src to Dst, in the order of the call's other work.
using CopyAside = std::function<void(void *Dst, const void *Src, size_t Bytes)>;

/// The buffers and count of R run by A on Rank: the caller's where NCCL uses
/// them, else stand-ins from Space, where an executor may read or write; the
/// input copied aside into Space with Copy when it overlaps the output,
/// unless it is the output and A's program runs in place (Algorithm::InPlace);
/// and the scratch, from Space too.
kern::CallArgs placeBuffers(const Request &R, const Algorithm &A, int Rank, const void *Send,
                            void *Recv, Workspace &Space, const CopyAside &Copy) {
  Uses U = usesOf(R, Rank);
  size_t ElemBytes = plan::dtypeBytes(R.Type);
  size_t InBytes = size_t(A.Shape.InputUnits) * R.Count * ElemBytes;
  size_t OutBytes = size_t(A.Shape.OutputUnits) * R.Count * ElemBytes;
  kern::CallArgs Args;
  Args.Rank = Rank;
  Args.Input = U.Send ? Send : Space.get(Workspace::Use::StandInInput, InBytes);
  Args.Output = U.Recv ? Recv : Space.get(Workspace::Use::StandInOutput, OutBytes);
  const bool InPlace = A.InPlace && Args.Input == Args.Output && InBytes == OutBytes;
  if (!InPlace && overlaps(Args.Input, InBytes, Args.Output, OutBytes)) {
    void *Aside = Space.get(Workspace::Use::InputCopy, InBytes);
    Copy(Aside, Args.Input, InBytes);
    Args.Input = Aside;
  }
  size_t ScratchBytes = size_t(A.Shape.ScratchUnits) * R.Count * ElemBytes;
  Args.Scratch = ScratchBytes ? Space.get(Workspace::Use::Scratch, ScratchBytes) : nullptr;
  Args.Count = R.Count;
  return Args;
}

/// What every message of R, run by the algorithm of identity Plan as the
/// communicator's call Seq, carries.
kern::CallStamp stampOf(const Request &R, uint64_t Plan, uint64_t Seq) {
  kern::CallStamp S;
  S.Seq = Seq;
  S.Count = R.Count;
  S.Plan = Plan;
  S.Root = R.Root;
  S.Collective = uint8_t(R.Collective);
  S.Type = uint8_t(R.Type);
  S.Op = uint8_t(R.Op);
  return S;
}

/// The request a peer's stamp S describes; none when a field is out of range.
std::optional<Request> requestOf(const kern::CallStamp &S) {
  if (S.Collective > uint8_t(plan::CollectiveKind::AllToAll) ||
      S.Type >= plan::allDTypes().size() || S.Op >= plan::allRedOps().size())
    return std::nullopt;
  Request R;
  R.Collective = plan::CollectiveKind(S.Collective);
  R.Root = S.Root;
  R.Count = S.Count;
  R.Type = host::DType(S.Type);
  R.Op = host::RedOp(S.Op);
  return R;
}

} // namespace

void Communicator::setCallKind(Request &R, const void *Send, const void *Recv) {
  R.InPlace = inPlaceCall(R, Rank, Send, Recv);
  // Asked only where a plan was chosen for mapped or unmapped buffers.
  R.Mapped = R.Where == Target::Host && Table.asksMapped() && mappedCall(R, Send, Recv);
}

bool Communicator::runsLoadedOnHost(Request R, const void *Send, const void *Recv) {
  std::lock_guard<std::mutex> Guard(CallLock);
  R.Where = Target::Host;
  setCallKind(R, Send, Recv);
  return Table.servesLoaded(R);
}

bool Communicator::repeatsLastHostCall(const Request &Asked, const void *Send,
                                       const void *Recv) {
  const HostReplay &L = LastHostCall;
  if (!L.A || !(L.Asked == Asked) || L.Send != Send || L.Recv != Recv ||
      L.Changes != net::SharedBuffers::process().changes() || L.Loaded != Table.loaded().size())
    return false;
  const Uses U = usesOf(Asked, Rank);
  return L.Mapped || !anyDeviceMemory({U.Send ? Send : nullptr, U.Recv ? Recv : nullptr});
}

void Communicator::collective(const Request &Asked, const void *Send, void *Recv, void *Stream) {
  std::lock_guard<std::mutex> Guard(CallLock);
  checkUsable();
  if (!Stream && repeatsLastHostCall(Asked, Send, Recv)) {
    ++Calls;
    HostReplay &L = LastHostCall;
    if (!L.Recorded) {
      L.Trace = L.A->trace(L.R, hostArgs(L.R, *L.A, L.Args));
      L.Recorded = true;
    }
    reportErrors(L.R, L.A, runOnHost(L.R, *L.A, L.Args, L.Trace.get()));
    return;
  }
  LastHostCall.A = nullptr;
  Request R = Asked;
  // Messages are built only for refusals: a call that passes costs no strings.
  auto Refuse = [&](const std::string &Problem) {
    throw ApiError(cclcInvalidArgument,
                   std::string(plan::collectiveName(R.Collective)) + ": " + Problem);
  };
  if (plan::hasRoot(R.Collective) && (R.Root < 0 || R.Root >= NRanks))
    Refuse("root " + std::to_string(R.Root) + " is not a rank of this communicator of " +
           std::to_string(NRanks) + " ranks");
  sched::BufferUnits Units = sched::bufferUnits(R.Collective, NRanks);
  size_t MostUnits = size_t(std::max({Units.Input, Units.Output, Units.Scratch}));
  // Multiplied, not divided: two divisions took a twentieth of a small call.
  if (size_t Bytes; __builtin_mul_overflow(R.Count, plan::dtypeBytes(R.Type) * MostUnits, &Bytes))
    Refuse("count " + std::to_string(R.Count) + " overflows the buffers' sizes");
  Uses U = usesOf(R, Rank);
  if (R.Count && U.Send && !Send)
    Refuse("sendbuff is null with a count of " + std::to_string(R.Count) + "; pass a buffer of " +
           std::to_string(Units.Input) + " x count elements");
  if (R.Count && U.Recv && !Recv)
    Refuse("recvbuff is null with a count of " + std::to_string(R.Count) + "; pass a buffer of " +
           std::to_string(Units.Output) + " x count elements");
  // Every rank passes the same count, so every rank skips alike; the call
  // still counts, so that a rank whose count alone was 0 fails at its next.
  ++Calls;
  if (R.Count == 0)
    return;

  // cclcMemAlloc's memory is the host's: the CUDA driver, whose lookup takes
  // the loader's lock, need not be asked about it.
  const bool Mapped = mappedCall(R, Send, Recv);
  R.Where = Stream || (!Mapped &&
                       anyDeviceMemory({U.Send ? Send : nullptr, U.Recv ? Recv : nullptr}))
                ? Target::Gpu
                : Target::Host;
  setCallKind(R, Send, Recv);
  // Refusals leave the communicator working: nothing was sent or enqueued.
  GpuContext *G = nullptr;
  if (R.Where == Target::Gpu) {
    G = &gpu(R);
    if (U.Send)
      G->checkBuffer(Send, "sendbuff");
    if (U.Recv)
      G->checkBuffer(Recv, "recvbuff");
  }
  const Algorithm *A = nullptr;
  // The channels' errors, or what was thrown before they ran.
  std::vector<std::exception_ptr> Thrown;
  const std::vector<std::exception_ptr> *Errors = &Thrown;
  try {
    A = &Table.choose(R, [&] {
      if (R.Where == Target::Gpu && !GpuFallback)
        throw ApiError(cclcNoAlgorithm, "no loaded algorithm serves " + describeCall(R) +
                                            " on the GPU, and the fallback ring is off there");
      return fallback(R);
    });
  } catch (const ApiError &) {
    throw; // No algorithm: refused before anything was sent.
  } catch (...) {
    Thrown.assign(1, std::current_exception());
  }
  if (A) {
    try {
      if (G) {
        kern::CallArgs Args =
            placeBuffers(R, *A, Rank, Send, Recv, G->space(),
                         [&](void *Dst, const void *Src, size_t Bytes) {
                           G->copy(Dst, Src, Bytes, Stream);
                         });
        G->launch(R, *A, Args, stampOf(R, A->Identity, Calls), Stream);
      } else {
        bool CopiedAside = false;
        kern::CallArgs Args =
            placeBuffers(R, *A, Rank, Send, Recv, Space,
                         [&](void *Dst, const void *Src, size_t Bytes) {
                           std::memcpy(Dst, Src, Bytes);
                           CopiedAside = true;
                         });
        Errors = &runOnHost(R, *A, Args);
        if (!CopiedAside)
          LastHostCall = {Asked, Send, Recv, net::SharedBuffers::process().changes(),
                          Table.loaded().size(), Mapped, R, A, Args, nullptr, false};
      }
    } catch (...) {
      Thrown.assign(1, std::current_exception());
      Errors = &Thrown;
    }
  }
  reportErrors(R, A, *Errors);
}

void Communicator::reportErrors(const Request &R, const Algorithm *A,
                                const std::vector<std::exception_ptr> &Errors) {
  for (const std::exception_ptr &E : Errors)
    if (E)
      fail(std::string(plan::collectiveName(R.Collective)) + " of " + plan::formatBytes(R.bytes()) +
               (A ? " with " + A->Name : "") + (R.Where == Target::Gpu ? " on the GPU" : ""),
           Errors);
}

host::KernelArgs Communicator::hostArgs(const Request &R, const Algorithm &A,
                                        const kern::CallArgs &Call) {
  host::KernelArgs Args;
  static_cast<kern::CallArgs &>(Args) = Call;
  const bool Small = A.SmallNet && R.bytes() <= SmallCallBytes;
  Args.SlotBytes = Small ? A.SmallSlotBytes : A.SlotBytes;
  Args.Net = Small ? A.SmallNet : A.Net;
  return Args;
}

const std::vector<std::exception_ptr> &Communicator::runOnHost(const Request &R,
                                                               const Algorithm &A,
                                                               const kern::CallArgs &Call,
                                                               const host::Trace *Replay) {
  const host::KernelArgs Args = hostArgs(R, A, Call);
  Links.beginCall(stampOf(R, A.Identity, Calls));
  return Pool.run(A.Shape.Grid.NChannels, [&](int Channel) {
    // An abort heard from elsewhere keeps its cause; spread it further.
    auto Stop = [&](const char *What) {
      std::string Heard = Links.failure();
      Links.abort(Heard.empty() ? "rank " + std::to_string(Rank) + ", channel " +
                                      std::to_string(Channel) + ": " + What
                                : Heard);
    };
    try {
      if (Replay)
        Replay->run();
      else
        A.run(R, Args, Channel);
    } catch (const host::CallMismatch &E) {
      host::CommError Described(host::CommStatus::Mismatch,
                                describeMismatch(E.Peer, E.Sent, E.Expected));
      Stop(Described.what());
      throw Described;
    } catch (const std::exception &E) {
      Stop(E.what());
      throw;
    }
  });
}

std::string Communicator::describeMismatch(int Peer, const kern::CallStamp &Sent,
                                           const kern::CallStamp &Expected) const {
  auto Describe = [&](const kern::CallStamp &S) {
    std::optional<Request> R = requestOf(S);
    const Algorithm *A = Table.withIdentity(S.Plan);
    return (R ? describeCall(*R)
              : "a call this build does not know (collective " + std::to_string(S.Collective) +
                    ", type " + std::to_string(S.Type) + ", operator " + std::to_string(S.Op) +
                    ")") +
           " with " +
           (A ? planTag(A->Name, S.Plan) : "a plan not loaded here (" + planTag("", S.Plan) + ")") +
           " as its call " + std::to_string(S.Seq);
  };
  return "rank " + std::to_string(Peer) + " called " + Describe(Sent) + " where rank " +
         std::to_string(Rank) + " called " + Describe(Expected) +
         "; every rank must make the same collective calls in the same order, with the same "
         "count, type, operator, root and plans";
}

} // namespace cclc::runtime
