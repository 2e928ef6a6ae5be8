//===- Launch.cpp - One collective call -----------------------------------===//
//
// A call is checked, given an algorithm, and run: the caller's buffers (or
// stand-ins for the buffers NCCL ignores on non-root ranks), the input copied
// aside when it overlaps the output (an in-place call: executors read the
// input while they write the output), the cached scratch, and every channel
// on a thread of its own.
//
// A channel that fails aborts the transports at once, here and at the peers,
// so the other channels and ranks stop instead of waiting out their
// timeouts; the call then reports the failure's cause, not the aborts it led
// to, and the communicator takes no more calls.
//
//===----------------------------------------------------------------------===//

#include "compiler/cost/Explain.h"
#include "runtime/api/Comm.h"
#include "runtime/api/Status.h"
#include "runtime/api/Types.h"

#include "runtime/net/Socket.h"

#include <cstdint>
#include <cstring>
#include <limits>

namespace cclc::runtime {

namespace {

bool overlaps(const void *A, size_t ABytes, const void *B, size_t BBytes) {
  auto X = reinterpret_cast<uintptr_t>(A), Y = reinterpret_cast<uintptr_t>(B);
  return X < Y + BBytes && Y < X + ABytes;
}

/// True for an error that only says another channel or rank stopped first.
bool isAbort(const std::exception_ptr &E) {
  try {
    std::rethrow_exception(E);
  } catch (const host::CommError &C) {
    return C.status() == host::CommStatus::Aborted;
  } catch (...) {
    return false;
  }
}

} // namespace

void Communicator::collective(const Request &R, const void *Send, void *Recv) {
  std::lock_guard<std::mutex> Guard(CallLock);
  checkUsable();
  // Messages are built only for refusals: a call that passes costs no strings.
  auto Refuse = [&](const std::string &Problem) {
    throw ApiError(cclcInvalidArgument,
                   std::string(dsl::collectiveName(R.Collective)) + ": " + Problem);
  };
  if (hasRoot(R.Collective) && (R.Root < 0 || R.Root >= NRanks))
    Refuse("root " + std::to_string(R.Root) + " is not a rank of this communicator of " +
           std::to_string(NRanks) + " ranks");
  sched::BufferUnits Units = sched::bufferUnits(R.Collective, NRanks);
  size_t ElemBytes = exec::dtypeBytes(R.Type);
  size_t MostUnits = size_t(std::max({Units.Input, Units.Output, Units.Scratch}));
  if (R.Count > std::numeric_limits<size_t>::max() / ElemBytes / MostUnits)
    Refuse("count " + std::to_string(R.Count) + " overflows the buffers' sizes");
  // NCCL reads no send buffer on a broadcast's non-root ranks and writes no
  // receive buffer on a reduce's.
  bool IsRoot = Rank == R.Root;
  bool ReadsSend = R.Collective != dsl::CollectiveKind::Broadcast || IsRoot;
  bool WritesRecv = R.Collective != dsl::CollectiveKind::Reduce || IsRoot;
  if (R.Count && ReadsSend && !Send)
    Refuse("sendbuff is null with a count of " + std::to_string(R.Count) + "; pass a buffer of " +
           std::to_string(Units.Input) + " x count elements");
  if (R.Count && WritesRecv && !Recv)
    Refuse("recvbuff is null with a count of " + std::to_string(R.Count) + "; pass a buffer of " +
           std::to_string(Units.Output) + " x count elements");
  // Every rank passes the same count, so every rank skips alike.
  if (R.Count == 0)
    return;

  const Algorithm *A = nullptr;
  std::vector<std::exception_ptr> Errors;
  try {
    A = &Table.choose(R, [&] { return fallback(R); });
    size_t InBytes = size_t(A->Shape.InputUnits) * R.Count * ElemBytes;
    size_t OutBytes = size_t(A->Shape.OutputUnits) * R.Count * ElemBytes;
    // Where NCCL ignores a buffer, so does the runtime: a stand-in takes
    // what a schedule may read or write there.
    const void *Input = ReadsSend ? Send : Space.get(Workspace::Use::StandInInput, InBytes);
    void *Output = WritesRecv ? Recv : Space.get(Workspace::Use::StandInOutput, OutBytes);
    if (overlaps(Input, InBytes, Output, OutBytes)) {
      void *Copy = Space.get(Workspace::Use::InputCopy, InBytes);
      std::memcpy(Copy, Input, InBytes);
      Input = Copy;
    }
    host::KernelArgs Args;
    Args.Rank = Rank;
    Args.Input = Input;
    Args.Output = Output;
    Args.Scratch = A->Shape.ScratchUnits
                       ? Space.get(Workspace::Use::Scratch,
                                   size_t(A->Shape.ScratchUnits) * R.Count * ElemBytes)
                       : nullptr;
    Args.Count = R.Count;
    Args.SlotBytes = A->SlotBytes;
    Args.Net = A->Net;
    Errors = Pool.run(A->Shape.Grid.NChannels, [&](int Channel) {
      try {
        A->run(R, Args, Channel);
      } catch (const std::exception &E) {
        // An abort heard from elsewhere keeps its cause; spread it further.
        std::string Heard = Links.failure();
        Links.abort(Heard.empty() ? "rank " + std::to_string(Rank) + ", channel " +
                                        std::to_string(Channel) + ": " + E.what()
                                  : Heard);
        throw;
      }
    });
  } catch (const ApiError &) {
    throw; // Refused before anything was sent: the communicator still works.
  } catch (...) {
    Errors.assign(1, std::current_exception());
  }
  for (const std::exception_ptr &E : Errors)
    if (E)
      fail(R, A, Errors);
}

void Communicator::fail(const Request &R, const Algorithm *A,
                        const std::vector<std::exception_ptr> &Errors) {
  // The cause is the first error that is not an abort; an abort alone means
  // the cause lies at a peer, which Links.failure() names.
  std::exception_ptr Cause;
  for (const std::exception_ptr &E : Errors)
    if (E && (!Cause || (isAbort(Cause) && !isAbort(E))))
      Cause = E;
  Classified C = classify(Cause);
  std::string Heard = Links.failure();
  Failure = std::string(dsl::collectiveName(R.Collective)) + " of " + cost::formatBytes(R.bytes()) +
            (A ? " with " + A->Name : "") + " failed on rank " + std::to_string(Rank) + ": " +
            C.Message;
  if (!Heard.empty() && C.Message.find(Heard) == std::string::npos &&
      Heard.find(C.Message) == std::string::npos)
    Failure += " (first failure: " + Heard + ")";
  Links.abort(Failure);
  throw ApiError(C.Result, Failure + "; destroy the communicator with cclcCommAbort");
}

} // namespace cclc::runtime
