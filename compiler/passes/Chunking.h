//===- Chunking.h - Finer chunks and software pipelining --------*- C++ -*-===//
//
// Large messages go faster when each step is cut into sub-chunks that flow
// through the algorithm one after another: a ring broadcast forwards
// sub-chunk k while it receives sub-chunk k + 1, a tree allreduce reduces
// sub-chunk k + 1 upwards while sub-chunk k is broadcast down. This pass
// refines the chunk grid by a factor F (the data each step moves is
// unchanged), splits every step into F sub-steps and orders them as a
// software pipeline.
//
// Ordering. Every step gets a stage s; sub-step j of a step with stage s runs
// at time s + j, and sub-steps of one time run in (stage, original position)
// order. Both ends of every message get the same stage, which keeps every
// connection's FIFO order identical at sender and receiver. Stages only grow
// along a channel program; they grow where
//   - a step touches data that an earlier step touched in a differently cut
//     slice (a whole-buffer copy before per-chunk sends): the step waits until
//     the sub-chunks it needs are done;
//   - a receive is a reply to what this rank last sent to that peer (a tree
//     node's broadcast-down after its reduce-up): the reply runs one stage
//     behind, so the next sub-chunk's request overlaps it.
// When these constraints have no solution (they can form a cycle through
// messages), the grid is still refined but the steps are not split.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "plan/Schedule.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace cclc::passes {

struct ChunkingResult {
  int32_t Factor = 1;
  /// False when the steps could not be pipelined and were only rescaled.
  bool Pipelined = false;
  /// The pipeline's depth: one more than the largest stage.
  int32_t Stages = 1;
  size_t StepsBefore = 0;
  size_t StepsAfter = 0;
  /// "factor 4, 2 stages, 36 -> 144 steps" for the statistics line.
  std::string summary() const;
};

/// The largest factor that keeps every buffer of S within the chunk grid's
/// index range.
int32_t maxChunkingFactor(const sched::Schedule &S);

/// The stage of every step of every program (rank * NChannels + channel)
/// when the schedule is chunked by a factor, and the largest of them.
struct PipelineStages {
  std::vector<std::vector<int32_t>> Stages;
  int32_t Largest = 0;
};

/// What chunking needs of a schedule whatever the factor: which sends and
/// receives make each message, and which channels repeat another. The cost
/// model asks it for the stages of every factor without building the
/// refined schedules.
class PipelinePlanner {
public:
  explicit PipelinePlanner(const sched::Schedule &S);
  ~PipelinePlanner();

  /// The first channel whose steps Channel runs on other chunks (the same
  /// operations with the same peers on slices of the same sizes, every slice
  /// of a buffer moved by one amount); Channel itself when none does. Such a
  /// channel gets the stages of its representative and, channels never
  /// meeting, finishes at the same time.
  int32_t representative(int32_t Channel) const { return Representative[Channel]; }

  /// The stages chunkSchedule(S, Factor) pipelines S's steps by, read from S
  /// before refinement; nullopt when the messages do not match or the
  /// constraints have no solution (the grid is then refined but the steps
  /// are not split).
  std::optional<PipelineStages> stages(int32_t Factor) const;

  /// The messages, defined beside the stage solver that reads them.
  struct MessageTable;

private:
  const sched::Schedule &S;
  std::vector<int32_t> Representative;
  /// Null when a send or receive has no partner.
  std::unique_ptr<MessageTable> Messages;
};

/// Piece Piece of step Step of a program.
struct SubStep {
  uint32_t Step = 0;
  int32_t Piece = 0;
};

/// The sub-steps of a program whose steps have the stages Stage, in the order
/// chunkSchedule runs them: by time (stage + piece), then stage, then
/// position.
std::vector<SubStep> pipelineOrder(const std::vector<int32_t> &Stage, int32_t Factor);

/// Refines S's chunk grid by Factor (1 <= Factor <= maxChunkingFactor(S)) and
/// pipelines its steps. S must have matching sends and receives (a schedule
/// the verifier accepts).
ChunkingResult chunkSchedule(sched::Schedule &S, int32_t Factor);

} // namespace cclc::passes
