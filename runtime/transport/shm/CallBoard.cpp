//===- CallBoard.cpp - What the two ranks of a segment tell each other ----===//

#include "runtime/transport/shm/CallBoard.h"

#include <algorithm>
#include <cstring>
#include <new>

namespace cclc::net {

namespace {

/// A stamp as the four words a record holds.
struct StampWords {
  uint64_t W[4];
};

StampWords wordsOf(const kern::CallStamp &S) {
  return {{S.Seq, S.Count, S.Plan,
           uint64_t(uint32_t(S.Root)) | uint64_t(S.Collective) << 32 | uint64_t(S.Type) << 40 |
               uint64_t(S.Op) << 48}};
}

kern::CallStamp stampOf(const StampWords &Words) {
  kern::CallStamp S;
  S.Seq = Words.W[0];
  S.Count = Words.W[1];
  S.Plan = Words.W[2];
  S.Root = int32_t(uint32_t(Words.W[3]));
  S.Collective = uint8_t(Words.W[3] >> 32);
  S.Type = uint8_t(Words.W[3] >> 40);
  S.Op = uint8_t(Words.W[3] >> 48);
  return S;
}

/// Which record of two a call goes to: calls alternate, so the one before
/// stays readable.
size_t slotOf(uint64_t Seq) { return size_t(Seq & 1); }

} // namespace

struct CallBoard::Record {
  /// One published call: Version is odd while the words change.
  struct Call {
    std::atomic<uint64_t> Version{0};
    std::atomic<uint64_t> Words[4] = {};
  };
  alignas(64) Call Calls[2];
  /// 0: no cause; 1: being written; 2: CauseBytes of Cause hold it.
  alignas(64) std::atomic<uint32_t> CauseState{0};
  uint32_t CauseBytes = 0;
  char Cause[CauseCapacity] = {};
};

size_t CallBoard::bytes() { return 2 * sizeof(Record); }

void CallBoard::init(void *Mem) {
  auto *Records = static_cast<Record *>(Mem);
  new (&Records[0]) Record();
  new (&Records[1]) Record();
}

CallBoard::CallBoard(void *Mem, int Side, const kern::CallStamp *Current)
    : Mine(static_cast<Record *>(Mem) + Side), Theirs(static_cast<Record *>(Mem) + (1 - Side)),
      Current(Current) {}

void CallBoard::publish(const kern::CallStamp &S) {
  Record::Call &C = Mine->Calls[slotOf(S.Seq)];
  uint64_t V = C.Version.load(std::memory_order_relaxed);
  C.Version.store(V + 1, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);
  StampWords Words = wordsOf(S);
  for (size_t I = 0; I < 4; ++I)
    C.Words[I].store(Words.W[I], std::memory_order_relaxed);
  C.Version.store(V + 2, std::memory_order_release);
}

std::optional<kern::CallStamp> CallBoard::peerCall(uint64_t Seq) const {
  std::optional<kern::CallStamp> Found;
  for (const Record::Call &C : Theirs->Calls) {
    uint64_t Before = C.Version.load(std::memory_order_acquire);
    if (Before == 0 || Before % 2)
      continue;
    StampWords Words;
    for (size_t I = 0; I < 4; ++I)
      Words.W[I] = C.Words[I].load(std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_acquire);
    if (C.Version.load(std::memory_order_relaxed) != Before)
      continue;
    kern::CallStamp S = stampOf(Words);
    if (Seq ? S.Seq == Seq : !Found || S.Seq > Found->Seq)
      Found = S;
  }
  return Found;
}

void CallBoard::check(int Peer, bool (*Ready)(const void *), const void *Arg) const {
  const kern::CallStamp &Now = *Current;
  if (!Now.Seq)
    return;
  std::optional<kern::CallStamp> Latest = peerCall(0);
  if (!Latest || Latest->Seq < Now.Seq)
    return; // The peer has not come to this call yet.
  if (Latest->Seq == Now.Seq) {
    if (*Latest != Now)
      throw host::CallMismatch(Peer, *Latest, Now);
    return;
  }
  // The peer finished this call and published a later one; whatever it
  // posted in this call is visible now.
  if (Ready(Arg))
    return;
  std::optional<kern::CallStamp> Then = peerCall(Now.Seq);
  throw host::CallMismatch(Peer, Then && *Then != Now ? *Then : *Latest, Now);
}

void CallBoard::recordCause(std::string_view Cause) {
  uint32_t None = 0;
  if (!Mine->CauseState.compare_exchange_strong(None, 1, std::memory_order_acq_rel))
    return;
  size_t N = std::min(Cause.size(), CauseCapacity);
  std::memcpy(Mine->Cause, Cause.data(), N);
  Mine->CauseBytes = uint32_t(N);
  Mine->CauseState.store(2, std::memory_order_release);
}

std::string CallBoard::peerCause() const {
  if (Theirs->CauseState.load(std::memory_order_acquire) != 2)
    return {};
  return std::string(Theirs->Cause, std::min<size_t>(Theirs->CauseBytes, CauseCapacity));
}

} // namespace cclc::net
