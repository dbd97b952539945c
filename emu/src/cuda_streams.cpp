// Streams and events: streams run work synchronously in the calling thread
// (so they are always idle), events record host wall time (rl/emu/cuda_api.hpp).
#include <chrono>

#include "cuda_api_internal.hpp"
#include "internal.hpp"

struct CUstream_st {
  unsigned int flags = 0;
};

struct CUevent_st {
  std::chrono::steady_clock::time_point time{};
  bool recorded = false;
  unsigned int flags = 0;
};

using rl::emu::detail::status;

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

cudaError_t cudaStreamWaitEvent(cudaStream_t, cudaEvent_t event, unsigned int flags) {
  if (event == nullptr) return status(cudaErrorInvalidResourceHandle);
  // cudaEventWaitDefault (0) and cudaEventWaitExternal (1) are the flags CUDA defines.
  if (flags > 1U) return status(cudaErrorInvalidValue);
  return cudaSuccess;
}
