//===- Calls.h - Calls whose results every rank knows -----------*- C++ -*-===//
//
// cclc-perf and the runtime's tests make the same calls: any collective
// through the C API, or nccl-tests' sendrecv, out of place or in place with
// nccl-tests' buffers (allgather's input is its rank's share of the output,
// reduce-scatter's output its rank's share of the input), on inputs whose
// results every rank knows.
//
// Checking needs no data sent anywhere: each rank's input is a function of
// its rank and the element's index, so every rank computes what its output
// must be. The inputs are small integers, chosen per operator so that every
// reduction is exact in every type (sums stay below 128, products are powers
// of two), whatever order an algorithm reduces in; the check compares bits.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/api/cclc.h"

#include "plan/Vocabulary.h"

#include <cstddef>
#include <string>

namespace cclc::perf {

/// One collective call, or one sendrecv.
struct Call {
  plan::CollectiveKind Collective = plan::CollectiveKind::AllReduce;
  cclcDataType_t Type = cclcFloat32;
  /// Ignored by collectives that do not reduce.
  cclcRedOp_t Op = cclcSum;
  /// Ignored by collectives without a root.
  int Root = 0;
  /// The per-rank count, as the C API takes it.
  size_t Count = 0;
  /// nccl-tests' sendrecv instead of Collective: each rank sends Count
  /// elements to the next rank and receives Count from the previous one,
  /// in one group. A pattern of point-to-point calls rather than a
  /// collective that schedules run, so plan::CollectiveKind has no value
  /// for it.
  bool SendRecv = false;
};

/// Whether C reduces, and whether it has a root; neither for sendrecv.
bool reduces(const Call &C);
bool hasRoot(const Call &C);
/// The factor from algorithm to bus bandwidth of C on NRanks, as
/// nccl-tests has it: 1 for sendrecv.
double busBwFactor(const Call &C, int NRanks);
/// False for sendrecv, whose in-place result nccl-tests leaves unchecked:
/// the receive may overwrite what the send has yet to read.
bool definedInPlace(const Call &C);

/// Makes C through the C API: on the host, or enqueued on Stream.
cclcResult_t invoke(const Call &C, const void *Send, void *Recv, cclcComm_t Comm,
                    cclcStream_t Stream = nullptr);

/// Throws std::runtime_error saying that What failed, with the status and
/// the runtime's message, unless Result is cclcSuccess.
void check(cclcResult_t Result, const std::string &What);

/// The buffers of one call of rank Rank: Send and Recv as the call takes
/// them, and Input, where its input starts.
struct CallBuffers {
  void *Send;
  void *Recv;
  void *Input;
};
/// Out of place, Send and Recv themselves; in place, nccl-tests' layout
/// within the buffer that holds the larger side.
CallBuffers placeBuffers(const Call &C, int Rank, bool InPlace, void *Send, void *Recv);

/// Elements of one rank's buffers for a call of the per-rank count Count.
struct Extents {
  size_t Send = 0;
  size_t Recv = 0;
};
Extents extents(plan::CollectiveKind Collective, size_t Count, int NRanks);
Extents extents(const Call &C, int NRanks);

/// Fills Input (extents().Send elements) with rank Rank's input to C.
void fillInput(const Call &C, int Rank, int NRanks, void *Input);

/// The elements of Recv, rank Rank's output of C, that differ from what the
/// call must produce; 0 where the output is undefined (the non-root ranks
/// of reduce).
size_t countWrong(const Call &C, int Rank, int NRanks, const void *Recv);

} // namespace cclc::perf
