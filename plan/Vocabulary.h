//===- Vocabulary.h - The enumerations every layer shares -------*- C++ -*-===//
//
// One set of names for what the front end, the compiler, the plan format,
// the runtime and the template library all talk about: collectives, the
// topology an algorithm runs over, operations, buffers, element types and
// reduction operators. The last four are the template library's own
// enumerations (kern::), so that a generated kernel, an encoded program and a
// schedule step name an operation by the same value; this header adds their
// spellings, which the .ccl language, the plan format, `cclc compile --dtypes`
// and the runtime's log lines all use.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "common/KernelTypes.h"
#include "common/Program.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace cclc::plan {

using kern::BufferKind;
using kern::DType;
using kern::OpKind;
using kern::Protocol;
using kern::RedOp;

enum class CollectiveKind { AllReduce, AllGather, ReduceScatter, Broadcast, Reduce, AllToAll };
/// "allreduce", "reduce_scatter", ...: the .ccl keyword and the plan's name.
std::string_view collectiveName(CollectiveKind Kind);
std::optional<CollectiveKind> parseCollective(std::string_view Name);
/// True for the collectives that have a root (broadcast, reduce).
bool hasRoot(CollectiveKind Kind);
/// True for the collectives that reduce.
bool reduces(CollectiveKind Kind);
/// nccl-tests' bus-bandwidth factor: busbw = algbw * factor, so that busbw
/// compares with the hardware's link bandwidth whatever the collective.
double busBwFactor(CollectiveKind Kind, int32_t NRanks);

/// Which topology facts an algorithm runs over: one instance per ring or tree
/// channel the search found, or one flat instance over all ranks.
enum class TopologyKind { None, Ring, Tree };
std::string_view topologyName(TopologyKind Kind);
std::optional<TopologyKind> parseTopology(std::string_view Name);

/// "recv_reduce_send": the .ccl operation, the plan's "op" and the effect
/// name of the template library's primitives.
std::string_view opName(OpKind Op);
std::optional<OpKind> parseOp(std::string_view Name);
/// The operations a schedule step may have: every one but the exchanges,
/// which a schedule writes as a send that runs with the receive after it.
std::span<const OpKind> stepOps();
/// True for operations that receive (and so block on a peer).
bool opReceives(OpKind Op);
/// True for operations that send.
bool opSends(OpKind Op);
/// True for operations that read a source slice (Src).
bool opReadsSource(OpKind Op);

/// "input", "output", "scratch".
std::string_view bufferName(BufferKind Buf);
std::optional<BufferKind> parseBuffer(std::string_view Name);
/// 'i', 'o', 's' as MSCCL-IR writes buffers.
char bufferLetter(BufferKind Buf);

/// "f32", "bf16", ...: the names `cclc compile --dtypes` and the runtime use.
std::string_view dtypeName(DType Type);
std::optional<DType> parseDType(std::string_view Name);
std::span<const DType> allDTypes();
/// Bytes of one element.
size_t dtypeBytes(DType Type);

/// "sum", "prod", "min", "max".
std::string_view redOpName(RedOp Op);
std::optional<RedOp> parseRedOp(std::string_view Name);
std::span<const RedOp> allRedOps();

/// "simple", "ll", "ll128": how a step's messages travel (common/Protocol.h).
std::string_view protocolName(Protocol P);
std::optional<Protocol> parseProtocol(std::string_view Name);
std::span<const Protocol> allProtocols();

/// "4 KiB", "1 MiB", "1000 B": exact binary units when the size has them.
std::string formatBytes(uint64_t Bytes);

} // namespace cclc::plan
