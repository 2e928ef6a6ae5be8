//===- Target.h - What an algorithm is compiled for -------------*- C++ -*-===//
//
// The facts instantiation binds to the DSL's symbolic names: the rank count,
// the node layout, and per channel the ring order and tree links that the
// topology search and connect found (or, for `--nranks N` without a machine,
// rings in rank order and NCCL's double binary trees over the ranks).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace cclc::topo {
struct Connection;
struct System;
} // namespace cclc::topo

namespace cclc::target {

/// One tree channel: every rank's parent (-1 at the root) and children.
struct TreeChannel {
  std::vector<int32_t> Up;
  std::vector<std::vector<int32_t>> Down;
};

/// What a collective's work costs where its ranks are processes on one
/// host's CPUs, joined by shared memory, as the runtime's host calls run
/// (--cpu). A GPU machine's links price a message by NCCL's latencies and a
/// local reduction as free (a GPU's memory outruns its links); on a CPU a
/// message costs a fraction of a microsecond and a reduction reads memory
/// at the rate a copy does, so which algorithm wins at a size changes. The
/// defaults come from cclc-perf and the collective benchmark at 2 and 4
/// ranks of a 2-core x86 host, on cclcMemAlloc's buffers: the copy and
/// reduction rates from the butterfly against halving-doubling from 1 MiB
/// (one reduction of the whole buffer against one of half of it, with as
/// many bytes copied), the latencies from the smallest calls and from where
/// the two algorithms cross.
struct CpuCosts {
  /// A call's fixed cost: argument checks, the choice of plan, dispatch.
  double CallUs = 0.2;
  /// A message's latency: posting it, its lines moving between cores, and
  /// its receiver's wait for it. A message of a few bytes alone costs
  /// 0.3-0.4 us, but a step of a few KiB waits longer for its peer (an
  /// offer of its buffer, more lines, a rank sharing the core), and 1 us
  /// starts halving-doubling's window over the butterfly at 16 KiB, where
  /// 0.4 started it at 4 KiB; measured, the butterfly is faster up to
  /// 16 KiB at 2 and 4 ranks, and the two tie at 64 KiB.
  double MessageUs = 1.0;
  /// How fast a message moves into its receiver's buffer, in GB/s.
  double CopyGBs = 10;
  /// How fast a rank combines a received message into its output, in GB/s
  /// (on top of the message's move).
  double ReduceGBs = 8;
};

struct Target {
  int32_t NRanks = 0;
  int32_t NNodes = 1;
  int32_t LocalRanks = 0; ///< Ranks per node.
  int32_t Root = 0;
  /// Rings[c]: the ranks of ring channel c in ring order.
  std::vector<std::vector<int32_t>> Rings;
  std::vector<TreeChannel> Trees;
  /// What one channel moves at most, in GB/s: the per-channel bandwidth the
  /// ring search found inside a node (NCCL's bwIntra), since a channel is one
  /// thread block and cannot fill a link alone. 0 for no such limit
  /// (--nranks targets, whose single ring channel is all there is).
  float ChannelBwGBs = 0;
  /// The machine, when compiling for a topology: remap auto and the cost
  /// model read link classes and bandwidths from it. Null for --nranks.
  const topo::System *Machine = nullptr;
  /// Set where the ranks run on CPUs (--cpu): the cost model prices their
  /// work by these instead of by a GPU machine's links.
  std::optional<CpuCosts> Cpu;
  /// "8 ranks on mesh8.xml x 2 nodes" or "8 ranks": for headers and logs.
  std::string Description;

  int32_t nodeOf(int32_t Rank) const { return Rank / LocalRanks; }
  int32_t localRankOf(int32_t Rank) const { return Rank % LocalRanks; }
};

/// --nranks N [--nodes M]: M nodes of N / M ranks each, numbered node-major
/// (rank = node * local_nranks + local_rank), one ring channel in rank order,
/// and two tree channels carrying NCCL's double binary tree over the ranks.
/// NNodes must divide NRanks.
Target flatTarget(int32_t NRanks, int32_t NNodes = 1);

/// --nranks N --cpu: flatTarget(N) on one node, its ranks on CPUs at the
/// default CpuCosts.
Target cpuTarget(int32_t NRanks);

/// --topo: the channels connect found for Machine across Conn.NNodes nodes,
/// each moving at most RingBwGBs (the ring search's per-channel bandwidth).
Target topologyTarget(const topo::System &Machine, const topo::Connection &Conn,
                      float RingBwGBs, std::string Description);

} // namespace cclc::target
