//===- Collectives.cpp - NCCL's collectives and point-to-point over cclc's ===//
//
// Each call checks its arguments when it is issued and runs when submit()
// says (at once, or at the end of its group). Collectives with a cclc
// counterpart map onto it; ncclGather and ncclScatter are groups of sends
// and receives, as NCCL builds them. What cclc's operators lack is done on
// the host around a sum: ncclAvg divides the sum by the rank count, and a
// pre-multiplied sum scales a copy of the input first — so those two take
// host buffers only. The 8-bit floats move as bytes. What cclc cannot serve
// (8-bit float reductions, ncclAvg and pre-multiplied sums on device buffers,
// device buffers no loaded plan serves) runs on the real NCCL where the
// communicator forwards there (Forward.h), and is refused otherwise.
//
//===----------------------------------------------------------------------===//

#include "Shim.h"

#include "Debug.h"

#include "common/Dispatch.h"
#include "host/Types.h"

#include <cstring>

namespace cclc::nccl {

namespace {

struct TypeInfo {
  cclcDataType_t Cclc;
  kern::DType Kernel;
  size_t Bytes;
  const char *Name;
  /// An 8-bit float: cclc moves it as bytes but has no arithmetic for it.
  bool Float8 = false;
};

ncclResult_t typeOf(ncclDataType_t Type, TypeInfo &Info) {
  switch (Type) {
  case ncclInt8: Info = {cclcInt8, kern::DType::I8, 1, "int8"}; break;
  case ncclUint8: Info = {cclcUint8, kern::DType::U8, 1, "uint8"}; break;
  case ncclInt32: Info = {cclcInt32, kern::DType::I32, 4, "int32"}; break;
  case ncclUint32: Info = {cclcUint32, kern::DType::U32, 4, "uint32"}; break;
  case ncclInt64: Info = {cclcInt64, kern::DType::I64, 8, "int64"}; break;
  case ncclUint64: Info = {cclcUint64, kern::DType::U64, 8, "uint64"}; break;
  case ncclFloat16: Info = {cclcFloat16, kern::DType::F16, 2, "float16"}; break;
  case ncclFloat32: Info = {cclcFloat32, kern::DType::F32, 4, "float32"}; break;
  case ncclFloat64: Info = {cclcFloat64, kern::DType::F64, 8, "float64"}; break;
  case ncclBfloat16: Info = {cclcBfloat16, kern::DType::BF16, 2, "bfloat16"}; break;
  case ncclFloat8e4m3: Info = {cclcUint8, kern::DType::U8, 1, "float8e4m3", true}; break;
  case ncclFloat8e5m2: Info = {cclcUint8, kern::DType::U8, 1, "float8e5m2", true}; break;
  default:
    return fail(ncclInvalidArgument, "datatype " + std::to_string(int(Type)) + " is not one of NCCL's");
  }
  return ncclSuccess;
}

/// How a reduction runs: a cclc operator, and what the host adds to it;
/// the operator on the real NCCL, where it is forwarded.
struct Reduction {
  cclcRedOp_t Op = cclcSum;
  enum class Extra { None, Average, PreMultiply } Also = Extra::None;
  ncclComm::PreMulSum Scalar;
  ncclRedOp_t RealOp = ncclSum;
};

ncclResult_t reductionOf(ncclComm *C, ncclRedOp_t Op, ncclDataType_t Type, Reduction &R) {
  R.RealOp = Op;
  switch (int(Op)) {
  case ncclSum: R.Op = cclcSum; return ncclSuccess;
  case ncclProd: R.Op = cclcProd; return ncclSuccess;
  case ncclMax: R.Op = cclcMax; return ncclSuccess;
  case ncclMin: R.Op = cclcMin; return ncclSuccess;
  case ncclAvg: R.Also = Reduction::Extra::Average; return ncclSuccess;
  default: break;
  }
  std::lock_guard<std::mutex> Guard(C->Lock);
  size_t Index = size_t(Op) - ncclNumOps;
  if (int(Op) < ncclNumOps || Index >= C->Operators.size() || !C->Operators[Index].Live)
    return fail(ncclInvalidArgument, "operator " + std::to_string(int(Op)) +
                                         " is neither NCCL's nor one this communicator made");
  if (C->Operators[Index].Type != Type)
    return fail(ncclInvalidArgument, "operator " + std::to_string(int(Op)) +
                                         " was made for another datatype");
  R.Also = Reduction::Extra::PreMultiply;
  R.Scalar = C->Operators[Index];
  R.RealOp = R.Scalar.RealOp;
  return ncclSuccess;
}

/// Scales Count elements of Data in place: divides them by Divisor, or
/// multiplies them by the element at Factor.
void scale(void *Data, size_t Count, kern::DType Type, int Divisor, const void *Factor) {
  kern::withElementType<host::TypeSet>(Type, [&]<class T>() {
    T *Elements = static_cast<T *>(Data);
    T By{};
    if (Factor)
      std::memcpy(&By, Factor, sizeof By);
    for (size_t I = 0; I < Count; ++I) {
      if constexpr (host::IsHalf<T>)
        Elements[I] = T::fromFloat(Factor ? Elements[I].toFloat() * By.toFloat()
                                          : Elements[I].toFloat() / float(Divisor));
      else
        Elements[I] = Factor ? T(Elements[I] * By) : T(Elements[I] / T(Divisor));
    }
  });
}

/// The status of Result, a cclc call's, for the call Kind: where cclc has
/// no algorithm for its device buffers and C forwards, Forward runs it on
/// the real NCCL instead (nothing was sent then).
ncclResult_t onCclc(ncclComm *C, const std::string &Kind, cclcResult_t Result,
                    const RealCall *Forward) {
  if (Result == cclcNoAlgorithm && Forward && forwards(C))
    return forward(C, Kind, "no loaded plan serves it on the GPU", *Forward);
  if (Result == cclcSuccess)
    infoOnce(C->Device, Kind + " on cclc", "cclc: " + Kind + " runs on cclc");
  return fromCclc(Result, C->Comm);
}

/// Runs the reduction Kind: Sum(Input, Output) — a cclc call that reduces
/// with R.Op — with what R adds on the host: Input scaled first (into a
/// copy of InCount elements), or OutCount elements of the output divided
/// after (on the ranks that receive it, Receives). What cclc cannot serve
/// runs as Forward, on the real NCCL.
ncclResult_t reduceWith(ncclComm *C, const std::string &Kind, const Reduction &R,
                        const TypeInfo &T, const void *Input, size_t InCount, void *Output,
                        size_t OutCount, bool Receives,
                        const std::function<cclcResult_t(const void *, void *)> &Sum,
                        const RealCall &Forward) {
  if (T.Float8)
    return forward(C, Kind, "cclc has no 8-bit float arithmetic", Forward);
  if (R.Also == Reduction::Extra::None)
    return onCclc(C, Kind, Sum(Input, Output), &Forward);
  if (isDeviceMemory(Input) || isDeviceMemory(Output)) {
    const char *Why = "cclc serves ncclAvg and ncclRedOpCreatePreMulSum's operators on host "
                      "buffers only";
    return forwards(C) ? forward(C, Kind, Why, Forward)
                       : fail(ncclInvalidUsage, std::string(Why) +
                                                    "; set CCLC_NCCL_FORWARD to the real NCCL's "
                                                    "libnccl.so.2 to run them there");
  }
  if (R.Also == Reduction::Extra::Average) {
    if (ncclResult_t Result = onCclc(C, Kind, Sum(Input, Output), nullptr))
      return Result;
    if (Receives)
      scale(Output, OutCount, T.Kernel, C->Size, nullptr);
    return ncclSuccess;
  }
  std::vector<unsigned char> Scaled(InCount * T.Bytes);
  std::memcpy(Scaled.data(), Input, Scaled.size());
  const void *Factor = R.Scalar.Where ? R.Scalar.Where : R.Scalar.Value.data();
  scale(Scaled.data(), InCount, T.Kernel, 1, Factor);
  return onCclc(C, Kind, Sum(Scaled.data(), Output), nullptr);
}

/// Checks that Rank (a call's What) is a rank of C.
ncclResult_t checkRank(const ncclComm *C, int Rank, const char *What) {
  if (Rank < 0 || Rank >= C->Size)
    return fail(ncclInvalidArgument, std::string(What) + " " + std::to_string(Rank) +
                                         " is not a rank of the " + std::to_string(C->Size) +
                                         "-rank communicator");
  return ncclSuccess;
}

/// Checks the communicator and looks up Type.
ncclResult_t prepare(const ncclComm *C, ncclDataType_t Type, TypeInfo &T) {
  ncclResult_t Bad = requireComm(C);
  return Bad ? Bad : typeOf(Type, T);
}

/// Checks a reduction's communicator, Type and Op; 8-bit floats need the
/// real NCCL.
ncclResult_t prepareReduction(ncclComm *C, ncclDataType_t Type, ncclRedOp_t Op, TypeInfo &T,
                              Reduction &R) {
  if (ncclResult_t Bad = prepare(C, Type, T); Bad || (Bad = reductionOf(C, Op, Type, R)))
    return Bad;
  if (T.Float8 && !forwards(C))
    return fail(ncclInvalidArgument,
                std::string("cclc has no 8-bit float arithmetic (") + T.Name +
                    "); set CCLC_NCCL_FORWARD to the real NCCL's libnccl.so.2 to reduce them "
                    "there");
  return ncclSuccess;
}

/// Why operators made with ncclRedOpCreatePreMulSum are made on the real
/// communicator too.
constexpr const char *TwinWhy = "its calls may run there";

/// "allreduce of float32": a kind of call, as the log names it.
std::string kindOf(const char *Call, const TypeInfo &T) {
  return std::string(Call) + " of " + T.Name;
}

/// Submits a checked call; what it throws becomes its status.
template <class Fn> ncclResult_t run(ncclComm *C, Phase When, Fn Body) {
  return submit(C, When, [Body = std::move(Body)] { return guarded(Body); });
}

/// Checks C, Type and (where Role names one) that Rank is a rank of C, then
/// submits Call(T), one cclc call on Type's T; a collective (Name) with no
/// algorithm for its device buffers runs as Forward where C forwards.
template <class Fn>
ncclResult_t direct(ncclComm *C, ncclDataType_t Type, Phase When, const char *Name, Fn Call,
                    int Rank = 0, const char *Role = nullptr, RealCall Forward = nullptr) {
  TypeInfo T;
  if (ncclResult_t Bad = prepare(C, Type, T); Bad || (Role && (Bad = checkRank(C, Rank, Role))))
    return Bad;
  return run(C, When, [=] {
    return onCclc(C, kindOf(Name, T), Call(T), Forward ? &Forward : nullptr);
  });
}

} // namespace

} // namespace cclc::nccl

using namespace cclc::nccl;

extern "C" {

ncclResult_t ncclAllReduce(const void *Send, void *Recv, size_t Count, ncclDataType_t Type,
                           ncclRedOp_t Op, ncclComm_t C, cudaStream_t Stream) {
  TypeInfo T;
  Reduction R;
  if (ncclResult_t Bad = prepareReduction(C, Type, Op, T, R))
    return Bad;
  return run(C, Phase::Collective, [=] {
    return reduceWith(
        C, kindOf("allreduce", T), R, T, Send, Count, Recv, Count, true,
        [&](const void *In, void *Out) {
          return cclcAllReduce(In, Out, Count, T.Cclc, R.Op, C->Comm, Stream);
        },
        [&](const RealNccl &L, ncclComm_t Real) {
          return L.AllReduce(Send, Recv, Count, Type, R.RealOp, Real, Stream);
        });
  });
}

ncclResult_t ncclReduce(const void *Send, void *Recv, size_t Count, ncclDataType_t Type,
                        ncclRedOp_t Op, int Root, ncclComm_t C, cudaStream_t Stream) {
  TypeInfo T;
  Reduction R;
  if (ncclResult_t Bad = prepareReduction(C, Type, Op, T, R);
      Bad || (Bad = checkRank(C, Root, "root")))
    return Bad;
  return run(C, Phase::Collective, [=] {
    return reduceWith(
        C, kindOf("reduce", T), R, T, Send, Count, Recv, Count, C->Rank == Root,
        [&](const void *In, void *Out) {
          return cclcReduce(In, Out, Count, T.Cclc, R.Op, Root, C->Comm, Stream);
        },
        [&](const RealNccl &L, ncclComm_t Real) {
          return L.Reduce(Send, Recv, Count, Type, R.RealOp, Root, Real, Stream);
        });
  });
}

ncclResult_t ncclReduceScatter(const void *Send, void *Recv, size_t RecvCount,
                               ncclDataType_t Type, ncclRedOp_t Op, ncclComm_t C,
                               cudaStream_t Stream) {
  TypeInfo T;
  Reduction R;
  if (ncclResult_t Bad = prepareReduction(C, Type, Op, T, R))
    return Bad;
  return run(C, Phase::Collective, [=] {
    return reduceWith(
        C, kindOf("reducescatter", T), R, T, Send, RecvCount * C->Size, Recv, RecvCount, true,
        [&](const void *In, void *Out) {
          return cclcReduceScatter(In, Out, RecvCount, T.Cclc, R.Op, C->Comm, Stream);
        },
        [&](const RealNccl &L, ncclComm_t Real) {
          return L.ReduceScatter(Send, Recv, RecvCount, Type, R.RealOp, Real, Stream);
        });
  });
}

ncclResult_t ncclBroadcast(const void *Send, void *Recv, size_t Count, ncclDataType_t Type,
                           int Root, ncclComm_t C, cudaStream_t Stream) {
  return direct(
      C, Type, Phase::Collective, "broadcast",
      [=](const TypeInfo &T) {
        return cclcBroadcast(Send, Recv, Count, T.Cclc, Root, C->Comm, Stream);
      },
      Root, "root", [=](const RealNccl &L, ncclComm_t Real) {
        return L.Broadcast(Send, Recv, Count, Type, Root, Real, Stream);
      });
}

ncclResult_t ncclBcast(void *Buffer, size_t Count, ncclDataType_t Type, int Root, ncclComm_t C,
                       cudaStream_t Stream) {
  return ncclBroadcast(Buffer, Buffer, Count, Type, Root, C, Stream);
}

ncclResult_t ncclAllGather(const void *Send, void *Recv, size_t SendCount, ncclDataType_t Type,
                           ncclComm_t C, cudaStream_t Stream) {
  return direct(
      C, Type, Phase::Collective, "allgather",
      [=](const TypeInfo &T) {
        return cclcAllGather(Send, Recv, SendCount, T.Cclc, C->Comm, Stream);
      },
      0, nullptr, [=](const RealNccl &L, ncclComm_t Real) {
        return L.AllGather(Send, Recv, SendCount, Type, Real, Stream);
      });
}

ncclResult_t ncclAlltoAll(const void *Send, void *Recv, size_t Count, ncclDataType_t Type,
                          ncclComm_t C, cudaStream_t Stream) {
  return direct(C, Type, Phase::PointToPoint, "alltoall", [=](const TypeInfo &T) {
    return cclcAllToAll(Send, Recv, Count, T.Cclc, C->Comm, Stream);
  });
}

ncclResult_t ncclGather(const void *Send, void *Recv, size_t Count, ncclDataType_t Type,
                        int Root, ncclComm_t C, cudaStream_t Stream) {
  return direct(
      C, Type, Phase::PointToPoint, "gather",
      [=](const TypeInfo &T) {
        // The root receives from every rank, itself included (a copy).
        cclcResult_t R = cclcSend(Send, Count, T.Cclc, Root, C->Comm, Stream);
        for (int Peer = 0; Peer < C->Size && R == cclcSuccess && C->Rank == Root; ++Peer)
          R = cclcRecv(static_cast<char *>(Recv) + Peer * Count * T.Bytes, Count, T.Cclc, Peer,
                       C->Comm, Stream);
        return R;
      },
      Root, "root");
}

ncclResult_t ncclScatter(const void *Send, void *Recv, size_t Count, ncclDataType_t Type,
                         int Root, ncclComm_t C, cudaStream_t Stream) {
  return direct(
      C, Type, Phase::PointToPoint, "scatter",
      [=](const TypeInfo &T) {
        cclcResult_t R = cclcSuccess;
        for (int Peer = 0; Peer < C->Size && R == cclcSuccess && C->Rank == Root; ++Peer)
          R = cclcSend(static_cast<const char *>(Send) + Peer * Count * T.Bytes, Count, T.Cclc,
                       Peer, C->Comm, Stream);
        return R == cclcSuccess ? cclcRecv(Recv, Count, T.Cclc, Root, C->Comm, Stream) : R;
      },
      Root, "root");
}

ncclResult_t ncclSend(const void *Send, size_t Count, ncclDataType_t Type, int Peer,
                      ncclComm_t C, cudaStream_t Stream) {
  return direct(
      C, Type, Phase::PointToPoint, "send",
      [=](const TypeInfo &T) { return cclcSend(Send, Count, T.Cclc, Peer, C->Comm, Stream); },
      Peer, "peer");
}

ncclResult_t ncclRecv(void *Recv, size_t Count, ncclDataType_t Type, int Peer, ncclComm_t C,
                      cudaStream_t Stream) {
  return direct(
      C, Type, Phase::PointToPoint, "recv",
      [=](const TypeInfo &T) { return cclcRecv(Recv, Count, T.Cclc, Peer, C->Comm, Stream); },
      Peer, "peer");
}

ncclResult_t ncclRedOpCreatePreMulSum(ncclRedOp_t *Op, void *Scalar, ncclDataType_t Type,
                                      ncclScalarResidence_t Residence, ncclComm_t C) {
  TypeInfo T;
  if (ncclResult_t R = prepare(C, Type, T))
    return R;
  if (!Op || !Scalar)
    return fail(ncclInvalidArgument, "op and scalar must not be null");
  ncclComm::PreMulSum Made;
  Made.Type = Type;
  Made.Live = true;
  if (Residence == ncclScalarHostImmediate)
    Made.Value.assign(static_cast<unsigned char *>(Scalar),
                      static_cast<unsigned char *>(Scalar) + T.Bytes);
  else
    Made.Where = Scalar;
  if (forwards(C))
    if (ncclResult_t R = forward(C, kindOf("ncclRedOpCreatePreMulSum", T), TwinWhy,
                                 [&](const RealNccl &L, ncclComm_t Real) {
                                   return L.RedOpCreatePreMulSum(&Made.RealOp, Scalar, Type,
                                                                 Residence, Real);
                                 }))
      return R;
  std::lock_guard<std::mutex> Guard(C->Lock);
  size_t Index = 0;
  while (Index < C->Operators.size() && C->Operators[Index].Live)
    ++Index;
  if (Index == C->Operators.size())
    C->Operators.emplace_back();
  C->Operators[Index] = std::move(Made);
  *Op = ncclRedOp_t(ncclNumOps + Index);
  return ncclSuccess;
}

ncclResult_t ncclRedOpDestroy(ncclRedOp_t Op, ncclComm_t C) {
  if (ncclResult_t Bad = requireComm(C))
    return Bad;
  std::lock_guard<std::mutex> Guard(C->Lock);
  size_t Index = size_t(Op) - ncclNumOps;
  if (int(Op) < ncclNumOps || Index >= C->Operators.size() || !C->Operators[Index].Live)
    return fail(ncclInvalidArgument,
                "operator " + std::to_string(int(Op)) + " was not made by ncclRedOpCreatePreMulSum "
                "on this communicator, or is destroyed already");
  ncclRedOp_t RealOp = C->Operators[Index].RealOp;
  C->Operators[Index] = {};
  if (!forwards(C))
    return ncclSuccess;
  return forward(C, "ncclRedOpDestroy", TwinWhy, [&](const RealNccl &L, ncclComm_t Real) {
    return L.RedOpDestroy(RealOp, Real);
  });
}

} // extern "C"
