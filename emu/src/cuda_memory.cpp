// Device memory on the host: allocations (cudaMalloc and friends, checked
// by cudaFree, each owned by the device current when it was made), copies,
// memsets, pitched memory and cudaMemGetInfo (rl/emu/cuda_api.hpp).
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <map>
#include <mutex>
#include <new>
#include <vector>

#include "cuda_api_internal.hpp"
#include "internal.hpp"

namespace rl::emu::detail {
namespace {

// Every live allocation by its first byte, ordered so that an interior
// pointer finds its allocation with one upper_bound (cudaFree's validation,
// cudaPointerGetAttributes, the launch's peer-access check).
struct Entry {
  std::size_t size;
  int device;
  cudaMemoryType type;
};
std::mutex g_alloc_mutex;
std::map<std::uintptr_t, Entry>& allocations() {
  static std::map<std::uintptr_t, Entry> map;
  return map;
}

constexpr std::align_val_t kAllocAlignment{256};  // cudaMalloc's guarantee

}  // namespace

std::size_t physical_memory() {
  return static_cast<std::size_t>(sysconf(_SC_PHYS_PAGES)) *
         static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
}

bool find_allocation(const void* ptr, Allocation* found) {
  const auto address = reinterpret_cast<std::uintptr_t>(ptr);
  std::lock_guard lock(g_alloc_mutex);
  auto it = allocations().upper_bound(address);
  if (it == allocations().begin()) return false;
  --it;
  if (address - it->first >= it->second.size) return false;
  *found = Allocation{reinterpret_cast<void*>(it->first), it->second.size, it->second.device,
                      it->second.type};
  return true;
}

void release_device_memory(int device) {
  std::vector<void*> freed;
  {
    std::lock_guard lock(g_alloc_mutex);
    for (auto it = allocations().begin(); it != allocations().end();) {
      if (it->second.device != device) {
        ++it;
        continue;
      }
      freed.push_back(reinterpret_cast<void*>(it->first));
      it = allocations().erase(it);
    }
  }
  for (void* p : freed) ::operator delete(p, kAllocAlignment);
}

bool memory_on_devices_from(int first) {
  std::lock_guard lock(g_alloc_mutex);
  for (const auto& [address, entry] : allocations())
    if (entry.device >= first) return true;
  return false;
}

namespace {

// Belongs to the device current now, whatever its type (pinned host memory
// too: cudaPointerGetAttributes reports that device, cudaDeviceReset frees it).
cudaError_t allocate(void** ptr, std::size_t size, cudaMemoryType type) {
  if (ptr == nullptr) return cudaErrorInvalidValue;
  *ptr = nullptr;
  if (size == 0) return cudaSuccess;
  if (size > physical_memory()) return cudaErrorMemoryAllocation;  // more than the "device" has
  void* p = ::operator new(size, kAllocAlignment, std::nothrow);
  if (p == nullptr) return cudaErrorMemoryAllocation;
  std::lock_guard lock(g_alloc_mutex);
  allocations().emplace(reinterpret_cast<std::uintptr_t>(p), Entry{size, current_device(), type});
  *ptr = p;
  return cudaSuccess;
}

// Device memory (cudaMalloc, cudaMallocManaged) starts undefined on a GPU;
// under initcheck it starts as NaN bytes.  Pinned host memory is left alone.
cudaError_t allocate_device(void** ptr, std::size_t size, cudaMemoryType type) {
  const cudaError_t error = allocate(ptr, size, type);
  if (error == cudaSuccess && *ptr != nullptr && poison_enabled())
    std::memset(*ptr, kPoisonByte, size);
  return error;
}

cudaError_t release(void* ptr) {
  if (ptr == nullptr) return cudaSuccess;
  {
    std::lock_guard lock(g_alloc_mutex);
    if (allocations().erase(reinterpret_cast<std::uintptr_t>(ptr)) == 0)
      return cudaErrorInvalidValue;
  }
  ::operator delete(ptr, kAllocAlignment);
  return cudaSuccess;
}

}  // namespace
}  // namespace rl::emu::detail

using rl::emu::detail::status;

// Every emulated device is the same host memory, so each current device
// reports the host's physical and available memory.
cudaError_t cudaMemGetInfo(std::size_t* free_bytes, std::size_t* total_bytes) {
  if (free_bytes == nullptr || total_bytes == nullptr) return status(cudaErrorInvalidValue);
  *total_bytes = rl::emu::detail::physical_memory();
  *free_bytes = static_cast<std::size_t>(sysconf(_SC_AVPHYS_PAGES)) *
                static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  return cudaSuccess;
}

cudaError_t cudaMalloc(void** ptr, std::size_t size) {
  return status(rl::emu::detail::allocate_device(ptr, size, cudaMemoryTypeDevice));
}
cudaError_t cudaMallocHost(void** ptr, std::size_t size) {
  return status(rl::emu::detail::allocate(ptr, size, cudaMemoryTypeHost));
}
cudaError_t cudaMallocManaged(void** ptr, std::size_t size, unsigned int) {
  return status(rl::emu::detail::allocate_device(ptr, size, cudaMemoryTypeManaged));
}
// Every pinned allocation is portable and mapped under the emulator (one
// address space, as with unified addressing), so the flags only get checked.
cudaError_t cudaHostAlloc(void** ptr, std::size_t size, unsigned int flags) {
  if ((flags & ~(cudaHostAllocPortable | cudaHostAllocMapped | cudaHostAllocWriteCombined)) != 0)
    return status(cudaErrorInvalidValue);
  return status(rl::emu::detail::allocate(ptr, size, cudaMemoryTypeHost));
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
