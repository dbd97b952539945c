// What the tensor-memory tests share: running a launch that must fail and
// keeping what the emulator printed, the schedules every result is compared
// under, and the CTA-start dance (warp 0 allocates, the address goes through
// shared memory to every thread).
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <string>

#include "rl/cuda.hpp"
#include "rl/emu/launch.hpp"
#include "rl/ptx_sm100_tmem.hpp"

namespace tcgen05_memory_test {

// Runs `launch`, which must fail; returns what the emulator printed.
inline std::string stderr_of_failed_launch(const std::function<void()>& launch) {
  (void)cudaGetLastError();
  testing::internal::CaptureStderr();
  launch();
  std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(cudaDeviceSynchronize(), cudaSuccess) << "the launch should have failed";
  (void)cudaGetLastError();
  return err;
}

// The two schedules results must not depend on.
inline const char* const kSchedules[] = {"forward", "random:11"};

// Warp 0 allocates `ncols` columns; every thread gets the address (via
// shared memory `slot`) after the block barrier.
__device__ inline std::uint32_t allocate_for_block(std::uint32_t* slot, std::uint32_t ncols) {
  if (threadIdx.x / 32 == 0) rl::ptx::tmem_alloc(slot, ncols);
  rl::ptx::tcgen05_fence_before_thread_sync();
  __syncthreads();
  rl::ptx::tcgen05_fence_after_thread_sync();
  return *slot;
}

// Warp 0 frees them again once every thread is done with them.
__device__ inline void free_for_block(std::uint32_t taddr, std::uint32_t ncols) {
  rl::ptx::tcgen05_fence_before_thread_sync();
  __syncthreads();
  if (threadIdx.x / 32 == 0) {
    rl::ptx::tcgen05_fence_after_thread_sync();
    rl::ptx::tmem_dealloc(taddr, ncols);
  }
}

}  // namespace tcgen05_memory_test
