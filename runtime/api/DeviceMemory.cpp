//===- DeviceMemory.cpp - Whether a buffer is a GPU's, without CUDA -------===//
//
// A collective called with a NULL stream runs on the GPU when its buffers are
// device memory. Asking the CUDA runtime would initialise CUDA in every
// process that makes a host call, and CUDA does not survive the fork that
// starts ranks. But device memory exists only in a process whose CUDA driver
// is loaded and initialised, and where it is, the driver's
// cuPointerGetAttribute says what memory a pointer addresses. So the driver
// is looked up among the libraries already loaded, never loaded here: in a
// process that never used CUDA the answer is false for the cost of that
// lookup, in any build and on machines without a driver, and a build without
// CUDA can still tell device buffers from host ones and refuse them instead
// of reading them on the host.
//
//===----------------------------------------------------------------------===//

#include "runtime/api/Gpu.h"

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <dlfcn.h>
#include <link.h>
#include <string>
#include <string_view>
#include <mutex>

namespace cclc::runtime {

namespace {

/// The driver API entry points used here, as cuda.h declares them (a stable
/// ABI), by the names the library exports.
struct Driver {
  int (*PointerGetAttribute)(void *Data, int Attribute, unsigned long long Pointer);
  int (*DeviceGetCount)(int *Count);
  int (*DeviceGet)(int *Device, int Ordinal);
  int (*PrimaryCtxGetState)(int Device, unsigned *Flags, int *Active);
  int (*PrimaryCtxRetain)(void **Context, int Device);
  int (*PrimaryCtxRelease)(int Device);
  int (*CtxPushCurrent)(void *Context);
  int (*CtxPopCurrent)(void **Context);
};
constexpr int CudaSuccess = 0;           // CUDA_SUCCESS
constexpr int CudaInvalidContext = 201;  // CUDA_ERROR_INVALID_CONTEXT
constexpr int AttributeMemoryType = 2;   // CU_POINTER_ATTRIBUTE_MEMORY_TYPE
constexpr unsigned MemoryTypeDevice = 2; // CU_MEMORYTYPE_DEVICE

template <class Fn> bool bind(void *Library, const char *Name, Fn &Entry) {
  Entry = reinterpret_cast<Fn>(::dlsym(Library, Name));
  return Entry != nullptr;
}

/// How many objects the loader has loaded so far: a count that changes
/// whenever a library is loaded, read from the first entry of its list.
unsigned long long loaderAdditions() {
  unsigned long long Adds = 0;
  ::dl_iterate_phdr(
      [](struct dl_phdr_info *Info, size_t Size, void *Out) {
        if (Size >= offsetof(struct dl_phdr_info, dlpi_adds) + sizeof(Info->dlpi_adds))
          *static_cast<unsigned long long *>(Out) = Info->dlpi_adds;
        return 1;
      },
      &Adds);
  return Adds;
}

/// The path of the CUDA driver library among the objects the process has
/// loaded; empty when it has none. This walks the loader's list in memory:
/// dlopen with RTLD_NOLOAD and a bare name would search the library path on
/// disk.
std::string loadedDriverPath() {
  std::string Path;
  ::dl_iterate_phdr(
      [](struct dl_phdr_info *Info, size_t, void *Found) {
        std::string_view Name = Info->dlpi_name ? Info->dlpi_name : "";
        std::string_view Base = Name.substr(Name.find_last_of('/') + 1);
        if (Base.substr(0, 9) != "libcuda.s")
          return 0;
        *static_cast<std::string *>(Found) = Name;
        return 1;
      },
      &Path);
  return Path;
}

/// The loaded driver's entry points; null while the driver is not loaded.
/// Once found they are kept, with the reference the lookup took, so that the
/// driver stays loaded. Every host call asks until the driver is found, so
/// the loader's list is searched again only after a library was loaded: a
/// host call in a process without CUDA costs one step of the list, no lock.
const Driver *loadedDriver() {
  static std::mutex Lock;
  static Driver Entries;
  static std::atomic<bool> Found{false};
  /// The loader's count of additions when the list was last searched in vain.
  static std::atomic<unsigned long long> Searched{0};
  if (Found.load(std::memory_order_acquire))
    return &Entries;
  unsigned long long Adds = loaderAdditions();
  if (Adds && Adds == Searched.load(std::memory_order_acquire))
    return nullptr;
  std::lock_guard<std::mutex> Guard(Lock);
  if (Found.load(std::memory_order_relaxed))
    return &Entries;
  std::string Path = loadedDriverPath();
  void *Library = Path.empty() ? nullptr : ::dlopen(Path.c_str(), RTLD_LAZY | RTLD_NOLOAD);
  if (!Library) {
    Searched.store(Adds, std::memory_order_release);
    return nullptr;
  }
  if (!bind(Library, "cuPointerGetAttribute", Entries.PointerGetAttribute) ||
      !bind(Library, "cuDeviceGetCount", Entries.DeviceGetCount) ||
      !bind(Library, "cuDeviceGet", Entries.DeviceGet) ||
      !bind(Library, "cuDevicePrimaryCtxGetState", Entries.PrimaryCtxGetState) ||
      !bind(Library, "cuDevicePrimaryCtxRetain", Entries.PrimaryCtxRetain) ||
      !bind(Library, "cuDevicePrimaryCtxRelease_v2", Entries.PrimaryCtxRelease) ||
      !bind(Library, "cuCtxPushCurrent_v2", Entries.CtxPushCurrent) ||
      !bind(Library, "cuCtxPopCurrent_v2", Entries.CtxPopCurrent)) {
    ::dlclose(Library);
    Searched.store(Adds, std::memory_order_release);
    return nullptr;
  }
  Found.store(true, std::memory_order_release);
  return &Entries;
}

/// The driver's answer for P's memory type, asked in the calling thread's
/// context.
int memoryType(const Driver &D, const void *P, unsigned &Type) {
  return D.PointerGetAttribute(&Type, AttributeMemoryType, reinterpret_cast<uintptr_t>(P));
}

/// The same, asked in the first active primary context made current for the
/// question: a thread that never used CUDA has no current context, and the
/// driver answers only in one (any context of the process knows every
/// address). Never creates a context.
int memoryTypeInActiveContext(const Driver &D, const void *P, unsigned &Type) {
  int Count = 0;
  if (D.DeviceGetCount(&Count) != CudaSuccess)
    return CudaInvalidContext;
  for (int Ordinal = 0; Ordinal < Count; ++Ordinal) {
    int Device = 0, Active = 0;
    unsigned Flags = 0;
    void *Context = nullptr;
    if (D.DeviceGet(&Device, Ordinal) != CudaSuccess ||
        D.PrimaryCtxGetState(Device, &Flags, &Active) != CudaSuccess || !Active ||
        D.PrimaryCtxRetain(&Context, Device) != CudaSuccess)
      continue;
    int Result = CudaInvalidContext;
    if (D.CtxPushCurrent(Context) == CudaSuccess) {
      Result = memoryType(D, P, Type);
      void *Popped = nullptr;
      D.CtxPopCurrent(&Popped);
    }
    D.PrimaryCtxRelease(Device);
    return Result;
  }
  return CudaInvalidContext;
}

} // namespace

bool anyDeviceMemory(std::initializer_list<const void *> Pointers) {
  if (std::all_of(Pointers.begin(), Pointers.end(), [](const void *P) { return !P; }))
    return false;
  const Driver *D = loadedDriver();
  if (!D)
    return false;
  return std::any_of(Pointers.begin(), Pointers.end(), [&](const void *P) {
    if (!P)
      return false;
    // An uninitialised driver answers CUDA_ERROR_NOT_INITIALIZED, and host
    // memory that CUDA does not know an error too: both are host buffers.
    unsigned Type = 0;
    int Result = memoryType(*D, P, Type);
    if (Result == CudaInvalidContext)
      Result = memoryTypeInActiveContext(*D, P, Type);
    return Result == CudaSuccess && Type == MemoryTypeDevice;
  });
}

} // namespace cclc::runtime
