// Streams and events: streams run work synchronously in the calling thread
// (so they are always idle), events record host wall time.  Each belongs to
// the device current when it was made; the live ones are registered, so a
// destroyed or foreign handle is refused (rl/emu/cuda_api.hpp).
#include <chrono>
#include <mutex>
#include <unordered_set>
#include <vector>

#include "cuda_api_internal.hpp"
#include "internal.hpp"

struct CUstream_st {
  unsigned int flags = 0;
  int device = 0;
};

struct CUevent_st {
  std::chrono::steady_clock::time_point time{};
  bool recorded = false;
  unsigned int flags = 0;
  int device = 0;
};

namespace rl::emu::detail {
namespace {

std::mutex g_handles_mutex;
std::unordered_set<CUstream_st*>& live_streams() {
  static std::unordered_set<CUstream_st*> set;
  return set;
}
std::unordered_set<CUevent_st*>& live_events() {
  static std::unordered_set<CUevent_st*> set;
  return set;
}

// The device of a live event; false for nullptr or a handle not (or no
// longer) created.
bool event_device(cudaEvent_t event, int* device) {
  std::lock_guard lock(g_handles_mutex);
  if (live_events().count(event) == 0) return false;
  *device = event->device;
  return true;
}

}  // namespace

bool stream_device(cudaStream_t stream, int* device) {
  if (stream == nullptr) {
    *device = current_device();  // each device's default stream
    return true;
  }
  std::lock_guard lock(g_handles_mutex);
  if (live_streams().count(stream) == 0) return false;
  *device = stream->device;
  return true;
}

void destroy_device_streams(int device) {
  std::lock_guard lock(g_handles_mutex);
  std::erase_if(live_streams(), [device](CUstream_st* s) {
    if (s->device != device) return false;
    delete s;
    return true;
  });
  std::erase_if(live_events(), [device](CUevent_st* e) {
    if (e->device != device) return false;
    delete e;
    return true;
  });
}

bool streams_on_devices_from(int first) {
  std::lock_guard lock(g_handles_mutex);
  for (const CUstream_st* s : live_streams())
    if (s->device >= first) return true;
  for (const CUevent_st* e : live_events())
    if (e->device >= first) return true;
  return false;
}

}  // namespace rl::emu::detail

using rl::emu::detail::event_device;
using rl::emu::detail::g_handles_mutex;
using rl::emu::detail::live_events;
using rl::emu::detail::live_streams;
using rl::emu::detail::status;
using rl::emu::detail::stream_device;

cudaError_t cudaStreamCreate(cudaStream_t* stream) {
  return cudaStreamCreateWithFlags(stream, 0);
}

cudaError_t cudaStreamCreateWithFlags(cudaStream_t* stream, unsigned int flags) {
  if (stream == nullptr) return status(cudaErrorInvalidValue);
  *stream = new CUstream_st{flags, rl::emu::detail::current_device()};
  std::lock_guard lock(g_handles_mutex);
  live_streams().insert(*stream);
  return cudaSuccess;
}

// Work on every stream is done when it returns, whatever device is current.
cudaError_t cudaStreamSynchronize(cudaStream_t stream) {
  int device = 0;
  if (!stream_device(stream, &device)) return status(cudaErrorInvalidResourceHandle);
  return rl::emu::detail::synchronize();
}
cudaError_t cudaStreamQuery(cudaStream_t stream) {
  int device = 0;
  if (!stream_device(stream, &device)) return status(cudaErrorInvalidResourceHandle);
  return cudaSuccess;
}

cudaError_t cudaStreamDestroy(cudaStream_t stream) {
  if (stream == nullptr) return status(cudaErrorInvalidResourceHandle);
  {
    std::lock_guard lock(g_handles_mutex);
    if (live_streams().erase(stream) == 0) return status(cudaErrorInvalidResourceHandle);
  }
  delete stream;
  return cudaSuccess;
}

cudaError_t cudaEventCreate(cudaEvent_t* event) {
  return cudaEventCreateWithFlags(event, 0);
}

cudaError_t cudaEventCreateWithFlags(cudaEvent_t* event, unsigned int flags) {
  if (event == nullptr) return status(cudaErrorInvalidValue);
  *event = new CUevent_st{{}, false, flags, rl::emu::detail::current_device()};
  std::lock_guard lock(g_handles_mutex);
  live_events().insert(*event);
  return cudaSuccess;
}

// CUDA: "cudaEventRecord() will fail if the input event and input stream are
// associated to different devices".
cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream) {
  int event_owner = 0, stream_owner = 0;
  if (!event_device(event, &event_owner) || !stream_device(stream, &stream_owner) ||
      event_owner != stream_owner)
    return status(cudaErrorInvalidResourceHandle);
  event->time = std::chrono::steady_clock::now();
  event->recorded = true;
  return cudaSuccess;
}

cudaError_t cudaEventSynchronize(cudaEvent_t event) {
  int device = 0;
  if (!event_device(event, &device)) return status(cudaErrorInvalidResourceHandle);
  return rl::emu::detail::synchronize();
}

cudaError_t cudaEventQuery(cudaEvent_t event) {
  int device = 0;
  if (!event_device(event, &device)) return status(cudaErrorInvalidResourceHandle);
  return cudaSuccess;
}

// CUDA: fails for two events of different devices.
cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end) {
  if (ms == nullptr) return status(cudaErrorInvalidValue);
  int start_owner = 0, end_owner = 0;
  if (!event_device(start, &start_owner) || !event_device(end, &end_owner) ||
      start_owner != end_owner)
    return status(cudaErrorInvalidResourceHandle);
  if (!start->recorded || !end->recorded) return status(cudaErrorInvalidResourceHandle);
  if ((start->flags & cudaEventDisableTiming) != 0 || (end->flags & cudaEventDisableTiming) != 0)
    return status(cudaErrorInvalidResourceHandle);
  *ms = std::chrono::duration<float, std::milli>(end->time - start->time).count();
  return cudaSuccess;
}

cudaError_t cudaEventDestroy(cudaEvent_t event) {
  {
    std::lock_guard lock(g_handles_mutex);
    if (event == nullptr || live_events().erase(event) == 0)
      return status(cudaErrorInvalidResourceHandle);
  }
  delete event;
  return cudaSuccess;
}

// Stream and event may belong to different devices (CUDA allows it: the
// cross-device dependency of multi-GPU code).
cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int flags) {
  int stream_owner = 0, event_owner = 0;
  if (!stream_device(stream, &stream_owner) || !event_device(event, &event_owner))
    return status(cudaErrorInvalidResourceHandle);
  // cudaEventWaitDefault (0) and cudaEventWaitExternal (1) are the flags CUDA defines.
  if (flags > 1U) return status(cudaErrorInvalidValue);
  return cudaSuccess;
}
