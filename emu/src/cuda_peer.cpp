// Peer access between emulated devices: its state and calls, peer copies, and
// the launch's device checks (a stream of the current device; pointer
// arguments only into memory the launching device may reach).
// emu/docs/multi-device.md tells the rules and where they come from.
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "cuda_api_internal.hpp"
#include "internal.hpp"

namespace rl::emu::detail {
namespace {

// Bit `to` of g_peers[from]: kernels on `from` may reach memory of `to`.
// Atomics: any host thread may enable, disable or launch.
std::atomic<std::uint64_t> g_peers[kMaxDevices];

std::uint64_t bit(int device) {
  return std::uint64_t{1} << device;
}

// [ptr, ptr + count) lies in device memory (or managed memory) of `device`.
bool device_range(const void* ptr, std::size_t count, int device) {
  Allocation a;
  if (!find_allocation(ptr, &a) || a.device != device) return false;
  if (a.type != cudaMemoryTypeDevice && a.type != cudaMemoryTypeManaged) return false;
  const std::size_t offset =
      static_cast<const unsigned char*>(ptr) - static_cast<const unsigned char*>(a.base);
  return count <= a.size - offset;
}

}  // namespace

bool peer_access_enabled(int from, int to) {
  return from == to || (g_peers[from].load(std::memory_order_relaxed) & bit(to)) != 0;
}

void clear_peer_access(int device) {
  g_peers[device].store(0);
  for (std::atomic<std::uint64_t>& peers : g_peers) peers.fetch_and(~bit(device));
}

void clear_peer_access_from(int first) {
  for (int d = first; d < kMaxDevices; ++d) clear_peer_access(d);
}

cudaError_t check_launch_devices(const LaunchSpec& spec, const std::string& kernel, int* device) {
  const int current = current_device();
  int stream_owner = current;
  if (!stream_device(spec.stream, &stream_owner)) {
    std::fprintf(stderr, "rl::emu: kernel %s launched into %p, which is not a live stream\n",
                 kernel.c_str(), static_cast<const void*>(spec.stream));
    return cudaErrorInvalidResourceHandle;
  }
  if (stream_owner != current) {
    // CUDA: "a kernel launch will fail if it is issued to a stream that is
    // not associated to the current device".
    std::fprintf(stderr,
                 "rl::emu: kernel %s launched into a stream of device %d while device %d is "
                 "current (cudaSetDevice(%d) before the launch)\n",
                 kernel.c_str(), stream_owner, current, stream_owner);
    return cudaErrorInvalidResourceHandle;
  }
  *device = current;
  if (device_count() == 1) return cudaSuccess;  // every allocation is device 0's
  for (std::size_t i = 0; i < spec.pointer_arg_count; ++i) {
    const void* p = spec.pointer_args[i];
    Allocation a;
    if (p == nullptr || !find_allocation(p, &a) || a.type != cudaMemoryTypeDevice ||
        peer_access_enabled(current, a.device))
      continue;
    // On a GPU the kernel's access faults (cudaErrorIllegalAddress); refusing
    // at launch names the argument instead.
    std::fprintf(stderr,
                 "rl::emu: kernel %s on device %d: argument %zu points into memory of device %d, "
                 "and peer access from device %d to device %d is not enabled "
                 "(cudaDeviceEnablePeerAccess(%d, 0) with device %d current)\n",
                 kernel.c_str(), current, i + 1, a.device, current, a.device, a.device, current);
    return cudaErrorIllegalAddress;
  }
  return cudaSuccess;
}

}  // namespace rl::emu::detail

using rl::emu::detail::status;
using rl::emu::detail::valid_device;

cudaError_t cudaDeviceCanAccessPeer(int* can_access, int device, int peer) {
  if (can_access == nullptr) return status(cudaErrorInvalidValue);
  if (!valid_device(device) || !valid_device(peer)) return status(cudaErrorInvalidDevice);
  *can_access = device != peer ? 1 : 0;  // one host memory: every pair can
  return cudaSuccess;
}

cudaError_t cudaDeviceEnablePeerAccess(int peer, unsigned int flags) {
  using namespace rl::emu::detail;
  const int current = current_device();
  // CUDA: cudaErrorInvalidDevice when cudaDeviceCanAccessPeer says no (a
  // device and itself), cudaErrorInvalidValue when flags is not 0.
  if (!valid_device(peer) || peer == current) return status(cudaErrorInvalidDevice);
  if (flags != 0) return status(cudaErrorInvalidValue);
  const std::uint64_t before = g_peers[current].fetch_or(bit(peer));
  if ((before & bit(peer)) != 0) return status(cudaErrorPeerAccessAlreadyEnabled);
  return cudaSuccess;
}

cudaError_t cudaDeviceDisablePeerAccess(int peer) {
  using namespace rl::emu::detail;
  if (!valid_device(peer)) return status(cudaErrorInvalidDevice);
  const std::uint64_t before = g_peers[current_device()].fetch_and(~bit(peer));
  if ((before & bit(peer)) == 0) return status(cudaErrorPeerAccessNotEnabled);
  return cudaSuccess;
}

// CUDA documents cudaSuccess, cudaErrorInvalidValue and cudaErrorInvalidDevice
// for the peer copies: an unknown device is the second, a range that is not
// in the named device's memory the first.
cudaError_t cudaMemcpyPeer(void* dst, int dst_device, const void* src, int src_device,
                           std::size_t count) {
  using namespace rl::emu::detail;
  if (const cudaError_t sticky = sticky_error(); sticky != cudaSuccess) return status(sticky);
  if (!valid_device(dst_device) || !valid_device(src_device)) return status(cudaErrorInvalidDevice);
  if (count == 0) return cudaSuccess;
  if (!device_range(dst, count, dst_device) || !device_range(src, count, src_device))
    return status(cudaErrorInvalidValue);
  std::memmove(dst, src, count);
  return cudaSuccess;
}

// The stream may belong to either device (or any): only a launch is bound to
// the current device's streams.
cudaError_t cudaMemcpyPeerAsync(void* dst, int dst_device, const void* src, int src_device,
                                std::size_t count, cudaStream_t stream) {
  int owner = 0;
  if (!rl::emu::detail::stream_device(stream, &owner))
    return status(cudaErrorInvalidResourceHandle);
  return cudaMemcpyPeer(dst, dst_device, src, src_device, count);
}
