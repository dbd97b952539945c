// The runtime API's error state and words: the calling thread's last error,
// the pending launch failure, the process-wide sticky error, and CUDA's names
// and wording for each code (rl/emu/cuda_api.hpp).
#include <atomic>

#include "cuda_api_internal.hpp"
#include "internal.hpp"

namespace rl::emu::detail {
namespace {

thread_local cudaError_t tl_last_error = cudaSuccess;
// A failed launch waits for the next synchronising call of the host thread
// that launched it, with the launching device current.
thread_local cudaError_t tl_pending_failure[kMaxDevices] = {};
// Device assert and __trap corrupt a GPU context for good: the error is the
// device's (one context per device), for every host thread, and outlives
// cudaGetLastError.
std::atomic<cudaError_t> g_sticky_error[kMaxDevices];

}  // namespace

cudaError_t synchronize() {
  const cudaError_t pending = take_pending_failure();
  if (const cudaError_t sticky = sticky_error(); sticky != cudaSuccess) return status(sticky);
  return status(pending);
}

void clear_errors() {
  g_sticky_error[current_device()].store(cudaSuccess);
  take_pending_failure();
  tl_last_error = cudaSuccess;
}

void record_error(cudaError_t error) {
  tl_last_error = error;
}

void record_launch_failure(cudaError_t error) {
  tl_last_error = error;
  tl_pending_failure[current_device()] = error;
}

void set_sticky_error(int device, cudaError_t error) {
  cudaError_t none = cudaSuccess;
  g_sticky_error[device].compare_exchange_strong(none, error);  // the first one stays
}

cudaError_t sticky_error() {
  return g_sticky_error[current_device()].load(std::memory_order_relaxed);
}

cudaError_t take_pending_failure() {
  const cudaError_t e = tl_pending_failure[current_device()];
  tl_pending_failure[current_device()] = cudaSuccess;
  return e;
}

}  // namespace rl::emu::detail

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
    RL_EMU_ERROR_NAME(cudaErrorPeerAccessUnsupported)
    RL_EMU_ERROR_NAME(cudaErrorInvalidResourceHandle)
    RL_EMU_ERROR_NAME(cudaErrorNotReady)
    RL_EMU_ERROR_NAME(cudaErrorIllegalAddress)
    RL_EMU_ERROR_NAME(cudaErrorLaunchOutOfResources)
    RL_EMU_ERROR_NAME(cudaErrorLaunchTimeout)
    RL_EMU_ERROR_NAME(cudaErrorPeerAccessAlreadyEnabled)
    RL_EMU_ERROR_NAME(cudaErrorPeerAccessNotEnabled)
    RL_EMU_ERROR_NAME(cudaErrorAssert)
    RL_EMU_ERROR_NAME(cudaErrorIllegalInstruction)
    RL_EMU_ERROR_NAME(cudaErrorMisalignedAddress)
    RL_EMU_ERROR_NAME(cudaErrorLaunchFailure)
    RL_EMU_ERROR_NAME(cudaErrorNotPermitted)
    RL_EMU_ERROR_NAME(cudaErrorNotSupported)
    RL_EMU_ERROR_NAME(cudaErrorInvalidClusterSize)
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
    case cudaErrorPeerAccessUnsupported:
      return "peer access is not supported between these two devices";
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
    case cudaErrorPeerAccessAlreadyEnabled:
      return "peer access is already enabled";
    case cudaErrorPeerAccessNotEnabled:
      return "peer access has not been enabled";
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
    case cudaErrorInvalidClusterSize:
      return "a kernel launch error has occurred due to cluster misconfiguration";
    case cudaErrorUnknown:
      return "unknown error";
  }
  return "unrecognized error code";
}
