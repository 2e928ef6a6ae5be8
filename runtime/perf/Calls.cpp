//===- Calls.cpp - Calls whose results every rank knows -------------------===//

#include "runtime/perf/Calls.h"
#include "runtime/api/Types.h"

#include "plan/Assert.h"
#include "common/Dispatch.h"
#include "runtime/exec/Interpreter.h"

#include <cstring>
#include <stdexcept>

namespace cclc::perf {

namespace {

using plan::CollectiveKind;

/// Element I of rank Rank's input to C, as a small integer.
int64_t inputValue(const Call &C, int Rank, int NRanks, size_t I) {
  uint64_t Mix = uint64_t(I) * 13 + uint64_t(Rank) * 7 + 1;
  cclcRedOp_t Op = C.Op;
  if (!reduces(C) || Op == cclcMax || Op == cclcMin)
    return int64_t(Mix % 101);
  if (Op == cclcProd)
    return (I + size_t(Rank)) % 2 ? 2 : 1;
  return int64_t(Mix % uint64_t(120 / NRanks + 1));
}

template <class T> T fromInt(int64_t V) {
  if constexpr (host::IsHalf<T>)
    return T::fromFloat(float(V));
  else
    return T(V);
}

template <class T> bool sameBits(const T &A, const T &B) {
  return std::memcmp(&A, &B, sizeof(T)) == 0;
}

/// Runs Fn.template operator()<T, Op>() for C's type and operator; calls
/// that do not reduce use Sum, whatever C.Op says.
template <class F> decltype(auto) dispatch(const Call &C, F &&Fn) {
  host::RedOp HostOp = reduces(C) ? runtime::hostOp(C.Op) : host::RedOp::Sum;
  return kern::withTypeAndOperator<host::TypeSet>(runtime::hostType(C.Type), HostOp, Fn);
}

} // namespace

bool reduces(const Call &C) { return !C.SendRecv && plan::reduces(C.Collective); }

bool hasRoot(const Call &C) { return !C.SendRecv && plan::hasRoot(C.Collective); }

double busBwFactor(const Call &C, int NRanks) {
  return C.SendRecv ? 1 : plan::busBwFactor(C.Collective, NRanks);
}

bool definedInPlace(const Call &C) { return !C.SendRecv; }

Extents extents(CollectiveKind Collective, size_t Count, int NRanks) {
  size_t N = size_t(NRanks);
  switch (Collective) {
  case CollectiveKind::AllGather: return {Count, Count * N};
  case CollectiveKind::ReduceScatter: return {Count * N, Count};
  case CollectiveKind::AllReduce:
  case CollectiveKind::Broadcast:
  case CollectiveKind::Reduce: return {Count, Count};
  case CollectiveKind::AllToAll: return {Count * N, Count * N};
  }
  CCLC_UNREACHABLE("a collective without buffers");
}

Extents extents(const Call &C, int NRanks) {
  return C.SendRecv ? Extents{C.Count, C.Count} : extents(C.Collective, C.Count, NRanks);
}

cclcResult_t invoke(const Call &C, const void *Send, void *Recv, cclcComm_t Comm,
                    cclcStream_t Stream) {
  if (C.SendRecv) {
    int Rank = 0, NRanks = 0;
    if (cclcResult_t R = cclcCommUserRank(Comm, &Rank); R != cclcSuccess)
      return R;
    if (cclcResult_t R = cclcCommCount(Comm, &NRanks); R != cclcSuccess)
      return R;
    cclcGroupStart();
    // A failed call drops the group, and cclcGroupEnd returns its status.
    cclcSend(Send, C.Count, C.Type, (Rank + 1) % NRanks, Comm, Stream);
    cclcRecv(Recv, C.Count, C.Type, (Rank + NRanks - 1) % NRanks, Comm, Stream);
    return cclcGroupEnd();
  }
  switch (C.Collective) {
  case CollectiveKind::AllReduce:
    return cclcAllReduce(Send, Recv, C.Count, C.Type, C.Op, Comm, Stream);
  case CollectiveKind::AllGather: return cclcAllGather(Send, Recv, C.Count, C.Type, Comm, Stream);
  case CollectiveKind::ReduceScatter:
    return cclcReduceScatter(Send, Recv, C.Count, C.Type, C.Op, Comm, Stream);
  case CollectiveKind::Broadcast:
    return cclcBroadcast(Send, Recv, C.Count, C.Type, C.Root, Comm, Stream);
  case CollectiveKind::Reduce:
    return cclcReduce(Send, Recv, C.Count, C.Type, C.Op, C.Root, Comm, Stream);
  case CollectiveKind::AllToAll: return cclcAllToAll(Send, Recv, C.Count, C.Type, Comm, Stream);
  }
  CCLC_UNREACHABLE("a collective without an entry point");
}

void check(cclcResult_t Result, const std::string &What) {
  if (Result != cclcSuccess)
    throw std::runtime_error(What + " failed: " + cclcGetErrorString(Result) + "\n  " +
                             cclcGetLastError(nullptr));
}

CallBuffers placeBuffers(const Call &C, int Rank, bool InPlace, void *Send, void *Recv) {
  if (!InPlace)
    return {Send, Recv, Send};
  auto *S = static_cast<std::byte *>(Send), *R = static_cast<std::byte *>(Recv);
  if (C.SendRecv)
    return {R, R, R};
  size_t Share = size_t(Rank) * C.Count * plan::dtypeBytes(runtime::hostType(C.Type));
  switch (C.Collective) {
  case CollectiveKind::AllGather: return {R + Share, R, R + Share};
  case CollectiveKind::ReduceScatter: return {S, S + Share, S};
  default: return {R, R, R};
  }
}

void fillInput(const Call &C, int Rank, int NRanks, void *Input) {
  size_t Elems = extents(C, NRanks).Send;
  dispatch(C, [&]<class T, class O>() {
    T *Out = static_cast<T *>(Input);
    for (size_t I = 0; I < Elems; ++I)
      Out[I] = fromInt<T>(inputValue(C, Rank, NRanks, I));
  });
}

size_t countWrong(const Call &Call, int Rank, int NRanks, const void *Recv) {
  CollectiveKind Collective = Call.Collective;
  int Root = Call.Root;
  size_t Count = Call.Count;
  if (!Call.SendRecv && Collective == CollectiveKind::Reduce && Rank != Root)
    return 0;
  return dispatch(Call, [&]<class T, class O>() {
    const T *Got = static_cast<const T *>(Recv);
    auto Value = [&](int From, size_t I) { return fromInt<T>(inputValue(Call, From, NRanks, I)); };
    // What every rank's element I combines to.
    auto Reduced = [&](size_t I) {
      O Fn;
      T Acc = Value(0, I);
      for (int From = 1; From < NRanks; ++From)
        Acc = Fn(Acc, Value(From, I));
      return Acc;
    };
    size_t Wrong = 0;
    if (Call.SendRecv) {
      for (size_t I = 0; I < Count; ++I)
        Wrong += !sameBits(Got[I], Value((Rank + NRanks - 1) % NRanks, I));
      return Wrong;
    }
    switch (Collective) {
    case CollectiveKind::AllReduce:
    case CollectiveKind::Reduce:
      for (size_t I = 0; I < Count; ++I)
        Wrong += !sameBits(Got[I], Reduced(I));
      break;
    case CollectiveKind::ReduceScatter:
      for (size_t I = 0; I < Count; ++I)
        Wrong += !sameBits(Got[I], Reduced(size_t(Rank) * Count + I));
      break;
    case CollectiveKind::AllGather:
      for (int From = 0; From < NRanks; ++From)
        for (size_t I = 0; I < Count; ++I)
          Wrong += !sameBits(Got[size_t(From) * Count + I], Value(From, I));
      break;
    case CollectiveKind::Broadcast:
      for (size_t I = 0; I < Count; ++I)
        Wrong += !sameBits(Got[I], Value(Root, I));
      break;
    case CollectiveKind::AllToAll:
      // Block From of the output is block Rank of rank From's input.
      for (int From = 0; From < NRanks; ++From)
        for (size_t I = 0; I < Count; ++I)
          Wrong += !sameBits(Got[size_t(From) * Count + I], Value(From, size_t(Rank) * Count + I));
      break;
    }
    return Wrong;
  });
}

} // namespace cclc::perf
