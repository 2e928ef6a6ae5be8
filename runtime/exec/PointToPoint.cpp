//===- PointToPoint.cpp - Sends and receives that progress together -------===//

#include "runtime/exec/PointToPoint.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <string>
#include <thread>

namespace cclc::exec {

namespace {

/// Rounds without progress spent spinning before the group yields and
/// watches the clock, as Waiter::until spins.
constexpr uint32_t SpinRounds = 2048;

const host::Waiter &waiterOf(const Transfer &T) { return T.Out ? *T.Out->Wait : *T.In->Wait; }

int peerOf(const Transfer &T) { return T.Out ? T.Out->Peer : T.In->Peer; }

std::string rankName(int Rank) { return "rank " + std::to_string(Rank); }

/// True when T may move: it is not done, and the transfer before it on its
/// FIFO is.
bool active(std::span<const Transfer> Group, const Transfer &T) {
  return !T.Done && (T.After < 0 || Group[size_t(T.After)].Done);
}

/// Copies the next slot of send T into its outbox if there is room; true
/// when it did.
bool sendSlot(Transfer &T) {
  host::Outbox &Out = *T.Out;
  if (!Out.ready())
    return false;
  size_t Left = T.Bytes - T.Moved;
  size_t Chunk = std::min(Left, Out.Q.SlotBytes);
  std::byte *Slot = Out.acquire();
  if (Chunk)
    std::memcpy(Slot, T.Source + T.Moved, Chunk);
  Out.post(Left);
  T.Moved += Chunk;
  T.Done = T.Moved == T.Bytes;
  return true;
}

/// Copies the next slot of receive T out of its inbox if one has come; true
/// when it did. Throws before writing anything when the sender's message
/// has another size.
bool receiveSlot(Transfer &T, int Rank) {
  host::Inbox &In = *T.In;
  if (!In.ready())
    return false;
  uint64_t Head = In.Q.Header->Head.load(std::memory_order_relaxed);
  uint64_t SizeWord = In.Q.Sizes[Head % In.Q.NumSlots];
  size_t Left = T.Bytes - T.Moved;
  if (SizeWord != Left)
    throw host::CommError(host::CommStatus::Mismatch,
                          rankName(In.Peer) + " sent " + std::to_string(T.Moved + SizeWord) +
                              " bytes where " + rankName(Rank) + " receives " +
                              std::to_string(T.Bytes) +
                              "; a send and its receive must pass the same count and type");
  size_t Chunk = std::min(Left, In.Q.SlotBytes);
  if (Chunk)
    std::memcpy(T.Target + T.Moved, In.Q.slot(Head), Chunk);
  In.release();
  T.Moved += Chunk;
  T.Done = T.Moved == T.Bytes;
  return true;
}

/// "send to rank 1, receive from rank 2": what Group waits for.
std::string waitsFor(std::span<const Transfer> Group) {
  std::string Text;
  for (const Transfer &T : Group)
    if (active(Group, T))
      Text += (Text.empty() ? "" : ", ") + std::string(T.Out ? "send to " : "receive from ") +
              rankName(peerOf(T));
  return Text;
}

/// Throws CommError(Aborted) when the links of a transfer that waits were
/// aborted.
void checkAborted(std::span<const Transfer> Group) {
  for (const Transfer &T : Group) {
    const std::atomic<uint32_t> *Abort = waiterOf(T).Abort;
    if (active(Group, T) && Abort && Abort->load(std::memory_order_relaxed))
      throw host::CommError(host::CommStatus::Aborted, std::string("aborted while waiting to ") +
                                                           (T.Out ? "send to " : "receive from ") +
                                                           rankName(peerOf(T)));
  }
}

} // namespace

void runTransfers(std::span<Transfer> Group, int Rank) {
  size_t Left = 0;
  std::chrono::milliseconds Timeout(0);
  for (const Transfer &T : Group) {
    Left += !T.Done;
    Timeout = std::max(Timeout, waiterOf(T).Timeout);
  }
  uint32_t Idle = 0;
  std::chrono::steady_clock::time_point Deadline;
  while (Left) {
    bool Progress = false;
    for (Transfer &T : Group) {
      if (!active(Group, T) || !(T.Out ? sendSlot(T) : receiveSlot(T, Rank)))
        continue;
      Progress = true;
      Left -= T.Done;
    }
    if (Progress) {
      Idle = 0;
      continue;
    }
    if (++Idle < SpinRounds)
      continue;
    if (Idle == SpinRounds)
      Deadline = std::chrono::steady_clock::now() + Timeout;
    checkAborted(Group);
    if ((Idle & 63) == 0 && std::chrono::steady_clock::now() > Deadline)
      throw host::CommError(host::CommStatus::Timeout,
                            "timed out after " + std::to_string(Timeout.count()) +
                                " ms waiting to " + waitsFor(Group) +
                                "; the peer may have died or stalled, or not issued the "
                                "matching call");
    std::this_thread::yield();
  }
}

} // namespace cclc::exec
