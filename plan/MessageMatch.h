//===- MessageMatch.h - Which receive takes which send ----------*- C++ -*-===//
//
// Under the execution model every (sender, receiver, channel) connection is a
// FIFO, so the k-th send from A to B on a channel is taken by the k-th step of
// B that receives from A on that channel. The chunking pass and the emitters
// that draw or name both ends of a message (the dot graph, MSCCL-IR's remote
// slices) pair them here. Sends or receives without a partner are left
// unpaired: proving there are none is the verifier's job.
//
// The pairs are kept in two flat arrays indexed by step, so that pairing the
// millions of messages of a large ring costs two passes over its steps.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "plan/Schedule.h"

#include <optional>
#include <vector>

namespace cclc::plan {

/// One step: Ranks[Rank].Channels[Channel].Steps[Index].
struct StepRef {
  int32_t Rank = 0;
  int32_t Channel = 0;
  int32_t Index = 0;
  auto operator<=>(const StepRef &) const = default;
};

class MessageMatch {
public:
  explicit MessageMatch(const sched::Schedule &S);
  /// The step that receives what Send sends.
  std::optional<StepRef> receiverOf(StepRef Send) const;
  /// The step whose message Recv receives.
  std::optional<StepRef> senderOf(StepRef Recv) const;

private:
  size_t flat(StepRef At) const {
    return Base[size_t(At.Rank) * NChannels + At.Channel] + size_t(At.Index);
  }
  static std::optional<StepRef> partner(const std::vector<StepRef> &Of, size_t At) {
    return Of[At].Rank < 0 ? std::nullopt : std::optional<StepRef>(Of[At]);
  }

  size_t NChannels = 0;
  /// The flat index of each (rank, channel)'s first step.
  std::vector<size_t> Base;
  /// Per flat step: the receive of its send, and the send of its receive
  /// (a fused step has both); Rank -1 where there is none.
  std::vector<StepRef> Receiver, Sender;
};

} // namespace cclc::plan
