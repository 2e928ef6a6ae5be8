//===- StableSends.cpp - Which sends a receiver may read in place ---------===//

#include "plan/StableSends.h"

#include <algorithm>
#include <array>
#include <cstdint>

namespace cclc::plan {

namespace {

using kern::BufferKind;
using kern::OpKind;
using kern::SliceRef;

/// No later call writes the chunk.
constexpr int32_t Never = INT32_MAX;

bool sendsSource(OpKind Op) {
  return Op == OpKind::Send || Op == OpKind::Exchange || Op == OpKind::ExchangeReduce;
}

/// The call writes its Dst from a message of its RecvPeer.
bool receives(OpKind Op) { return Op != OpKind::Send && Op != OpKind::Copy && Op != OpKind::Reduce; }

/// The schedule step that receives for Call: an exchange's second.
int32_t receiveIndex(const LoweredStep &Call) {
  bool Exchange = Call.Call.Op == OpKind::Exchange || Call.Call.Op == OpKind::ExchangeReduce;
  return Call.Index + (Exchange ? 1 : 0);
}

/// Per chunk of each buffer, the first call from the walk's position on
/// that writes it; in place, input chunk c is output chunk c.
class NextWrites {
public:
  NextWrites(const std::vector<LoweredStep> &Calls, bool InPlace) : InPlace(InPlace) {
    std::array<int32_t, 3> Extent{};
    for (const LoweredStep &L : Calls)
      for (const SliceRef &S : {L.Call.Src, L.Call.Dst}) {
        int32_t &E = Extent[space(S.Buffer)];
        E = std::max(E, S.Chunk + S.Count);
      }
    for (size_t B = 0; B < At.size(); ++B)
      At[B].assign(size_t(Extent[B]), Never);
  }
  void write(const SliceRef &Dst, int32_t Call) {
    std::fill_n(At[space(Dst.Buffer)].begin() + Dst.Chunk, Dst.Count, Call);
  }
  int32_t first(const SliceRef &Src) const {
    auto Begin = At[space(Src.Buffer)].begin() + Src.Chunk;
    return Src.Count ? *std::min_element(Begin, Begin + Src.Count) : Never;
  }

private:
  size_t space(BufferKind B) const {
    return size_t(InPlace && B == BufferKind::Input ? BufferKind::Output : B);
  }
  bool InPlace;
  std::array<std::vector<int32_t>, 3> At;
};

/// Whether call J, the first from call I on to write what I sends, writes
/// only once I's reader has taken it: J receives from that reader a message
/// it sends in a later step than the one that takes I's.
bool readBeforeWritten(const std::vector<LoweredStep> &Calls, size_t I, size_t J, int Rank,
                       int Channel, const MessageMatch &Match) {
  const kern::ProgramStep &Send = Calls[I].Call, &Write = Calls[J].Call;
  if (J == I || !receives(Write.Op) || Write.RecvPeer != Send.SendPeer)
    return false;
  std::optional<StepRef> Read = Match.receiverOf({Rank, Channel, Calls[I].Index});
  std::optional<StepRef> Sent = Match.senderOf({Rank, Channel, receiveIndex(Calls[J])});
  return Read && Sent && Sent->Rank == Read->Rank && Sent->Channel == Read->Channel &&
         Sent->Index > Read->Index;
}

} // namespace

void markStableSends(std::vector<LoweredStep> &Calls, int Rank, int Channel,
                     const MessageMatch &Match) {
  for (bool InPlace : {false, true}) {
    NextWrites Next(Calls, InPlace);
    for (size_t I = Calls.size(); I-- > 0;) {
      kern::ProgramStep &S = Calls[I].Call;
      if (S.Op != OpKind::Send)
        Next.write(S.Dst, int32_t(I));
      if (!sendsSource(S.Op))
        continue;
      int32_t J = Next.first(S.Src);
      if (J == Never || readBeforeWritten(Calls, I, size_t(J), Rank, Channel, Match))
        S.Stable |= InPlace ? kern::StableInPlace : kern::StableOutOfPlace;
    }
  }
}

} // namespace cclc::plan
