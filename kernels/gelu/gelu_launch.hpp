// GELU launcher interface: the arguments every rung's launcher takes and the
// capped grid of the grid-stride loops (GELU's and bias + GELU's).
#pragma once

#include "rl/cuda.hpp"

#include <algorithm>
#include <cstdint>

namespace rl::gelu {

// Grid for a grid-stride loop over `work_items`: enough blocks to cover the
// work once, capped so a huge n loops instead of launching millions of blocks
// (tests lower the cap to make every thread go round the loop).
inline constexpr std::int64_t kMaxGridStrideBlocks = 65535;
inline dim3 grid_stride_grid(std::int64_t work_items, int threads,
                             std::int64_t max_blocks = kMaxGridStrideBlocks) {
  const std::int64_t blocks = (std::max<std::int64_t>(work_items, 1) + threads - 1) / threads;
  return dim3(static_cast<unsigned>(std::min(blocks, max_blocks)));
}

template <typename T>
struct Args {
  T* y;
  const T* x;
  std::int64_t n;
};

template <typename T>
using Launcher = void (*)(const Args<T>&, cudaStream_t);

}  // namespace rl::gelu
