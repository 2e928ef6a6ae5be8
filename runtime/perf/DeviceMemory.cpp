//===- DeviceMemory.cpp - Buffers on a CUDA device ------------------------===//
//
// --gpu measures what an application on GPUs gets: device buffers and calls
// enqueued on a stream, timed as nccl-tests times them (wall clock around
// the enqueued calls and the wait for the stream). The wait polls the stream
// and the communicator's asynchronous error, as nccl-tests does, so that a
// kernel that failed after its call returned fails the rank with the
// runtime's message instead of leaving it waiting. Inputs and outputs pass
// through a host staging buffer, outside the timed loops.
//
// Plain C++ on CUDA's runtime API: nothing here runs on the device.
//
//===----------------------------------------------------------------------===//

#include "runtime/perf/Calls.h"
#include "runtime/perf/Memory.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <memory>
#include <sched.h>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace cclc::perf {

namespace {

/// Throws std::runtime_error saying that Doing failed and why, unless Err
/// is cudaSuccess.
void cudaCheck(cudaError_t Err, const std::string &Doing) {
  if (Err != cudaSuccess)
    throw std::runtime_error(Doing + " failed: " + cudaGetErrorString(Err));
}

/// The number of CUDA devices; throws saying why there is none.
int countDevices() {
  int Count = 0;
  cudaError_t Err = cudaGetDeviceCount(&Count);
  if (Err != cudaSuccess)
    throw std::runtime_error(std::string("no CUDA device can be used: ") + cudaGetErrorString(Err) +
                             " (cudaGetDeviceCount)");
  if (Count == 0)
    throw std::runtime_error("no CUDA device can be used: the driver sees none");
  return Count;
}

/// nccl-tests' words for Device: index, PCI bus and name.
std::string describeDevice(int Device) {
  cudaDeviceProp Prop;
  cudaCheck(cudaGetDeviceProperties(&Prop, Device),
            "reading the properties of GPU " + std::to_string(Device));
  char Text[sizeof Prop.name + 32];
  std::snprintf(Text, sizeof Text, "%2d [0x%02x] %s", Device, Prop.pciBusID, Prop.name);
  return Text;
}

struct DeviceFree {
  void operator()(void *P) const { cudaFree(P); }
};
struct StreamDestroy {
  void operator()(cudaStream_t S) const { cudaStreamDestroy(S); }
};
using DeviceBuffer = std::unique_ptr<void, DeviceFree>;
using Stream = std::unique_ptr<std::remove_pointer_t<cudaStream_t>, StreamDestroy>;
using GraphExec = std::shared_ptr<std::remove_pointer_t<cudaGraphExec_t>>;

class DeviceMemory final : public Memory {
public:
  DeviceMemory(size_t Bytes, int LocalRank, int GraphLaunches, cclcComm_t Comm)
      : Device(LocalRank % countDevices()), GraphLaunches(GraphLaunches), Comm(Comm),
        Staging(Bytes) {
    std::string On = " on GPU " + std::to_string(Device);
    // Before the communicator's first call on a GPU: it takes the current one.
    cudaCheck(cudaSetDevice(Device), "cudaSetDevice" + On);
    Description = describeDevice(Device);
    cudaStream_t S = nullptr;
    cudaCheck(cudaStreamCreateWithFlags(&S, cudaStreamNonBlocking), "creating a stream" + On);
    CallStream.reset(S);
    SendBuffer = allocate(Bytes, On);
    RecvBuffer = allocate(Bytes, On);
    Send = SendBuffer.get();
    Recv = RecvBuffer.get();
  }

  cclcStream_t stream() const override { return CallStream.get(); }
  std::string describe() const override { return Description; }

  void write(void *Dst, size_t Bytes, const std::function<void(void *)> &Fill) override {
    Fill(Staging.data());
    cudaCheck(cudaMemcpyAsync(Dst, Staging.data(), Bytes, cudaMemcpyHostToDevice, CallStream.get()),
              "copying an input to the GPU");
    cudaCheck(cudaStreamSynchronize(CallStream.get()), "copying an input to the GPU");
  }

  size_t read(const void *Src, size_t Bytes,
              const std::function<size_t(const void *)> &Check) override {
    cudaCheck(cudaMemcpyAsync(Staging.data(), Src, Bytes, cudaMemcpyDeviceToHost, CallStream.get()),
              "copying an output from the GPU");
    cudaCheck(cudaStreamSynchronize(CallStream.get()), "copying an output from the GPU");
    return Check(Staging.data());
  }

  void wait(const std::string &What) override {
    for (;;) {
      cudaError_t Done = cudaStreamQuery(CallStream.get());
      // Asked after the stream, so a failure of its last kernel is seen.
      cclcResult_t Async = cclcSuccess;
      check(cclcCommGetAsyncError(Comm, &Async), "cclcCommGetAsyncError");
      check(Async, What + " on GPU " + std::to_string(Device));
      if (Done == cudaSuccess)
        return;
      if (Done != cudaErrorNotReady)
        cudaCheck(Done, What + " on GPU " + std::to_string(Device));
      sched_yield();
    }
  }

  Batch batch(int Iters, const std::function<void()> &Call) override {
    if (!GraphLaunches)
      return Memory::batch(Iters, Call);
    const std::string Doing = "capturing the timed calls in a CUDA graph";
    // Thread-local, as nccl-tests captures: a call that made an unsafe CUDA
    // call on this thread while captured fails the capture instead of
    // being timed.
    cudaCheck(cudaStreamBeginCapture(CallStream.get(), cudaStreamCaptureModeThreadLocal), Doing);
    cudaGraph_t Graph = nullptr;
    try {
      for (int I = 0; I < Iters; ++I)
        Call();
    } catch (const std::runtime_error &) {
      // Leave the stream usable for the abort that follows.
      if (cudaStreamEndCapture(CallStream.get(), &Graph) == cudaSuccess && Graph)
        cudaGraphDestroy(Graph);
      throw;
    }
    cudaCheck(cudaStreamEndCapture(CallStream.get(), &Graph), Doing);
    cudaGraphExec_t Exec = nullptr;
    cudaError_t Err = cudaGraphInstantiateWithFlags(&Exec, Graph, 0);
    cudaGraphDestroy(Graph);
    cudaCheck(Err, "instantiating the CUDA graph of the timed calls");
    GraphExec Owned(Exec, cudaGraphExecDestroy);
    cudaStream_t S = CallStream.get();
    return {[Owned, S, Launches = GraphLaunches] {
              for (int L = 0; L < Launches; ++L)
                cudaCheck(cudaGraphLaunch(Owned.get(), S), "launching the CUDA graph");
            },
            Iters * GraphLaunches};
  }

private:
  static DeviceBuffer allocate(size_t Bytes, const std::string &On) {
    void *P = nullptr;
    cudaCheck(cudaMalloc(&P, std::max<size_t>(Bytes, 1)),
              "allocating " + std::to_string(Bytes) + " bytes" + On);
    return DeviceBuffer(P);
  }

  int Device;
  int GraphLaunches;
  cclcComm_t Comm;
  std::string Description;
  /// Declared before the buffers: destroyed after them.
  Stream CallStream;
  DeviceBuffer SendBuffer, RecvBuffer;
  std::vector<std::byte> Staging;
};

} // namespace

std::unique_ptr<Memory> makeDeviceMemory(size_t Bytes, int LocalRank, int GraphLaunches,
                                         cclcComm_t Comm) {
  return std::make_unique<DeviceMemory>(Bytes, LocalRank, GraphLaunches, Comm);
}

int probeDevices(std::FILE *Out) {
  try {
    int Count = countDevices();
    for (int Device = 0; Device < Count; ++Device) {
      // A device the driver lists may still refuse a context.
      std::string Which = "making a context on GPU " + std::to_string(Device);
      cudaCheck(cudaSetDevice(Device), Which);
      cudaCheck(cudaFree(nullptr), Which);
      std::fprintf(Out, "device %s\n", describeDevice(Device).c_str());
    }
    return 0;
  } catch (const std::runtime_error &E) {
    std::fprintf(Out, "%s\n", E.what());
    return 1;
  }
}

} // namespace cclc::perf
