// One resident wave of a kernel: the grids of the ceilings' grid-stride loops
// and of the launchers that size theirs by residency (the LayerNorm
// rows-per-block rungs).  Apart from support.hpp (shapes, validation) because
// those launchers are instantiated in the device passes too, which need none
// of the rest (rl/device_instances.hpp).
#pragma once

#include "rl/check.hpp"
#include "rl/cuda.hpp"

#include <algorithm>
#include <cstdint>

namespace rl::ceilings {

// Blocks of `kernel` resident per SM at this block size.  The emulator has no
// occupancy calculator (its "SM" is a worker thread): there the device's
// threads-per-SM and blocks-per-SM limits give the answer.
template <typename... Params>
int resident_blocks_per_sm([[maybe_unused]] void (*kernel)(Params...), int block_threads,
                           [[maybe_unused]] int device) {
#if defined(RL_EMULATE)
  int threads = 0;
  int blocks = 0;
  RL_CUDA_CHECK(cudaDeviceGetAttribute(&threads, cudaDevAttrMaxThreadsPerMultiProcessor, device));
  RL_CUDA_CHECK(cudaDeviceGetAttribute(&blocks, cudaDevAttrMaxBlocksPerMultiprocessor, device));
  return std::min(blocks, threads / block_threads);
#else
  int per_sm = 0;
  RL_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, block_threads, 0));
  return per_sm;
#endif
}

struct DeviceFill {
  int sm_count = 0;
  int blocks_per_sm = 0;
  int blocks() const { return sm_count * blocks_per_sm; }
};

// SM count x resident blocks per SM for this kernel at this block size: one
// full wave, every SM busy, no tail of partly filled waves.
template <typename... Params>
DeviceFill device_fill(void (*kernel)(Params...), int block_threads) {
  int device = 0;
  RL_CUDA_CHECK(cudaGetDevice(&device));
  DeviceFill fill;
  RL_CUDA_CHECK(cudaDeviceGetAttribute(&fill.sm_count, cudaDevAttrMultiProcessorCount, device));
  fill.blocks_per_sm = resident_blocks_per_sm(kernel, block_threads, device);
  // A kernel that cannot be resident at all would fail at launch; one block
  // per SM keeps the grid valid so that the launch reports the real error.
  fill.blocks_per_sm = std::max(fill.blocks_per_sm, 1);
  return fill;
}

// At most `max_blocks` (no block without work), at least one.
template <typename... Params>
int resident_blocks(void (*kernel)(Params...), int block_threads, std::int64_t max_blocks) {
  const std::int64_t full = device_fill(kernel, block_threads).blocks();
  return static_cast<int>(std::clamp<std::int64_t>(max_blocks, 1, full));
}

}  // namespace rl::ceilings
