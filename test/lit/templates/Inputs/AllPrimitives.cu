//===- AllPrimitives.cu - Every primitive, type and operator ----*- CUDA -*-===//
//
// Instantiates every primitive of templates/cuda for every element type and
// operator, inside the kernel skeleton, the way generated kernels do, so a
// compile of this file checks the whole device template library.
//
//===----------------------------------------------------------------------===//
#include "cuda/Kernel.cuh"

#include <cstdint>
#include <type_traits>

using namespace cclc::cuda;
namespace kern = cclc::kern;

/// Every primitive of the simple protocol, or (LowLatency) of the LL
/// protocol, in a kernel of its own, as the GPU plan interpreter keeps the
/// LL steps apart from the simple ones. The primitives that only move data take the
/// operator as every primitive does but never apply it, so they are checked
/// with one operator (Sum); those that reduce, with each.
template <class T, class Op, bool LowLatency>
__global__ void everyPrimitive(const KernelArgs Args) {
  constexpr kern::GridShape Shape{2, 2, 2};
  constexpr bool Moves = std::is_same_v<Op, Sum>;
  int Channel = blockIdx.x, Peer = Args.Rank ^ 1;
  forEachRound<T>(Args, Shape, [&](const kern::Layout &L) {
    Slice<const T> In{static_cast<const T *>(Args.Input), &L, 1, Channel * 2, 2};
    Slice<T> Out{static_cast<T *>(Args.Output), &L, 1, Channel * 2, 2};
    Slice<T> Scratch{static_cast<T *>(Args.Scratch), &L, 1, Channel * 2, 1};
    Outbox &To = Args.Net.out(Peer, Channel);
    Inbox &From = Args.Net.in(Peer, Channel);
    if constexpr (LowLatency) {
      if constexpr (Moves) {
        sendLL<T, Op>(To, In);
        recvLL<T, Op>(From, Out);
        recvCopySendLL<T, Op>(From, To, Scratch);
        exchangeLL<T, Op>(To, From, In, Out);
      }
      recvReduceLL<T, Op>(From, Out);
      recvReduceSendLL<T, Op>(From, To, Scratch);
      exchangeReduceLL<T, Op>(To, From, In, Out);
    } else {
      if constexpr (Moves) {
        send<T, Op>(To, In);
        recv<T, Op>(From, Out);
        copy<T, Op>(In, Out);
        recvCopySend<T, Op>(From, To, Scratch);
        exchange<T, Op>(To, From, In, Out);
      }
      recvReduce<T, Op>(From, Out);
      reduce<T, Op>(In, Out);
      recvReduceSend<T, Op>(From, To, Scratch);
      exchangeReduce<T, Op>(To, From, In, Out);
    }
  });
}

template <class T>
constexpr KernelFn EveryOp[] = {
    everyPrimitive<T, Sum, false>, everyPrimitive<T, Prod, false>, everyPrimitive<T, Min, false>,
    everyPrimitive<T, Max, false>, everyPrimitive<T, Sum, true>,   everyPrimitive<T, Prod, true>,
    everyPrimitive<T, Min, true>,  everyPrimitive<T, Max, true>};

/// Visible to other files, so every instantiation is compiled for the device.
extern const KernelFn *const EveryType[];
const KernelFn *const EveryType[] = {EveryOp<float>,         EveryOp<double>,   EveryOp<__half>,
                                     EveryOp<__nv_bfloat16>, EveryOp<int8_t>,   EveryOp<uint8_t>,
                                     EveryOp<int32_t>,       EveryOp<uint32_t>, EveryOp<int64_t>,
                                     EveryOp<uint64_t>};
