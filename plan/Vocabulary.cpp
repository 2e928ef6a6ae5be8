//===- Vocabulary.cpp - The enumerations every layer shares ---------------===//

#include "plan/Vocabulary.h"
#include "plan/Assert.h"

#include <iterator>

namespace cclc::plan {

namespace {

/// An enumerator and its spelling; the tables below are the only spellings.
template <class E> struct Spelling {
  E Value;
  std::string_view Name;
};

template <class E, size_t N>
std::string_view nameIn(const Spelling<E> (&Table)[N], E Value) {
  for (const Spelling<E> &S : Table)
    if (S.Value == Value)
      return S.Name;
  CCLC_UNREACHABLE("an enumerator without a spelling");
}

template <class E, size_t N>
std::optional<E> parseIn(const Spelling<E> (&Table)[N], std::string_view Name) {
  for (const Spelling<E> &S : Table)
    if (S.Name == Name)
      return S.Value;
  return std::nullopt;
}

constexpr Spelling<CollectiveKind> Collectives[] = {
    {CollectiveKind::AllReduce, "allreduce"}, {CollectiveKind::AllGather, "allgather"},
    {CollectiveKind::ReduceScatter, "reduce_scatter"}, {CollectiveKind::Broadcast, "broadcast"},
    {CollectiveKind::Reduce, "reduce"}, {CollectiveKind::AllToAll, "alltoall"},
};

constexpr Spelling<TopologyKind> Topologies[] = {
    {TopologyKind::None, "none"}, {TopologyKind::Ring, "ring"}, {TopologyKind::Tree, "tree"}};

constexpr Spelling<OpKind> Ops[] = {
    {OpKind::Send, "send"},
    {OpKind::Recv, "recv"},
    {OpKind::RecvReduce, "recv_reduce"},
    {OpKind::Copy, "copy"},
    {OpKind::Reduce, "reduce"},
    {OpKind::RecvReduceSend, "recv_reduce_send"},
    {OpKind::RecvCopySend, "recv_copy_send"},
    {OpKind::Exchange, "exchange"},
    {OpKind::ExchangeReduce, "exchange_reduce"},
    {OpKind::RecvReduceCopy, "recv_reduce_copy"},
};
constexpr OpKind StepOps[] = {OpKind::Send,           OpKind::Recv,         OpKind::RecvReduce,
                              OpKind::Copy,           OpKind::Reduce,       OpKind::RecvReduceSend,
                              OpKind::RecvCopySend,   OpKind::RecvReduceCopy};

constexpr Spelling<BufferKind> Buffers[] = {
    {BufferKind::Input, "input"}, {BufferKind::Output, "output"}, {BufferKind::Scratch, "scratch"}};

constexpr Spelling<DType> DTypes[] = {
    {DType::F32, "f32"}, {DType::F64, "f64"}, {DType::F16, "f16"}, {DType::BF16, "bf16"},
    {DType::I8, "i8"},   {DType::U8, "u8"},   {DType::I32, "i32"}, {DType::U32, "u32"},
    {DType::I64, "i64"}, {DType::U64, "u64"},
};
constexpr DType AllDTypes[] = {DType::F32, DType::F64, DType::F16, DType::BF16, DType::I8,
                               DType::U8,  DType::I32, DType::U32, DType::I64,  DType::U64};

constexpr Spelling<RedOp> RedOps[] = {
    {RedOp::Sum, "sum"}, {RedOp::Prod, "prod"}, {RedOp::Min, "min"}, {RedOp::Max, "max"}};
constexpr RedOp AllRedOps[] = {RedOp::Sum, RedOp::Prod, RedOp::Min, RedOp::Max};

constexpr Spelling<Protocol> Protocols[] = {
    {Protocol::Simple, "simple"}, {Protocol::LL, "ll"}, {Protocol::LL128, "ll128"}};
constexpr Protocol AllProtocols[] = {Protocol::Simple, Protocol::LL, Protocol::LL128};

} // namespace

std::string_view collectiveName(CollectiveKind Kind) { return nameIn(Collectives, Kind); }
std::optional<CollectiveKind> parseCollective(std::string_view Name) {
  return parseIn(Collectives, Name);
}

bool hasRoot(CollectiveKind Kind) {
  return Kind == CollectiveKind::Broadcast || Kind == CollectiveKind::Reduce;
}

bool reduces(CollectiveKind Kind) {
  return Kind == CollectiveKind::AllReduce || Kind == CollectiveKind::ReduceScatter ||
         Kind == CollectiveKind::Reduce;
}

double busBwFactor(CollectiveKind Kind, int32_t NRanks) {
  double N = NRanks;
  switch (Kind) {
  case CollectiveKind::AllReduce: return 2 * (N - 1) / N;
  case CollectiveKind::AllGather:
  case CollectiveKind::ReduceScatter:
  case CollectiveKind::AllToAll: return (N - 1) / N;
  case CollectiveKind::Broadcast:
  case CollectiveKind::Reduce: return 1;
  }
  CCLC_UNREACHABLE("unknown collective");
}

std::string_view topologyName(TopologyKind Kind) { return nameIn(Topologies, Kind); }
std::optional<TopologyKind> parseTopology(std::string_view Name) {
  return parseIn(Topologies, Name);
}

std::string_view opName(OpKind Op) { return nameIn(Ops, Op); }
std::optional<OpKind> parseOp(std::string_view Name) { return parseIn(Ops, Name); }
std::span<const OpKind> stepOps() { return StepOps; }

bool opReceives(OpKind Op) {
  return Op != OpKind::Send && Op != OpKind::Copy && Op != OpKind::Reduce;
}

bool opSends(OpKind Op) {
  return Op == OpKind::Send || Op == OpKind::RecvReduceSend || Op == OpKind::RecvCopySend ||
         Op == OpKind::Exchange || Op == OpKind::ExchangeReduce;
}

bool opReadsSource(OpKind Op) {
  return Op == OpKind::Send || Op == OpKind::Copy || Op == OpKind::Reduce ||
         Op == OpKind::Exchange || Op == OpKind::ExchangeReduce || Op == OpKind::RecvReduceCopy;
}

std::string_view bufferName(BufferKind Buf) { return nameIn(Buffers, Buf); }
std::optional<BufferKind> parseBuffer(std::string_view Name) { return parseIn(Buffers, Name); }

char bufferLetter(BufferKind Buf) { return bufferName(Buf)[0]; }

std::string_view dtypeName(DType Type) { return nameIn(DTypes, Type); }
std::optional<DType> parseDType(std::string_view Name) { return parseIn(DTypes, Name); }
std::span<const DType> allDTypes() { return AllDTypes; }

size_t dtypeBytes(DType Type) {
  switch (Type) {
  case DType::I8:
  case DType::U8: return 1;
  case DType::F16:
  case DType::BF16: return 2;
  case DType::F32:
  case DType::I32:
  case DType::U32: return 4;
  case DType::F64:
  case DType::I64:
  case DType::U64: return 8;
  }
  CCLC_UNREACHABLE("unknown element type");
}

std::string_view redOpName(RedOp Op) { return nameIn(RedOps, Op); }
std::optional<RedOp> parseRedOp(std::string_view Name) { return parseIn(RedOps, Name); }
std::span<const RedOp> allRedOps() { return AllRedOps; }

std::string_view protocolName(Protocol P) { return nameIn(Protocols, P); }
std::optional<Protocol> parseProtocol(std::string_view Name) { return parseIn(Protocols, Name); }
std::span<const Protocol> allProtocols() { return AllProtocols; }

std::string formatBytes(uint64_t Bytes) {
  static const char *Units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  size_t Unit = 0;
  while (Unit + 1 < std::size(Units) && Bytes >= 1024 && Bytes % 1024 == 0) {
    Bytes /= 1024;
    ++Unit;
  }
  return std::to_string(Bytes) + " " + Units[Unit];
}

} // namespace cclc::plan
