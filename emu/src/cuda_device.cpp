// The emulated devices' properties and attributes, versions, synchronisation
// and reset (rl/emu/cuda_api.hpp; their count and selection: devices.cpp).
#include <unistd.h>

#include <cstdio>

#include "cuda_api_internal.hpp"
#include "internal.hpp"
#include "rl/emu/arch.hpp"
#include "rl/emu/launch.hpp"

using rl::emu::detail::status;
using rl::emu::detail::valid_device;

// The emulated device: compute capability 8.9 because the emulator implements
// the warp-level instructions up to sm_89 (mma incl. fp8, ldmatrix,
// cp.async); RL_EMU_CC picks another (rl/emu/arch.hpp says which instruction
// families each has: 9.0 adds sm_90a's wgmma, TMA and mbarrier).  One "multiprocessor" per host
// worker, each running one block at a time.  Clocks and bus width are not meaningful and are 0.
// With several emulated devices (RL_EMU_DEVICES) each is the same but for its
// name, UUID and PCI bus (device d on bus d + 1, as each GPU of a node sits on
// its own bus), so tools that key devices by bus or UUID tell them apart.
cudaError_t cudaGetDeviceProperties(cudaDeviceProp* prop, int device) {
  using namespace rl::emu::detail;
  if (prop == nullptr) return status(cudaErrorInvalidValue);
  if (!valid_device(device)) return status(cudaErrorInvalidDevice);
  *prop = cudaDeviceProp{};
  if (rl::emu::device_count() == 1)
    std::snprintf(prop->name, sizeof prop->name, "CPU emulator (bench_roofline emu)");
  else
    std::snprintf(prop->name, sizeof prop->name,
                  "CPU emulator (bench_roofline emu) device %d of %d", device,
                  rl::emu::device_count());
  std::snprintf(prop->uuid.bytes, sizeof prop->uuid.bytes, "rl-emu-device");
  prop->uuid.bytes[15] = static_cast<char>(device);
  prop->pciBusID = device + 1;
  prop->pciDeviceID = 0;
  prop->pciDomainID = 0;
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
      *value = 0;
      break;
    case cudaDevAttrPciBusId:
      *value = p.pciBusID;
      break;
    case cudaDevAttrPciDeviceId:
      *value = p.pciDeviceID;
      break;
    case cudaDevAttrPciDomainId:
      *value = p.pciDomainID;
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

// The current device's work (every launch and copy is done when its call
// returns): its pending failure or sticky error.
cudaError_t cudaDeviceSynchronize() {
  return rl::emu::detail::synchronize();
}

// The current device only, as CUDA resets it: its allocations (pinned host
// memory made while it was current too), streams, events, peer access in
// both directions, and its errors.
cudaError_t cudaDeviceReset() {
  using namespace rl::emu::detail;
  const int device = current_device();
  release_device_memory(device);
  destroy_device_streams(device);
  clear_peer_access(device);
  clear_errors();
  return cudaSuccess;
}
