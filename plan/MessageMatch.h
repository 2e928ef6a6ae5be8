//===- MessageMatch.h - Which receive takes which send ----------*- C++ -*-===//
//
// Under the execution model every (sender, receiver, channel) connection is a
// FIFO, so the k-th send from A to B on a channel is taken by the k-th step of
// B that receives from A on that channel. Emitters that draw or name both
// ends of a message (the dot graph, MSCCL-IR's remote slices) pair them here.
// Sends or receives without a partner are left unpaired: proving there are
// none is the verifier's job.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "plan/Schedule.h"

#include <map>
#include <optional>
#include <tuple>

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
  std::map<StepRef, StepRef> Receiver;
  std::map<StepRef, StepRef> Sender;
};

} // namespace cclc::plan
