//===- CostModel.h - Predicted time of a schedule ---------------*- C++ -*-===//
//
// An alpha-beta model of every link, driven through the schedule's own
// execution model (Schedule.h): each rank runs each channel's steps in order,
// a send takes the link's latency plus bytes / bandwidth (alpha + n * beta per
// message, so cutting a message in F pieces costs F alphas), its message is
// there when it ends, a receive waits for its message, a send waits while the
// connection's BufferSlots messages are still unconsumed, and the two halves
// of an exchange (WithNext) start together. Simulating the steps, rather than
// counting them, captures what closed formulas miss: pipelining across ranks
// after chunking, trees whose levels overlap, and ranks idling at barriers
// the algorithm imposes.
//
// Links come from the LinkTable: the GPU-to-GPU path's bandwidth, shared by
// the channels that send over the same directed pair, each channel moving at
// most the target's per-channel bandwidth (one thread block cannot fill a
// link alone, which is why NCCL runs several channels), and a latency per path
// class and protocol taken from NCCL's tuning model (the per-hop "hardware"
// latencies of its ring: by LL, NVLink 0.6 us, PCI 1 us, network 2.7 us; by
// LL128 1.9, 2.5 and 4 us; by the simple protocol 3.4, 5.7 and 14 us) plus
// its base launch latency once per collective. Where the ranks run on CPUs
// (target::CpuCosts, --cpu) every pair is joined by shared memory, a message
// costs the CPU's latency and moves at its copy rate by the simple protocol
// (the host executors' only one), a reduction reads at the CPU's rate, and a
// call costs the host's call latency. A step's messages travel by
// the step's protocol: a line protocol's message pays its lower latency and
// carries its payload in part of every line (half by LL, 120/128 by LL128),
// so it moves at that share of the bandwidth; a message the runtime sends
// the simple way instead (protocolUsed) costs what the simple protocol's
// does. Without a topology every pair gets DefaultLink. Local copies and
// reductions run at NCCL's LOC bandwidth on GPUs.
//
// --explain predicts every library algorithm and variant at every tabulated
// size, chunk factor and protocol, so the simulation is built to be cheap:
// which step moves when depends only on the order of messages, never on
// their sizes or protocols, so one run carries a time per size and protocol;
// a lane runs again only when a message arrives or leaves on a connection it
// waits on; a channel that repeats another on other chunks is simulated
// once; and a chunk factor is simulated from chunking's stages
// (passes::PipelinePlanner), without building the chunked schedule, nor one
// per protocol. The figures are those of simulating each size, channel and
// chunked schedule with its protocol on its own, bit for bit.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "compiler/cost/LinkTable.h"
#include "plan/Schedule.h"
#include "compiler/target/Target.h"

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace cclc::cost {

/// NCCL's base latency of a collective launch (ring, LL protocol), in us,
/// charged whatever the protocol: a plan's protocols differ by step.
constexpr double LaunchLatencyUs = 6.6;

/// The latency of one message over a path of this type by protocol P, in us.
double linkLatencyUs(topo::PathType Type, sched::Protocol P);

/// The share of a link's bandwidth a message's payload gets by protocol P:
/// all of it by the simple protocol, the payload's part of every line by
/// the line protocols (half by LL, 120/128 by LL128).
double bandwidthShare(sched::Protocol P);

/// The protocol a message of Message bytes of a step of protocol P takes
/// over a path of Type, as the runtime decides: a line protocol's message
/// larger than it sends as lines (kern::LineFormat::MaxBytes) goes by the
/// simple protocol, and so does LL128's over a path whose 128-byte lines
/// may arrive in pieces (anything but a GPU's own memory and NVLink), as
/// NCCL enables LL128 on NVLink alone.
sched::Protocol protocolUsed(topo::PathType Type, sched::Protocol P, double Message);

/// The message size nccl-tests reports for a schedule: the larger of the
/// input and output buffers, in bytes, for a per-unit size of UnitBytes.
uint64_t messageBytes(const sched::Schedule &S, uint64_t UnitBytes);

/// One predicted point: a message size and how fast the schedule moves it.
struct Prediction {
  uint64_t Bytes = 0;
  double TimeUs = 0;
  double AlgBwGBs = 0; ///< Bytes / time.
  double BusBwGBs = 0; ///< AlgBw * busBwFactor.
  int32_t ChunkFactor = 1; ///< The chunking pass's factor that gave this time.
  /// The protocol that gave this time: the one the steps were asked to
  /// take (the protocol pass's), or, when they kept their own, the line
  /// protocol some step sends by.
  sched::Protocol Proto = sched::Protocol::Simple;
};

/// Chunk factors predict() tries: 1, 2, 4, ..., MaxChunkFactor.
constexpr int32_t MaxChunkFactor = 64;

class CostModel {
public:
  explicit CostModel(const target::Target &T)
      : Links(T), ChannelBwGBs(T.ChannelBwGBs), Cpu(T.Cpu) {}

  /// Simulated time, in us, of one run of S on a message of Bytes bytes
  /// (the size messageBytes measures), launch latency included.
  double simulate(const sched::Schedule &S, uint64_t Bytes) const;

  /// For every candidate chunk factor F (1, 2, 4, ..., up to what S allows
  /// and MaxChunkFactor), the prediction at every size of S chunked by F
  /// (the chunking pass). With Protocols, for every factor one list per
  /// protocol P, of S as the protocol pass leaves it with P (a schedule
  /// whose steps all name their primitive gets the one list of its own
  /// protocols); without, S's steps keep theirs.
  std::vector<std::vector<Prediction>>
  predictEachFactor(const sched::Schedule &S, const std::vector<uint64_t> &Sizes,
                    std::span<const sched::Protocol> Protocols = {}) const;

  /// For every size, the time of S chunked by the best factor. Ties go to
  /// the smaller factor.
  std::vector<Prediction> predict(const sched::Schedule &S,
                                  const std::vector<uint64_t> &Sizes) const;

  const LinkTable &links() const { return Links; }

  /// What every call costs before its steps, in us: NCCL's launch latency
  /// on GPUs, the host's call latency on CPUs.
  double launchUs() const;

private:
  LinkTable Links;
  float ChannelBwGBs;
  std::optional<target::CpuCosts> Cpu;
};

/// For every size, the fastest of Curves' predictions (what
/// predictEachFactor returns, or several such lists one after the other).
/// Ties go to the curve listed first.
std::vector<Prediction> fastestOf(const std::vector<std::vector<Prediction>> &Curves);

/// The sizes --explain tabulates: 1 KiB to 1 GiB in powers of 4.
std::vector<uint64_t> explainSizes();

} // namespace cclc::cost
