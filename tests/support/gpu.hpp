// GPU tests skip, with the reason, when no CUDA device is usable.  ctest reports
// them as skipped (SKIP_REGULAR_EXPRESSION in rl_add_gtest), never as passed.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "rl/cuda.hpp"

namespace rl::test {

inline bool gpu_available(std::string* why) {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    *why = std::string(cudaGetErrorName(status)) + ": " + cudaGetErrorString(status);
    cudaGetLastError();  // clear the sticky-free error so later calls start clean
    return false;
  }
  if (count == 0) {
    *why = "cudaGetDeviceCount returned 0 devices";
    return false;
  }
  return true;
}

}  // namespace rl::test

#define RL_REQUIRE_GPU()                                                    \
  do {                                                                      \
    std::string rl_gpu_why_;                                                \
    if (!::rl::test::gpu_available(&rl_gpu_why_))                           \
      GTEST_SKIP() << "no CUDA device available (" << rl_gpu_why_ << ")";  \
  } while (0)
