//===- RuntimeGpuTest.cpp - The C API's GPU entry points without a GPU ----===//
//
// What the GPU path of the C API does where no GPU runs a kernel: a call with
// a stream is refused with a message naming why, and the communicator goes
// on serving host calls; device buffers are told from host buffers through
// the CUDA driver only where the process loaded it (a stand-in driver plays
// it here); host calls never load the CUDA driver, so a process stays free to
// fork ranks; device workspace outlives the kernels that may use it. A
// regular destroy unmaps the peers' memory before it waits for them, and
// frees its own only after; kernel waits have no time limit unless one is
// set.
// (RuntimeApiTest checks the GPU entry points on a host communicator; the
// runs that need a device live in test/gpu.)
//
// Ranks that may touch CUDA run in forked processes with CUDA_VISIBLE_DEVICES
// empty, so that they find no device on any machine and the test process
// itself never initialises CUDA.
//
//===----------------------------------------------------------------------===//

#include "RuntimeTestSupport.h"

#include "runtime/api/Environment.h"
#include "runtime/api/Gpu.h"
#include "runtime/api/Workspace.h"

#include <dlfcn.h>
#include <fstream>
#include <new>
#include <vector>

namespace cclc::test {
namespace {

using plan::CollectiveKind;

/// What a GPU call is refused with in this build.
#ifdef CCLC_TEST_HAVE_CUDA
constexpr cclcResult_t NoGpu = cclcSystemError;
#else
constexpr cclcResult_t NoGpu = cclcInvalidUsage;
#endif

/// Throws unless Result is Expected with a last error containing Text.
void expectRefusal(cclcResult_t Result, cclcResult_t Expected, const std::string &Text,
                   const std::string &What) {
  std::string Message = cclcGetLastError(nullptr);
  expect(Result == Expected, What + " returned " + std::to_string(int(Result)) + " (" + Message +
                                 "), not " + std::to_string(int(Expected)));
  expect(Message.find(Text) != std::string::npos,
         What + ": the message '" + Message + "' lacks '" + Text + "'");
}

/// True when this process mapped the CUDA driver.
bool driverLoaded() {
  std::ifstream Maps("/proc/self/maps");
  std::string Line;
  while (std::getline(Maps, Line))
    if (Line.find("libcuda.so") != std::string::npos)
      return true;
  return false;
}

TEST(GpuWithoutDevice, AStreamIsRefusedAndHostCallsGoOn) {
  ScopedEnv Hidden("CUDA_VISIBLE_DEVICES", "");
  runJob(2, [](cclcComm_t Comm, int Rank) {
    std::vector<float> Buffer(2 * 64);
    int Dummy = 0;
    auto *Stream = reinterpret_cast<cclcStream_t>(&Dummy);
    for (int Attempt = 0; Attempt < 2; ++Attempt) {
      expectRefusal(cclcAllReduce(Buffer.data(), Buffer.data(), 64, cclcFloat32, cclcSum, Comm,
                                  Stream),
                    NoGpu, "allreduce", "an allreduce with a stream");
      expectRefusal(cclcAllGather(Buffer.data(), Buffer.data(), 64, cclcFloat32, Comm, Stream),
                    NoGpu, "NULL stream", "an allgather with a stream");
    }
#ifdef CCLC_TEST_HAVE_CUDA
    // The message names CUDA's own error.
    expectRefusal(cclcBroadcast(Buffer.data(), Buffer.data(), 64, cclcFloat32, 0, Comm, Stream),
                  NoGpu, "CUDA finds no usable GPU: ", "a broadcast with a stream");
#endif
    // Argument checks come first and keep their status.
    expectRefusal(cclcAllReduce(nullptr, Buffer.data(), 64, cclcFloat32, cclcSum, Comm, Stream),
                  cclcInvalidArgument, "sendbuff is null", "a null sendbuff with a stream");
    // Nothing was enqueued: no asynchronous error, and host calls still run.
    cclcResult_t Async = cclcInternalError;
    ok(cclcCommGetAsyncError(Comm, &Async), "cclcCommGetAsyncError");
    expect(Async == cclcSuccess, "a refused GPU call left an asynchronous error");
    for (CollectiveKind Collective : {CollectiveKind::AllReduce, CollectiveKind::Broadcast})
      runChecked(Comm, {Collective, cclcFloat32, cclcSum, 1, 1000}, Rank, 2);
  });
}

TEST(GpuWithoutDevice, DeviceBuffersAreToldApartByALoadedDriverOnly) {
  // In a rank of its own: the stand-in driver stays loaded in its process.
  runJob(1, []([[maybe_unused]] cclcComm_t Comm, int) {
    int Host = 0;
    // Where the stand-in driver puts device memory.
    const void *Device = reinterpret_cast<const void *>(uintptr_t(0xD000) << 32);
    expect(!runtime::isDeviceMemory(Device), "an address is device memory without a driver");
    void *Driver = ::dlopen(CCLC_FAKE_CUDA_DRIVER, RTLD_NOW | RTLD_LOCAL);
    if (!Driver)
      throw std::runtime_error(std::string("cannot load the stand-in driver: ") + ::dlerror());
    auto Set = reinterpret_cast<void (*)(bool, bool, bool)>(::dlsym(Driver, "fakeCudaSet"));
    auto Outstanding = reinterpret_cast<int (*)()>(::dlsym(Driver, "fakeCudaOutstanding"));
    auto Base = reinterpret_cast<uintptr_t (*)()>(::dlsym(Driver, "fakeCudaDeviceBase"));
    expect(Set && Outstanding && Base && Base() == reinterpret_cast<uintptr_t>(Device),
           "the stand-in driver lacks its test entry points");

    Set(/*IsInitialized=*/false, /*CurrentContext=*/false, /*IsPrimaryActive=*/false);
    expect(!runtime::isDeviceMemory(Device), "device memory before the driver is initialised");
    Set(true, true, false);
    expect(runtime::isDeviceMemory(Device), "device memory not told in a current context");
    expect(!runtime::isDeviceMemory(&Host), "host memory taken for device memory");
    expect(!runtime::isDeviceMemory(nullptr), "a null pointer taken for device memory");
    // A thread without a current context asks in the active primary one.
    Set(true, false, true);
    expect(runtime::isDeviceMemory(Device), "device memory not told without a current context");
    expect(Outstanding() == 0, "the context lent for the question was not given back");
    Set(true, false, false);
    expect(!runtime::isDeviceMemory(Device), "device memory told without any context");
#ifndef CCLC_TEST_HAVE_CUDA
    // Without CUDA, device buffers are refused rather than read on the host.
    // (With CUDA the call would start CUDA, which would take the stand-in
    // for the driver.)
    Set(true, true, false);
    void *Buffer = const_cast<void *>(Device);
    expectRefusal(cclcAllReduce(Buffer, Buffer, 4, cclcFloat32, cclcSum, Comm, nullptr), NoGpu,
                  "without CUDA", "an allreduce of device buffers");
#endif
  });
}

TEST(GpuWithoutDevice, HostCallsNeverLoadTheCudaDriver) {
  runJob(2, [](cclcComm_t Comm, int Rank) {
    for (CollectiveKind Collective :
         {CollectiveKind::AllReduce, CollectiveKind::AllGather, CollectiveKind::ReduceScatter,
          CollectiveKind::Broadcast, CollectiveKind::Reduce})
      runChecked(Comm, {Collective, cclcInt32, cclcMax, 0, 777}, Rank, 2);
    cclcResult_t Async = cclcInternalError;
    ok(cclcCommGetAsyncError(Comm, &Async), "cclcCommGetAsyncError");
    expect(Async == cclcSuccess, "a host communicator has an asynchronous error");
    expect(!driverLoaded(), "host calls loaded the CUDA driver, which breaks a later fork");
  });
}

/// Memory that counts the blocks it holds, for the workspace tests.
struct CountedMemory {
  static constexpr std::align_val_t Alignment{64};
  static inline int Held = 0;
  static void *allocate(size_t Bytes) {
    ++Held;
    return ::operator new(Bytes, Alignment);
  }
  static void free(void *Block) {
    --Held;
    ::operator delete(Block, Alignment);
  }
};

TEST(Workspace, HostMemoryIsReplacedAndGpuMemoryKeptUntilDestruction) {
  for (bool Keep : {false, true}) {
    {
      runtime::Workspace Space({CountedMemory::allocate, CountedMemory::free, Keep});
      void *Small = Space.get(runtime::Workspace::Use::Scratch, 100);
      EXPECT_EQ(Space.get(runtime::Workspace::Use::Scratch, 64), Small);
      EXPECT_EQ(reinterpret_cast<uintptr_t>(Small) % 64, 0u);
      EXPECT_NE(Space.get(runtime::Workspace::Use::Scratch, 1000), nullptr);
      Space.get(runtime::Workspace::Use::InputCopy, 10);
      // Growing frees the old block, unless work queued earlier may use it.
      EXPECT_EQ(CountedMemory::Held, Keep ? 3 : 2);
      // Kept blocks at least double, so that growing by little allocates once.
      void *Grown = Space.get(runtime::Workspace::Use::Scratch, 1100);
      if (Keep) {
        EXPECT_EQ(Space.get(runtime::Workspace::Use::Scratch, 2000), Grown);
      }
    }
    EXPECT_EQ(CountedMemory::Held, 0);
  }
}

/// A GPU context that records the teardown calls it gets into a shared log.
class RecordingGpu final : public runtime::GpuContext {
public:
  explicit RecordingGpu(std::vector<std::string> &Log) : Log(Log) {}
  ~RecordingGpu() override { Log.push_back("free own memory"); }

  void checkBuffer(const void *, const char *) override { unexpected("checkBuffer"); }
  void loadKernels(const std::deque<runtime::Algorithm> &) override { unexpected("loadKernels"); }
  runtime::Workspace &space() override { unexpected("space"); }
  void copy(void *, const void *, size_t, void *) override { unexpected("copy"); }
  void launch(const runtime::Request &, const runtime::Algorithm &, const kern::CallArgs &,
              const kern::CallStamp &, void *) override {
    unexpected("launch");
  }
  std::optional<runtime::Classified> failure() override { unexpected("failure"); }
  void synchronize() override { unexpected("synchronize"); }
  void closePeerMemory() override { Log.push_back("unmap peers"); }
  void abort(const std::string &) override { unexpected("abort"); }

private:
  std::vector<std::string> &Log;
  [[noreturn]] static void unexpected(const char *Call) {
    throw std::logic_error(std::string("a teardown does not call ") + Call);
  }
};

TEST(GpuTeardown, PeersAreUnmappedBeforeTheBarrierAndOwnMemoryFreedAfter) {
  std::vector<std::string> Log;
  auto Gpu = std::make_unique<RecordingGpu>(Log);
  runtime::leaveTogether(Gpu.get(), [&] { Log.push_back("barrier"); });
  Gpu.reset();
  EXPECT_EQ(Log, (std::vector<std::string>{"unmap peers", "barrier", "free own memory"}));
  Log.clear();
  runtime::leaveTogether(nullptr, [&] { Log.push_back("barrier"); });
  EXPECT_EQ(Log, std::vector<std::string>{"barrier"}) << "a host communicator only waits";
}

TEST(KernelTimeout, NoLimitUnlessOneIsSet) {
  {
    ScopedEnv Unset("CCLC_KERNEL_TIMEOUT_MS", std::nullopt);
    ScopedEnv Host("CCLC_TIMEOUT_MS", "100");
    EXPECT_EQ(runtime::kernelTimeoutFromEnvironment().count(), 0)
        << "CCLC_TIMEOUT_MS does not bound kernel waits";
  }
  ScopedEnv Set("CCLC_KERNEL_TIMEOUT_MS", "2500");
  EXPECT_EQ(runtime::kernelTimeoutFromEnvironment().count(), 2500);
  for (const char *Bad : {"-1", "soon", "2147483648"}) {
    ScopedEnv Malformed("CCLC_KERNEL_TIMEOUT_MS", Bad);
    try {
      runtime::kernelTimeoutFromEnvironment();
      ADD_FAILURE() << Bad << " is refused";
    } catch (const runtime::ApiError &E) {
      EXPECT_NE(std::string(E.what()).find("CCLC_KERNEL_TIMEOUT_MS=" + std::string(Bad) +
                                           " is not a number of milliseconds in [0, "),
                std::string::npos)
          << E.what();
    }
  }
}

} // namespace
} // namespace cclc::test
