// The CUDA runtime API subset on the host (see rl/emu/cuda_api.hpp).
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <new>
#include <unordered_map>

#include "internal.hpp"
#include "rl/emu/hopper.hpp"

namespace rl::emu::detail {
namespace {

thread_local cudaError_t tl_last_error = cudaSuccess;
thread_local cudaError_t tl_pending_failure = cudaSuccess;
// Device assert and __trap corrupt a GPU context for good: the error is
// process-wide (one context) and outlives cudaGetLastError.
std::atomic<cudaError_t> g_sticky_error{cudaSuccess};

// Device allocations (for cudaFree's validation and cudaMemGetInfo).
std::mutex g_alloc_mutex;
std::unordered_map<void*, std::size_t>& allocations() {
  static std::unordered_map<void*, std::size_t> map;
  return map;
}

constexpr std::align_val_t kAllocAlignment{256};  // cudaMalloc's guarantee

std::size_t physical_memory() {
  return static_cast<std::size_t>(sysconf(_SC_PHYS_PAGES)) *
         static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
}

cudaError_t allocate(void** ptr, std::size_t size) {
  if (ptr == nullptr) return cudaErrorInvalidValue;
  *ptr = nullptr;
  if (size == 0) return cudaSuccess;
  if (size > physical_memory()) return cudaErrorMemoryAllocation;  // more than the "device" has
  void* p = ::operator new(size, kAllocAlignment, std::nothrow);
  if (p == nullptr) return cudaErrorMemoryAllocation;
  std::lock_guard lock(g_alloc_mutex);
  allocations().emplace(p, size);
  *ptr = p;
  return cudaSuccess;
}

// Device memory (cudaMalloc, cudaMallocManaged) starts undefined on a GPU;
// under initcheck it starts as NaN bytes.  Pinned host memory is left alone.
cudaError_t allocate_device(void** ptr, std::size_t size) {
  const cudaError_t error = allocate(ptr, size);
  if (error == cudaSuccess && *ptr != nullptr && poison_enabled())
    std::memset(*ptr, kPoisonByte, size);
  return error;
}

cudaError_t release(void* ptr) {
  if (ptr == nullptr) return cudaSuccess;
  {
    std::lock_guard lock(g_alloc_mutex);
    if (allocations().erase(ptr) == 0) return cudaErrorInvalidValue;
  }
  ::operator delete(ptr, kAllocAlignment);
  return cudaSuccess;
}

// Returns `error` after recording it as the calling thread's last error.
cudaError_t status(cudaError_t error) {
  if (error != cudaSuccess) record_error(error);
  return error;
}

cudaError_t synchronize() {
  const cudaError_t pending = take_pending_failure();
  if (const cudaError_t sticky = sticky_error(); sticky != cudaSuccess) return status(sticky);
  return status(pending);
}

}  // namespace

void record_error(cudaError_t error) {
  tl_last_error = error;
}

void record_launch_failure(cudaError_t error) {
  tl_last_error = error;
  tl_pending_failure = error;
}

void set_sticky_error(cudaError_t error) {
  cudaError_t none = cudaSuccess;
  g_sticky_error.compare_exchange_strong(none, error);  // the first one stays
}

cudaError_t sticky_error() {
  return g_sticky_error.load(std::memory_order_relaxed);
}

cudaError_t take_pending_failure() {
  const cudaError_t e = tl_pending_failure;
  tl_pending_failure = cudaSuccess;
  return e;
}

}  // namespace rl::emu::detail

struct CUstream_st {
  unsigned int flags = 0;
};

struct CUevent_st {
  std::chrono::steady_clock::time_point time{};
  bool recorded = false;
  unsigned int flags = 0;
};

using rl::emu::detail::status;

cudaError_t cudaGetLastError() {
  const cudaError_t e = rl::emu::detail::tl_last_error;
  rl::emu::detail::tl_last_error = cudaSuccess;
  const cudaError_t sticky = rl::emu::detail::sticky_error();
  return sticky != cudaSuccess ? sticky : e;
}

cudaError_t cudaPeekAtLastError() {
  const cudaError_t sticky = rl::emu::detail::sticky_error();
  return sticky != cudaSuccess ? sticky : rl::emu::detail::tl_last_error;
}

const char* cudaGetErrorName(cudaError_t error) {
  switch (error) {
#define RL_EMU_ERROR_NAME(e) \
  case e:                    \
    return #e;
    RL_EMU_ERROR_NAME(cudaSuccess)
    RL_EMU_ERROR_NAME(cudaErrorInvalidValue)
    RL_EMU_ERROR_NAME(cudaErrorMemoryAllocation)
    RL_EMU_ERROR_NAME(cudaErrorInitializationError)
    RL_EMU_ERROR_NAME(cudaErrorCudartUnloading)
    RL_EMU_ERROR_NAME(cudaErrorInvalidConfiguration)
    RL_EMU_ERROR_NAME(cudaErrorInvalidPitchValue)
    RL_EMU_ERROR_NAME(cudaErrorInvalidSymbol)
    RL_EMU_ERROR_NAME(cudaErrorInvalidDevicePointer)
    RL_EMU_ERROR_NAME(cudaErrorInvalidMemcpyDirection)
    RL_EMU_ERROR_NAME(cudaErrorInsufficientDriver)
    RL_EMU_ERROR_NAME(cudaErrorInvalidDeviceFunction)
    RL_EMU_ERROR_NAME(cudaErrorNoDevice)
    RL_EMU_ERROR_NAME(cudaErrorInvalidDevice)
    RL_EMU_ERROR_NAME(cudaErrorNoKernelImageForDevice)
    RL_EMU_ERROR_NAME(cudaErrorInvalidResourceHandle)
    RL_EMU_ERROR_NAME(cudaErrorNotReady)
    RL_EMU_ERROR_NAME(cudaErrorIllegalAddress)
    RL_EMU_ERROR_NAME(cudaErrorLaunchOutOfResources)
    RL_EMU_ERROR_NAME(cudaErrorLaunchTimeout)
    RL_EMU_ERROR_NAME(cudaErrorAssert)
    RL_EMU_ERROR_NAME(cudaErrorIllegalInstruction)
    RL_EMU_ERROR_NAME(cudaErrorMisalignedAddress)
    RL_EMU_ERROR_NAME(cudaErrorLaunchFailure)
    RL_EMU_ERROR_NAME(cudaErrorNotPermitted)
    RL_EMU_ERROR_NAME(cudaErrorNotSupported)
    RL_EMU_ERROR_NAME(cudaErrorUnknown)
#undef RL_EMU_ERROR_NAME
  }
  return "unrecognized error code";
}

// CUDA's own wording for each error.
const char* cudaGetErrorString(cudaError_t error) {
  switch (error) {
    case cudaSuccess:
      return "no error";
    case cudaErrorInvalidValue:
      return "invalid argument";
    case cudaErrorMemoryAllocation:
      return "out of memory";
    case cudaErrorInitializationError:
      return "initialization error";
    case cudaErrorCudartUnloading:
      return "driver shutting down";
    case cudaErrorInvalidConfiguration:
      return "invalid configuration argument";
    case cudaErrorInvalidPitchValue:
      return "invalid pitch argument";
    case cudaErrorInvalidSymbol:
      return "invalid device symbol";
    case cudaErrorInvalidDevicePointer:
      return "invalid device pointer";
    case cudaErrorInvalidMemcpyDirection:
      return "invalid copy direction for memcpy";
    case cudaErrorInsufficientDriver:
      return "CUDA driver version is insufficient for CUDA runtime version";
    case cudaErrorInvalidDeviceFunction:
      return "invalid device function";
    case cudaErrorNoDevice:
      return "no CUDA-capable device is detected";
    case cudaErrorInvalidDevice:
      return "invalid device ordinal";
    case cudaErrorNoKernelImageForDevice:
      return "no kernel image is available for execution on the device";
    case cudaErrorInvalidResourceHandle:
      return "invalid resource handle";
    case cudaErrorNotReady:
      return "device not ready";
    case cudaErrorIllegalAddress:
      return "an illegal memory access was encountered";
    case cudaErrorLaunchOutOfResources:
      return "too many resources requested for launch";
    case cudaErrorLaunchTimeout:
      return "the launch timed out and was terminated";
    case cudaErrorAssert:
      return "device-side assert triggered";
    case cudaErrorIllegalInstruction:
      return "an illegal instruction was encountered";
    case cudaErrorMisalignedAddress:
      return "misaligned address";
    case cudaErrorLaunchFailure:
      return "unspecified launch failure";
    case cudaErrorNotPermitted:
      return "operation not permitted";
    case cudaErrorNotSupported:
      return "operation not supported";
    case cudaErrorUnknown:
      return "unknown error";
  }
  return "unrecognized error code";
}

cudaError_t cudaGetDeviceCount(int* count) {
  if (count == nullptr) return status(cudaErrorInvalidValue);
  *count = 1;
  return cudaSuccess;
}

cudaError_t cudaSetDevice(int device) {
  return device == 0 ? cudaSuccess : status(cudaErrorInvalidDevice);
}

cudaError_t cudaGetDevice(int* device) {
  if (device == nullptr) return status(cudaErrorInvalidValue);
  *device = 0;
  return cudaSuccess;
}

// The emulated device: compute capability 8.9 because the emulator implements
// the warp-level instructions up to sm_89 (mma incl. fp8, ldmatrix,
// cp.async); RL_EMU_CC picks another (rl/emu/arch.hpp says which instruction
// families each has: 9.0 adds sm_90a's wgmma, TMA and mbarrier).  One "multiprocessor" per host
// worker, each running one block at a time.  Clocks and bus width are not meaningful and are 0.
cudaError_t cudaGetDeviceProperties(cudaDeviceProp* prop, int device) {
  using namespace rl::emu::detail;
  if (prop == nullptr) return status(cudaErrorInvalidValue);
  if (device != 0) return status(cudaErrorInvalidDevice);
  *prop = cudaDeviceProp{};
  std::snprintf(prop->name, sizeof prop->name, "CPU emulator (bench_roofline emu)");
  prop->totalGlobalMem = physical_memory();
  prop->sharedMemPerBlock = kDefaultSharedPerBlock;
  prop->regsPerBlock = 65536;
  prop->warpSize = 32;
  prop->memPitch = 2147483647;
  prop->maxThreadsPerBlock = 1024;
  prop->maxThreadsDim[0] = 1024;
  prop->maxThreadsDim[1] = 1024;
  prop->maxThreadsDim[2] = 64;
  prop->maxGridSize[0] = 2147483647;
  prop->maxGridSize[1] = 65535;
  prop->maxGridSize[2] = 65535;
  prop->totalConstMem = 65536;
  prop->major = rl::emu::compute_capability() / 10;  // RL_EMU_CC
  prop->minor = rl::emu::compute_capability() % 10;
  prop->textureAlignment = 512;
  prop->multiProcessorCount = rl::emu::worker_threads();
  prop->integrated = 1;  // "device" memory is host memory
  prop->canMapHostMemory = 1;
  prop->concurrentKernels = 0;
  prop->asyncEngineCount = 0;
  prop->unifiedAddressing = 1;
  prop->l2CacheSize =
      static_cast<int>(sysconf(_SC_LEVEL2_CACHE_SIZE) > 0 ? sysconf(_SC_LEVEL2_CACHE_SIZE) : 0);
  prop->maxThreadsPerMultiProcessor = 1024;
  prop->sharedMemPerMultiprocessor = kSharedPerMultiprocessor;
  prop->regsPerMultiprocessor = 65536;
  prop->managedMemory = 1;
  prop->sharedMemPerBlockOptin = kOptInSharedPerBlock;
  prop->maxBlocksPerMultiProcessor = 1;
  prop->reservedSharedMemPerBlock = 0;
  return cudaSuccess;
}

cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attr, int device) {
  if (value == nullptr) return status(cudaErrorInvalidValue);
  cudaDeviceProp p;
  if (const cudaError_t e = cudaGetDeviceProperties(&p, device); e != cudaSuccess) return e;
  switch (attr) {
    case cudaDevAttrMaxThreadsPerBlock:
      *value = p.maxThreadsPerBlock;
      break;
    case cudaDevAttrMaxBlockDimX:
    case cudaDevAttrMaxBlockDimY:
    case cudaDevAttrMaxBlockDimZ:
      *value = p.maxThreadsDim[attr - cudaDevAttrMaxBlockDimX];
      break;
    case cudaDevAttrMaxGridDimX:
    case cudaDevAttrMaxGridDimY:
    case cudaDevAttrMaxGridDimZ:
      *value = p.maxGridSize[attr - cudaDevAttrMaxGridDimX];
      break;
    case cudaDevAttrMaxSharedMemoryPerBlock:
      *value = static_cast<int>(p.sharedMemPerBlock);
      break;
    case cudaDevAttrTotalConstantMemory:
      *value = static_cast<int>(p.totalConstMem);
      break;
    case cudaDevAttrWarpSize:
      *value = p.warpSize;
      break;
    case cudaDevAttrMaxRegistersPerBlock:
      *value = p.regsPerBlock;
      break;
    case cudaDevAttrClockRate:
    case cudaDevAttrMemoryClockRate:
    case cudaDevAttrGlobalMemoryBusWidth:
    case cudaDevAttrEccEnabled:
    case cudaDevAttrPciBusId:
    case cudaDevAttrPciDeviceId:
      *value = 0;
      break;
    case cudaDevAttrMultiProcessorCount:
      *value = p.multiProcessorCount;
      break;
    case cudaDevAttrL2CacheSize:
      *value = p.l2CacheSize;
      break;
    case cudaDevAttrMaxThreadsPerMultiProcessor:
      *value = p.maxThreadsPerMultiProcessor;
      break;
    case cudaDevAttrComputeCapabilityMajor:
      *value = p.major;
      break;
    case cudaDevAttrComputeCapabilityMinor:
      *value = p.minor;
      break;
    case cudaDevAttrMaxSharedMemoryPerMultiprocessor:
      *value = static_cast<int>(p.sharedMemPerMultiprocessor);
      break;
    case cudaDevAttrMaxRegistersPerMultiprocessor:
      *value = p.regsPerMultiprocessor;
      break;
    case cudaDevAttrMaxSharedMemoryPerBlockOptin:
      *value = static_cast<int>(p.sharedMemPerBlockOptin);
      break;
    case cudaDevAttrMaxBlocksPerMultiprocessor:
      *value = p.maxBlocksPerMultiProcessor;
      break;
    default:
      return status(cudaErrorInvalidValue);
  }
  return cudaSuccess;
}

// No CUDA driver is involved (0, as CUDA reports without a driver); the
// runtime API subset follows CUDA 13.0.
cudaError_t cudaDriverGetVersion(int* version) {
  if (version == nullptr) return status(cudaErrorInvalidValue);
  *version = 0;
  return cudaSuccess;
}

cudaError_t cudaRuntimeGetVersion(int* version) {
  if (version == nullptr) return status(cudaErrorInvalidValue);
  *version = 13000;
  return cudaSuccess;
}

cudaError_t cudaMemGetInfo(std::size_t* free_bytes, std::size_t* total_bytes) {
  if (free_bytes == nullptr || total_bytes == nullptr) return status(cudaErrorInvalidValue);
  *total_bytes = rl::emu::detail::physical_memory();
  *free_bytes = static_cast<std::size_t>(sysconf(_SC_AVPHYS_PAGES)) *
                static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  return cudaSuccess;
}

cudaError_t cudaDeviceSynchronize() {
  return rl::emu::detail::synchronize();
}

cudaError_t cudaDeviceReset() {
  rl::emu::detail::g_sticky_error.store(cudaSuccess);
  rl::emu::detail::take_pending_failure();
  rl::emu::detail::tl_last_error = cudaSuccess;
  return cudaSuccess;
}

cudaError_t cudaMalloc(void** ptr, std::size_t size) {
  return status(rl::emu::detail::allocate_device(ptr, size));
}
cudaError_t cudaMallocHost(void** ptr, std::size_t size) {
  return status(rl::emu::detail::allocate(ptr, size));
}
cudaError_t cudaMallocManaged(void** ptr, std::size_t size, unsigned int) {
  return status(rl::emu::detail::allocate_device(ptr, size));
}
cudaError_t cudaHostAlloc(void** ptr, std::size_t size, unsigned int) {
  return status(rl::emu::detail::allocate(ptr, size));
}
cudaError_t cudaFree(void* ptr) {
  return status(rl::emu::detail::release(ptr));
}
cudaError_t cudaFreeHost(void* ptr) {
  return status(rl::emu::detail::release(ptr));
}

cudaError_t cudaMemcpy(void* dst, const void* src, std::size_t count, cudaMemcpyKind kind) {
  if (const cudaError_t sticky = rl::emu::detail::sticky_error(); sticky != cudaSuccess)
    return status(sticky);  // cudaMemcpy synchronises
  if (kind < cudaMemcpyHostToHost || kind > cudaMemcpyDefault)
    return status(cudaErrorInvalidMemcpyDirection);
  if (count == 0) return cudaSuccess;
  if (dst == nullptr || src == nullptr) return status(cudaErrorInvalidValue);
  std::memmove(dst, src, count);
  return cudaSuccess;
}

cudaError_t cudaMemcpyAsync(void* dst, const void* src, std::size_t count, cudaMemcpyKind kind,
                            cudaStream_t) {
  return cudaMemcpy(dst, src, count, kind);
}

cudaError_t cudaMemset(void* ptr, int value, std::size_t count) {
  if (const cudaError_t sticky = rl::emu::detail::sticky_error(); sticky != cudaSuccess)
    return status(sticky);
  if (count == 0) return cudaSuccess;
  if (ptr == nullptr) return status(cudaErrorInvalidValue);
  std::memset(ptr, value, count);
  return cudaSuccess;
}

cudaError_t cudaMemsetAsync(void* ptr, int value, std::size_t count, cudaStream_t) {
  return cudaMemset(ptr, value, count);
}

cudaError_t cudaStreamCreate(cudaStream_t* stream) {
  return cudaStreamCreateWithFlags(stream, 0);
}

cudaError_t cudaStreamCreateWithFlags(cudaStream_t* stream, unsigned int flags) {
  if (stream == nullptr) return status(cudaErrorInvalidValue);
  *stream = new CUstream_st{flags};
  return cudaSuccess;
}

cudaError_t cudaStreamSynchronize(cudaStream_t) {
  return rl::emu::detail::synchronize();
}
cudaError_t cudaStreamQuery(cudaStream_t) {
  return cudaSuccess;
}

cudaError_t cudaStreamDestroy(cudaStream_t stream) {
  if (stream == nullptr) return status(cudaErrorInvalidResourceHandle);
  delete stream;
  return cudaSuccess;
}

cudaError_t cudaEventCreate(cudaEvent_t* event) {
  return cudaEventCreateWithFlags(event, 0);
}

cudaError_t cudaEventCreateWithFlags(cudaEvent_t* event, unsigned int flags) {
  if (event == nullptr) return status(cudaErrorInvalidValue);
  *event = new CUevent_st{{}, false, flags};
  return cudaSuccess;
}

cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t) {
  if (event == nullptr) return status(cudaErrorInvalidResourceHandle);
  event->time = std::chrono::steady_clock::now();
  event->recorded = true;
  return cudaSuccess;
}

cudaError_t cudaEventSynchronize(cudaEvent_t event) {
  if (event == nullptr) return status(cudaErrorInvalidResourceHandle);
  return rl::emu::detail::synchronize();
}

cudaError_t cudaEventQuery(cudaEvent_t event) {
  if (event == nullptr) return status(cudaErrorInvalidResourceHandle);
  return cudaSuccess;
}

cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end) {
  if (ms == nullptr) return status(cudaErrorInvalidValue);
  if (start == nullptr || end == nullptr) return status(cudaErrorInvalidResourceHandle);
  if (!start->recorded || !end->recorded) return status(cudaErrorInvalidResourceHandle);
  if ((start->flags & cudaEventDisableTiming) != 0 || (end->flags & cudaEventDisableTiming) != 0)
    return status(cudaErrorInvalidResourceHandle);
  *ms = std::chrono::duration<float, std::milli>(end->time - start->time).count();
  return cudaSuccess;
}

cudaError_t cudaEventDestroy(cudaEvent_t event) {
  if (event == nullptr) return status(cudaErrorInvalidResourceHandle);
  delete event;
  return cudaSuccess;
}

cudaError_t cudaFuncSetAttribute(const void* func, cudaFuncAttribute attr, int value) {
  switch (attr) {
    case cudaFuncAttributeMaxDynamicSharedMemorySize:
      return status(rl::emu::detail::set_max_dynamic_shared(func, value));
    case cudaFuncAttributePreferredSharedMemoryCarveout:
      if (func == nullptr) return status(cudaErrorInvalidDeviceFunction);
      return value >= -1 && value <= 100 ? cudaSuccess : status(cudaErrorInvalidValue);
  }
  return status(cudaErrorInvalidValue);
}

cudaError_t cudaMallocPitch(void** ptr, std::size_t* pitch, std::size_t width, std::size_t height) {
  if (pitch == nullptr) return status(cudaErrorInvalidValue);
  constexpr std::size_t kPitchAlignment = 512;  // cudaDeviceProp::textureAlignment
  *pitch = (width + kPitchAlignment - 1) / kPitchAlignment * kPitchAlignment;
  return cudaMalloc(ptr, *pitch * height);
}

cudaError_t cudaMemcpy2D(void* dst, std::size_t dpitch, const void* src, std::size_t spitch,
                         std::size_t width, std::size_t height, cudaMemcpyKind kind) {
  if (kind < cudaMemcpyHostToHost || kind > cudaMemcpyDefault)
    return status(cudaErrorInvalidMemcpyDirection);
  constexpr std::size_t kMaxPitch = 2147483647;  // cudaDeviceProp::memPitch
  if (width > dpitch || width > spitch || dpitch > kMaxPitch || spitch > kMaxPitch)
    return status(cudaErrorInvalidPitchValue);
  if (width == 0 || height == 0) return cudaSuccess;
  if (dst == nullptr || src == nullptr) return status(cudaErrorInvalidValue);
  for (std::size_t row = 0; row < height; ++row)
    std::memmove(static_cast<unsigned char*>(dst) + row * dpitch,
                 static_cast<const unsigned char*>(src) + row * spitch, width);
  return cudaSuccess;
}

cudaError_t cudaMemcpy2DAsync(void* dst, std::size_t dpitch, const void* src, std::size_t spitch,
                              std::size_t width, std::size_t height, cudaMemcpyKind kind,
                              cudaStream_t) {
  return cudaMemcpy2D(dst, dpitch, src, spitch, width, height, kind);
}

cudaError_t cudaStreamWaitEvent(cudaStream_t, cudaEvent_t event, unsigned int flags) {
  if (event == nullptr) return status(cudaErrorInvalidResourceHandle);
  // cudaEventWaitDefault (0) and cudaEventWaitExternal (1) are the flags CUDA defines.
  if (flags > 1U) return status(cudaErrorInvalidValue);
  return cudaSuccess;
}

cudaError_t cudaFuncGetAttributes(cudaFuncAttributes* attr, const void* func) {
  if (attr == nullptr) return status(cudaErrorInvalidValue);
  if (func == nullptr) return status(cudaErrorInvalidDeviceFunction);
  *attr = cudaFuncAttributes{};
  attr->maxThreadsPerBlock = 1024;
  attr->ptxVersion = rl::emu::compute_capability();
  attr->binaryVersion = rl::emu::compute_capability();
  attr->maxDynamicSharedSizeBytes = static_cast<int>(rl::emu::detail::max_dynamic_shared(func));
  attr->preferredShmemCarveout = -1;
  return cudaSuccess;
}

cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int* blocks, const void* func,
                                                          int block_size,
                                                          std::size_t dynamic_shared) {
  if (blocks == nullptr || block_size <= 0) return status(cudaErrorInvalidValue);
  if (func == nullptr) return status(cudaErrorInvalidDeviceFunction);
  cudaDeviceProp prop;
  if (const cudaError_t e = cudaGetDeviceProperties(&prop, 0); e != cudaSuccess) return e;
  *blocks = 0;
  if (block_size > prop.maxThreadsPerBlock ||
      dynamic_shared > rl::emu::detail::max_dynamic_shared(func))
    return cudaSuccess;
  const int warps_per_block = (block_size + prop.warpSize - 1) / prop.warpSize;
  int fit = std::min(prop.maxBlocksPerMultiProcessor,
                     prop.maxThreadsPerMultiProcessor / (warps_per_block * prop.warpSize));
  const std::size_t shared_per_block = dynamic_shared + prop.reservedSharedMemPerBlock;
  if (shared_per_block > 0)
    fit = std::min(fit, static_cast<int>(prop.sharedMemPerMultiprocessor / shared_per_block));
  *blocks = fit;
  return cudaSuccess;
}

cudaError_t cudaOccupancyMaxPotentialBlockSize(int* min_grid_size, int* block_size,
                                               const void* func, std::size_t dynamic_shared,
                                               int block_size_limit) {
  if (min_grid_size == nullptr || block_size == nullptr || block_size_limit < 0)
    return status(cudaErrorInvalidValue);
  cudaDeviceProp prop;
  if (const cudaError_t e = cudaGetDeviceProperties(&prop, 0); e != cudaSuccess) return e;
  const int limit = block_size_limit == 0 ? prop.maxThreadsPerBlock
                                          : std::min(block_size_limit, prop.maxThreadsPerBlock);
  int best_threads = 0;
  int best_size = 0;
  int best_blocks = 0;
  // Whole warps, or the limit itself when it is below one warp.
  const int start = limit >= prop.warpSize ? limit / prop.warpSize * prop.warpSize : limit;
  for (int size = start; size > 0; size -= prop.warpSize) {
    int blocks = 0;
    if (const cudaError_t e =
            cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, func, size, dynamic_shared);
        e != cudaSuccess)
      return e;
    if (blocks * size > best_threads) {
      best_threads = blocks * size;
      best_size = size;
      best_blocks = blocks;
    }
  }
  *block_size = best_size;
  *min_grid_size = best_blocks * prop.multiProcessorCount;
  return cudaSuccess;
}
