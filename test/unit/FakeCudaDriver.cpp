//===- FakeCudaDriver.cpp - A stand-in libcuda.so.1 for tests -------------===//
//
// The runtime tells device buffers from host buffers by asking the CUDA
// driver, if the process has loaded it, and only then (DeviceMemory.cpp).
// This library stands in for the driver so that tests can check that logic
// on machines without one: it exports the few entry points the runtime looks
// up, under the driver's names and soname, and answers as the driver does.
// Device memory is one fake address range; what the driver would say
// (initialised or not, a context current on the thread, a primary context
// active) is set by the test through fakeCudaSet().
//
//===----------------------------------------------------------------------===//

#include <cstdint>

namespace {

constexpr int Success = 0;           // CUDA_SUCCESS
constexpr int InvalidValue = 1;      // CUDA_ERROR_INVALID_VALUE
constexpr int NotInitialized = 3;    // CUDA_ERROR_NOT_INITIALIZED
constexpr int InvalidContext = 201;  // CUDA_ERROR_INVALID_CONTEXT
constexpr int MemoryTypeAttribute = 2;
constexpr unsigned DeviceMemory = 2; // CU_MEMORYTYPE_DEVICE
/// The fake device memory: 1 MiB at this address.
constexpr uintptr_t DeviceBase = uintptr_t(0xD000) << 32;
constexpr uintptr_t DeviceBytes = uintptr_t(1) << 20;

bool Initialized = false;
bool PrimaryActive = false;
/// Contexts retained or pushed and not yet released or popped.
int Outstanding = 0;
int PrimaryContext = 0;
thread_local void *Current = nullptr;

} // namespace

extern "C" {

/// The first byte of the fake device memory.
uintptr_t fakeCudaDeviceBase() { return DeviceBase; }

/// What the fake driver says from now on; CurrentContext sets the calling
/// thread's current context.
void fakeCudaSet(bool IsInitialized, bool CurrentContext, bool IsPrimaryActive) {
  Initialized = IsInitialized;
  Current = CurrentContext ? &PrimaryContext : nullptr;
  PrimaryActive = IsPrimaryActive;
}

/// Contexts retained or pushed and not released or popped: 0 when balanced.
int fakeCudaOutstanding() { return Outstanding; }

int cuPointerGetAttribute(void *Data, int Attribute, unsigned long long Pointer) {
  if (!Initialized)
    return NotInitialized;
  if (!Current)
    return InvalidContext;
  if (Attribute != MemoryTypeAttribute || Pointer < DeviceBase ||
      Pointer >= DeviceBase + DeviceBytes)
    return InvalidValue;
  *static_cast<unsigned *>(Data) = DeviceMemory;
  return Success;
}

int cuDeviceGetCount(int *Count) {
  *Count = 1;
  return Initialized ? Success : NotInitialized;
}

int cuDeviceGet(int *Device, int Ordinal) {
  *Device = Ordinal;
  return Success;
}

int cuDevicePrimaryCtxGetState(int, unsigned *Flags, int *Active) {
  *Flags = 0;
  *Active = PrimaryActive;
  return Success;
}

int cuDevicePrimaryCtxRetain(void **Context, int) {
  ++Outstanding;
  *Context = &PrimaryContext;
  return Success;
}

int cuDevicePrimaryCtxRelease_v2(int) {
  --Outstanding;
  return Success;
}

int cuCtxPushCurrent_v2(void *Context) {
  ++Outstanding;
  Current = Context;
  return Success;
}

int cuCtxPopCurrent_v2(void **Context) {
  --Outstanding;
  *Context = Current;
  Current = nullptr;
  return Success;
}

} // extern "C"
