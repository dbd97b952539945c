// What the runtime API's files share (cuda_*.cpp); not a public header.
#pragma once

#include <cstddef>
#include <string>

#include "internal.hpp"

namespace rl::emu::detail {

// Returns `error` after recording it as the calling thread's last error.
inline cudaError_t status(cudaError_t error) {
  if (error != cudaSuccess) record_error(error);
  return error;
}

// A synchronising call's status: the sticky error if any, else the pending
// launch failure (cleared), else success (cuda_errors.cpp).
cudaError_t synchronize();
// Clears the current device's sticky error and the calling thread's errors
// (cudaDeviceReset; cuda_errors.cpp).
void clear_errors();
// The host's physical memory: each emulated device's "global memory" (cuda_memory.cpp).
std::size_t physical_memory();

// ---- several emulated devices (emu/docs/multi-device.md)

// devices.cpp: whether `device` is one of the device_count() devices.
bool valid_device(int device);

// cuda_memory.cpp: the allocation holding `ptr` (interior pointers too).
struct Allocation {
  void* base = nullptr;
  std::size_t size = 0;
  int device = 0;  // the device current when it was made
  cudaMemoryType type = cudaMemoryTypeUnregistered;
};
bool find_allocation(const void* ptr, Allocation* found);
// Frees every allocation made while `device` was current (cudaDeviceReset).
void release_device_memory(int device);
// Whether any allocation belongs to a device numbered `first` or above.
bool memory_on_devices_from(int first);

// cuda_streams.cpp: the device of a stream (nullptr: the current device's
// default stream); false for a handle that is not a live stream.
bool stream_device(cudaStream_t stream, int* device);
// Destroys the streams and events of `device` (cudaDeviceReset).
void destroy_device_streams(int device);
bool streams_on_devices_from(int first);

// cuda_peer.cpp: whether kernels on `from` may reach memory of `to` (always
// for from == to).
bool peer_access_enabled(int from, int to);
// Drops access from and to `device` (cudaDeviceReset) / to and from every
// device numbered `first` or above (set_device_count).
void clear_peer_access(int device);
void clear_peer_access_from(int first);
// A launch's device checks: its stream belongs to the current device, and
// every pointer argument into another device's memory has peer access.  On
// success *device is the launching device; otherwise one line on stderr
// naming `kernel` and the error to record.
cudaError_t check_launch_devices(const LaunchSpec& spec, const std::string& kernel, int* device);

}  // namespace rl::emu::detail
