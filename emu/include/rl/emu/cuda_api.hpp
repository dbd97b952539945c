// The CUDA runtime API subset the project uses, running on the host.
//
// The device is an honest "CPU emulator" device (cudaGetDeviceProperties says
// so in its name); RL_EMU_DEVICES=N emulates N of them, each host thread with
// its own current device (emu/docs/multi-device.md).  Device memory is host
// memory.  Streams execute work synchronously in the calling thread (a launch
// returns when the kernel is done), so every stream is always idle; events
// record host wall time from std::chrono::steady_clock, so emulated timings
// are CPU times.
//
// Errors follow CUDA: each call returns its status; launch errors are kept as
// the calling thread's last error until cudaGetLastError() reads it.  A failed
// launch (deadlock, exception in a kernel) reports cudaErrorLaunchFailure
// through cudaGetLastError() and the next synchronising call, once; unlike a
// GPU context, the emulator stays usable afterwards.  So do the watchdog
// (cudaErrorLaunchTimeout) and a misaligned rl::ptx access
// (cudaErrorMisalignedAddress).  A device assert (cudaErrorAssert) and
// __trap() (cudaErrorLaunchFailure) are sticky, as on a GPU: every later
// launch, cudaGetLastError, cudaPeekAtLastError, synchronising call,
// cudaMemcpy and cudaMemset returns the error until cudaDeviceReset().
#pragma once

#include <cstddef>
#include <cstdint>

#include "rl/emu/types.hpp"

enum cudaError {
  cudaSuccess = 0,
  cudaErrorInvalidValue = 1,
  cudaErrorMemoryAllocation = 2,
  cudaErrorInitializationError = 3,
  cudaErrorCudartUnloading = 4,
  cudaErrorInvalidConfiguration = 9,
  cudaErrorInvalidPitchValue = 12,
  cudaErrorInvalidSymbol = 13,
  cudaErrorInvalidDevicePointer = 17,
  cudaErrorInvalidMemcpyDirection = 21,
  cudaErrorInsufficientDriver = 35,
  cudaErrorInvalidDeviceFunction = 98,
  cudaErrorNoDevice = 100,
  cudaErrorInvalidDevice = 101,
  cudaErrorNoKernelImageForDevice = 209,
  cudaErrorPeerAccessUnsupported = 217,
  cudaErrorInvalidResourceHandle = 400,
  cudaErrorNotReady = 600,
  cudaErrorIllegalAddress = 700,
  cudaErrorLaunchOutOfResources = 701,
  cudaErrorLaunchTimeout = 702,
  cudaErrorPeerAccessAlreadyEnabled = 704,
  cudaErrorPeerAccessNotEnabled = 705,
  cudaErrorAssert = 710,
  cudaErrorIllegalInstruction = 715,
  cudaErrorMisalignedAddress = 716,
  cudaErrorLaunchFailure = 719,
  cudaErrorNotPermitted = 800,
  cudaErrorNotSupported = 801,
  cudaErrorInvalidClusterSize = 912,
  cudaErrorUnknown = 999,
};
using cudaError_t = cudaError;

enum cudaMemcpyKind {
  cudaMemcpyHostToHost = 0,
  cudaMemcpyHostToDevice = 1,
  cudaMemcpyDeviceToHost = 2,
  cudaMemcpyDeviceToDevice = 3,
  cudaMemcpyDefault = 4,
};

enum cudaFuncAttribute {
  cudaFuncAttributeMaxDynamicSharedMemorySize = 8,
  cudaFuncAttributePreferredSharedMemoryCarveout = 9,
  // 1: clusters of 9 to 16 blocks may launch (8 is the portable maximum).
  cudaFuncAttributeNonPortableClusterSizeAllowed = 14,
};

// The values cudaFuncAttributePreferredSharedMemoryCarveout takes besides a
// percentage (a hint: the emulated multiprocessor has no L1 to trade).
enum cudaSharedCarveout {
  cudaSharedmemCarveoutDefault = -1,
  cudaSharedmemCarveoutMaxShared = 100,
  cudaSharedmemCarveoutMaxL1 = 0,
};

enum cudaDeviceAttr {
  cudaDevAttrMaxThreadsPerBlock = 1,
  cudaDevAttrMaxBlockDimX = 2,
  cudaDevAttrMaxBlockDimY = 3,
  cudaDevAttrMaxBlockDimZ = 4,
  cudaDevAttrMaxGridDimX = 5,
  cudaDevAttrMaxGridDimY = 6,
  cudaDevAttrMaxGridDimZ = 7,
  cudaDevAttrMaxSharedMemoryPerBlock = 8,
  cudaDevAttrTotalConstantMemory = 9,
  cudaDevAttrWarpSize = 10,
  cudaDevAttrMaxRegistersPerBlock = 12,
  cudaDevAttrClockRate = 13,
  cudaDevAttrMultiProcessorCount = 16,
  cudaDevAttrEccEnabled = 32,
  cudaDevAttrPciBusId = 33,
  cudaDevAttrPciDeviceId = 34,
  cudaDevAttrMemoryClockRate = 36,
  cudaDevAttrGlobalMemoryBusWidth = 37,
  cudaDevAttrL2CacheSize = 38,
  cudaDevAttrMaxThreadsPerMultiProcessor = 39,
  cudaDevAttrPciDomainId = 50,
  cudaDevAttrComputeCapabilityMajor = 75,
  cudaDevAttrComputeCapabilityMinor = 76,
  cudaDevAttrMaxSharedMemoryPerMultiprocessor = 81,
  cudaDevAttrMaxRegistersPerMultiprocessor = 82,
  cudaDevAttrMaxSharedMemoryPerBlockOptin = 97,
  cudaDevAttrMaxBlocksPerMultiprocessor = 106,
};

struct CUuuid_st {
  char bytes[16];
};
using cudaUUID_t = CUuuid_st;

// The fields of CUDA 13's cudaDeviceProp that describe this device (same
// names; texture/surface/interop fields are left out).
struct cudaDeviceProp {
  char name[256];
  cudaUUID_t uuid;
  std::size_t totalGlobalMem;
  std::size_t sharedMemPerBlock;
  int regsPerBlock;
  int warpSize;
  std::size_t memPitch;
  int maxThreadsPerBlock;
  int maxThreadsDim[3];
  int maxGridSize[3];
  std::size_t totalConstMem;
  int major;
  int minor;
  std::size_t textureAlignment;
  int multiProcessorCount;
  int integrated;
  int canMapHostMemory;
  int concurrentKernels;
  int ECCEnabled;
  int pciBusID;
  int pciDeviceID;
  int pciDomainID;
  int asyncEngineCount;
  int unifiedAddressing;
  int memoryBusWidth;
  int l2CacheSize;
  int persistingL2CacheMaxSize;
  int maxThreadsPerMultiProcessor;
  std::size_t sharedMemPerMultiprocessor;
  int regsPerMultiprocessor;
  int managedMemory;
  int isMultiGpuBoard;
  int cooperativeLaunch;
  std::size_t sharedMemPerBlockOptin;
  int maxBlocksPerMultiProcessor;
  std::size_t reservedSharedMemPerBlock;
};

using cudaStream_t = struct CUstream_st*;
using cudaEvent_t = struct CUevent_st*;

inline constexpr unsigned int cudaStreamDefault = 0x0;
inline constexpr unsigned int cudaStreamNonBlocking = 0x1;
inline constexpr unsigned int cudaEventDefault = 0x0;
inline constexpr unsigned int cudaEventBlockingSync = 0x1;
inline constexpr unsigned int cudaEventDisableTiming = 0x2;
inline constexpr unsigned int cudaHostAllocDefault = 0x0;
inline constexpr unsigned int cudaHostAllocPortable = 0x1;
inline constexpr unsigned int cudaHostAllocMapped = 0x2;
inline constexpr unsigned int cudaHostAllocWriteCombined = 0x4;

// What cudaPointerGetAttributes says an address is (CUDA 13's names and values).
enum cudaMemoryType {
  cudaMemoryTypeUnregistered = 0,
  cudaMemoryTypeHost = 1,
  cudaMemoryTypeDevice = 2,
  cudaMemoryTypeManaged = 3,
};
// The device of memory that belongs to none (cudaPointerAttributes::device).
inline constexpr int cudaInvalidDeviceId = -2;
struct cudaPointerAttributes {
  cudaMemoryType type;
  int device;  // the owner of device memory; the device current at allocation otherwise
  void* devicePointer;
  void* hostPointer;
  long reserved[8];
};

cudaError_t cudaGetLastError();
cudaError_t cudaPeekAtLastError();
const char* cudaGetErrorString(cudaError_t error);
const char* cudaGetErrorName(cudaError_t error);

cudaError_t cudaGetDeviceCount(int* count);
cudaError_t cudaSetDevice(int device);
cudaError_t cudaGetDevice(int* device);
cudaError_t cudaGetDeviceProperties(cudaDeviceProp* prop, int device);
cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attr, int device);
cudaError_t cudaDriverGetVersion(int* version);
cudaError_t cudaRuntimeGetVersion(int* version);
cudaError_t cudaMemGetInfo(std::size_t* free_bytes, std::size_t* total_bytes);
cudaError_t cudaDeviceSynchronize();
cudaError_t cudaDeviceReset();

// Peer access between emulated devices (every distinct pair can; a device is
// not its own peer).  Enabling is one-way, from the current device to `peer`,
// and what a launch's pointer arguments may reach (emu/docs/multi-device.md).
cudaError_t cudaDeviceCanAccessPeer(int* can_access, int device, int peer);
cudaError_t cudaDeviceEnablePeerAccess(int peer, unsigned int flags);
cudaError_t cudaDeviceDisablePeerAccess(int peer);
// `dst` must lie in memory of dst_device and `src` in memory of src_device
// (cudaErrorInvalidValue otherwise); no peer access is needed.
cudaError_t cudaMemcpyPeer(void* dst, int dst_device, const void* src, int src_device,
                           std::size_t count);
cudaError_t cudaMemcpyPeerAsync(void* dst, int dst_device, const void* src, int src_device,
                                std::size_t count, cudaStream_t stream = nullptr);
cudaError_t cudaPointerGetAttributes(cudaPointerAttributes* attributes, const void* ptr);
// Pinned host memory is mapped and portable: its device address is its host address.
cudaError_t cudaHostGetDevicePointer(void** device_ptr, void* host_ptr, unsigned int flags);

cudaError_t cudaMalloc(void** ptr, std::size_t size);
cudaError_t cudaMallocHost(void** ptr, std::size_t size);
cudaError_t cudaMallocManaged(void** ptr, std::size_t size, unsigned int flags = 1);
cudaError_t cudaHostAlloc(void** ptr, std::size_t size, unsigned int flags);
cudaError_t cudaFree(void* ptr);
cudaError_t cudaFreeHost(void* ptr);
cudaError_t cudaMemcpy(void* dst, const void* src, std::size_t count, cudaMemcpyKind kind);
cudaError_t cudaMemcpyAsync(void* dst, const void* src, std::size_t count, cudaMemcpyKind kind,
                            cudaStream_t stream = nullptr);
cudaError_t cudaMemset(void* ptr, int value, std::size_t count);
cudaError_t cudaMemsetAsync(void* ptr, int value, std::size_t count, cudaStream_t stream = nullptr);

cudaError_t cudaStreamCreate(cudaStream_t* stream);
cudaError_t cudaStreamCreateWithFlags(cudaStream_t* stream, unsigned int flags);
cudaError_t cudaStreamSynchronize(cudaStream_t stream);
cudaError_t cudaStreamQuery(cudaStream_t stream);
cudaError_t cudaStreamDestroy(cudaStream_t stream);

cudaError_t cudaEventCreate(cudaEvent_t* event);
cudaError_t cudaEventCreateWithFlags(cudaEvent_t* event, unsigned int flags);
cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream = nullptr);
cudaError_t cudaEventSynchronize(cudaEvent_t event);
cudaError_t cudaEventQuery(cudaEvent_t event);
cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end);
cudaError_t cudaEventDestroy(cudaEvent_t event);

cudaError_t cudaFuncSetAttribute(const void* func, cudaFuncAttribute attr, int value);
template <typename R, typename... Params>
cudaError_t cudaFuncSetAttribute(R (*func)(Params...), cudaFuncAttribute attr, int value) {
  return cudaFuncSetAttribute(reinterpret_cast<const void*>(func), attr, value);
}

// Device code: stops the kernel with the sticky error cudaErrorLaunchFailure.
[[noreturn]] void __trap();

// __constant__ variables are ordinary globals under the emulator.
template <typename T>
cudaError_t cudaMemcpyToSymbol(T& symbol, const void* src, std::size_t count,
                               std::size_t offset = 0,
                               cudaMemcpyKind kind = cudaMemcpyHostToDevice) {
  if (offset + count > sizeof(T)) return cudaErrorInvalidValue;
  return cudaMemcpy(reinterpret_cast<unsigned char*>(&symbol) + offset, src, count, kind);
}

// ---- the rest of the runtime surface third-party kernels use ----------------

// The runtime's typed overloads (cuda_runtime.h): cudaMalloc(&float_ptr, n).
template <typename T>
cudaError_t cudaMalloc(T** ptr, std::size_t size) {
  return cudaMalloc(reinterpret_cast<void**>(ptr), size);
}
template <typename T>
cudaError_t cudaMallocHost(T** ptr, std::size_t size) {
  return cudaMallocHost(reinterpret_cast<void**>(ptr), size);
}
template <typename T>
cudaError_t cudaMallocManaged(T** ptr, std::size_t size, unsigned int flags = 1) {
  return cudaMallocManaged(reinterpret_cast<void**>(ptr), size, flags);
}
template <typename T>
cudaError_t cudaHostAlloc(T** ptr, std::size_t size, unsigned int flags) {
  return cudaHostAlloc(reinterpret_cast<void**>(ptr), size, flags);
}

// Rows of `width` bytes, `pitch` apart; *pitch is width rounded up to the
// emulated device's textureAlignment (512 bytes).
cudaError_t cudaMallocPitch(void** ptr, std::size_t* pitch, std::size_t width, std::size_t height);
template <typename T>
cudaError_t cudaMallocPitch(T** ptr, std::size_t* pitch, std::size_t width, std::size_t height) {
  return cudaMallocPitch(reinterpret_cast<void**>(ptr), pitch, width, height);
}
// `height` rows of `width` bytes; cudaErrorInvalidPitchValue when a pitch is
// smaller than width or larger than memPitch (CUDA's rules).
cudaError_t cudaMemcpy2D(void* dst, std::size_t dpitch, const void* src, std::size_t spitch,
                         std::size_t width, std::size_t height, cudaMemcpyKind kind);
cudaError_t cudaMemcpy2DAsync(void* dst, std::size_t dpitch, const void* src, std::size_t spitch,
                              std::size_t width, std::size_t height, cudaMemcpyKind kind,
                              cudaStream_t stream = nullptr);

// Streams run their work before the call that enqueues it returns, so every
// recorded event has completed and the wait is satisfied at once; the call
// still validates its handles, which may belong to different devices.
cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int flags = 0);

// cudaLaunchKernelEx's configuration (CUDA 13's layout and numbering; of the
// attributes the emulator takes the cluster shape, rl/emu/launch.hpp).
enum cudaLaunchAttributeID {
  cudaLaunchAttributeIgnore = 0,
  cudaLaunchAttributeClusterDimension = 4,
  cudaLaunchAttributeClusterSchedulingPolicyPreference = 5,
};
union cudaLaunchAttributeValue {
  char pad[64];
  struct {
    unsigned int x;
    unsigned int y;
    unsigned int z;
  } clusterDim;
  int clusterSchedulingPolicyPreference;
};
struct cudaLaunchAttribute {
  cudaLaunchAttributeID id;
  char pad[8 - sizeof(cudaLaunchAttributeID)];
  cudaLaunchAttributeValue val;
};
struct cudaLaunchConfig_t {
  dim3 gridDim;
  dim3 blockDim;
  std::size_t dynamicSmemBytes;
  cudaStream_t stream;
  cudaLaunchAttribute* attrs;
  unsigned int numAttrs;
};

// CUDA 13's cudaFuncAttributes (same fields and order).  What the emulator
// knows: maxThreadsPerBlock (1024: __launch_bounds__ is not seen by the host
// compiler), maxDynamicSharedSizeBytes (48 KiB or what
// cudaFuncSetAttribute set), ptxVersion and binaryVersion (the emulated
// compute capability x10) and preferredShmemCarveout (-1, the default).
// sharedSizeBytes, constSizeBytes, localSizeBytes and numRegs are 0: they are
// properties of nvcc's compiled kernel, which does not exist here.
struct cudaFuncAttributes {
  std::size_t sharedSizeBytes;
  std::size_t constSizeBytes;
  std::size_t localSizeBytes;
  int maxThreadsPerBlock;
  int numRegs;
  int ptxVersion;
  int binaryVersion;
  int cacheModeCA;
  int maxDynamicSharedSizeBytes;
  int preferredShmemCarveout;
  int clusterDimMustBeSet;
  int requiredClusterWidth;
  int requiredClusterHeight;
  int requiredClusterDepth;
  int clusterSchedulingPolicyPreference;
  int nonPortableClusterSizeAllowed;
  int reserved[16];
};
cudaError_t cudaFuncGetAttributes(cudaFuncAttributes* attr, const void* func);
template <typename R, typename... Params>
cudaError_t cudaFuncGetAttributes(cudaFuncAttributes* attr, R (*func)(Params...)) {
  return cudaFuncGetAttributes(attr, reinterpret_cast<const void*>(func));
}

// Blocks of `block_size` threads with `dynamic_shared` bytes that fit on one
// emulated multiprocessor at once: the minimum over its limits on blocks,
// threads (block size rounded up to whole warps) and shared memory, and 0
// when the block cannot launch at all (too many threads, or more dynamic
// shared memory than the kernel's maximum).  Registers are not modelled (the
// host compiler allocates none), so a register-bound kernel may be reported
// more occupancy than a GPU gives it.
cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int* blocks, const void* func,
                                                          int block_size,
                                                          std::size_t dynamic_shared);
template <typename R, typename... Params>
cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int* blocks, R (*func)(Params...),
                                                          int block_size,
                                                          std::size_t dynamic_shared) {
  return cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks, reinterpret_cast<const void*>(func),
                                                       block_size, dynamic_shared);
}
// The block size (a multiple of 32, at most block_size_limit when non-zero)
// with the most resident threads per multiprocessor, the largest of equals,
// and the grid that fills every multiprocessor with it.
cudaError_t cudaOccupancyMaxPotentialBlockSize(int* min_grid_size, int* block_size,
                                               const void* func, std::size_t dynamic_shared = 0,
                                               int block_size_limit = 0);
template <typename R, typename... Params>
cudaError_t cudaOccupancyMaxPotentialBlockSize(int* min_grid_size, int* block_size,
                                               R (*func)(Params...), std::size_t dynamic_shared = 0,
                                               int block_size_limit = 0) {
  return cudaOccupancyMaxPotentialBlockSize(min_grid_size, block_size,
                                            reinterpret_cast<const void*>(func), dynamic_shared,
                                            block_size_limit);
}
