// Several emulated devices: how many (RL_EMU_DEVICES, set_device_count), the
// current device of each host thread, cudaGetDeviceCount / cudaSetDevice /
// cudaGetDevice (emu/docs/multi-device.md).
#include <atomic>

#include "cuda_api_internal.hpp"
#include "internal.hpp"

namespace rl::emu {
namespace detail {
namespace {

std::atomic<int> g_device_override{0};  // 0: RL_EMU_DEVICES decides

// Per host thread, as CUDA keeps it; a thread_local needs no lock and is
// race-free under racecheck.
thread_local int tl_current_device = 0;

}  // namespace

bool valid_device(int device) {
  return device >= 0 && device < device_count();
}

int current_device() {
  // A device removed by set_device_count since this thread selected it reads
  // as device 0.
  const int device = tl_current_device;
  return device < device_count() ? device : 0;
}

}  // namespace detail

int device_count() {
  const int set = detail::g_device_override.load(std::memory_order_relaxed);
  return set > 0 ? set : detail::environment_devices();
}

cudaError_t set_device_count(int count) {
  using namespace detail;
  if (count < 1 || count > kMaxDevices) return cudaErrorInvalidValue;
  // Removing a device that still owns memory, a stream or an event would
  // leave handles to a device that no longer exists.
  if (memory_on_devices_from(count) || streams_on_devices_from(count)) return cudaErrorNotPermitted;
  clear_peer_access_from(count);
  g_device_override.store(count, std::memory_order_relaxed);
  tl_current_device = 0;
  return cudaSuccess;
}

}  // namespace rl::emu

using rl::emu::detail::status;

cudaError_t cudaGetDeviceCount(int* count) {
  if (count == nullptr) return status(cudaErrorInvalidValue);
  *count = rl::emu::device_count();
  return cudaSuccess;
}

cudaError_t cudaSetDevice(int device) {
  if (!rl::emu::detail::valid_device(device)) return status(cudaErrorInvalidDevice);
  rl::emu::detail::tl_current_device = device;
  return cudaSuccess;
}

cudaError_t cudaGetDevice(int* device) {
  if (device == nullptr) return status(cudaErrorInvalidValue);
  *device = rl::emu::detail::current_device();
  return cudaSuccess;
}
