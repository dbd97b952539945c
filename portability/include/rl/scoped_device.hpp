// The current device for one scope: set on entry, the previous one restored
// on exit.  The one way code that touches several devices (the harness's
// per-device tools, the node records' workloads) switches devices, so a
// throw between the two calls cannot leave a later instance on the wrong
// device.
#pragma once

#include "rl/check.hpp"
#include "rl/cuda.hpp"

namespace rl {

class ScopedDevice {
 public:
  explicit ScopedDevice(int device) {
    RL_CUDA_CHECK(cudaGetDevice(&previous_));
    if (device != previous_) RL_CUDA_CHECK(cudaSetDevice(device));
    current_ = device;
  }
  ~ScopedDevice() {
    // A destructor must not throw; a failure here is left for the next
    // checked call to report (cudaSetDevice's errors are not sticky).
    if (current_ != previous_) cudaSetDevice(previous_);
  }
  ScopedDevice(const ScopedDevice&) = delete;
  ScopedDevice& operator=(const ScopedDevice&) = delete;

 private:
  int previous_ = 0;
  int current_ = 0;
};

// How many devices this process sees; 0 where none answers (listing the
// registry on a machine without a GPU must not throw).
inline int visible_device_count() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();  // not sticky: leave no error behind for the caller
    return 0;
  }
  return count;
}

}  // namespace rl
