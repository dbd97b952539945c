// What the runtime API's files share (cuda_*.cpp); not a public header.
#pragma once

#include <cstddef>

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
// Clears every error state (cudaDeviceReset; cuda_errors.cpp).
void clear_errors();
// The host's physical memory: the emulated device's "global memory" (cuda_memory.cpp).
std::size_t physical_memory();

}  // namespace rl::emu::detail
