// What an address is (cudaPointerGetAttributes) and the device address of
// pinned host memory (cudaHostGetDevicePointer), from the allocation registry
// of cuda_memory.cpp (rl/emu/cuda_api.hpp).
#include "cuda_api_internal.hpp"

using rl::emu::detail::status;

cudaError_t cudaPointerGetAttributes(cudaPointerAttributes* attributes, const void* ptr) {
  if (attributes == nullptr) return status(cudaErrorInvalidValue);
  *attributes = cudaPointerAttributes{};
  void* const address = const_cast<void*>(ptr);
  rl::emu::detail::Allocation a;
  if (ptr == nullptr || !rl::emu::detail::find_allocation(ptr, &a)) {
    // Memory CUDA did not allocate (CUDA 11 and later answer, not fail).
    attributes->type = cudaMemoryTypeUnregistered;
    attributes->device = cudaInvalidDeviceId;
    attributes->hostPointer = address;
    return cudaSuccess;
  }
  attributes->type = a.type;
  attributes->device = a.device;
  // Device memory has no host address on a GPU (here it has, but code
  // written for a GPU must not rely on it); pinned memory is mapped and
  // managed memory is both.
  attributes->devicePointer = address;
  attributes->hostPointer = a.type == cudaMemoryTypeDevice ? nullptr : address;
  return cudaSuccess;
}

cudaError_t cudaHostGetDevicePointer(void** device_ptr, void* host_ptr, unsigned int flags) {
  if (device_ptr == nullptr || flags != 0) return status(cudaErrorInvalidValue);
  rl::emu::detail::Allocation a;
  if (!rl::emu::detail::find_allocation(host_ptr, &a) || a.type != cudaMemoryTypeHost)
    return status(cudaErrorInvalidValue);  // not pinned host memory
  *device_ptr = host_ptr;                  // one address space: the same address
  return cudaSuccess;
}
