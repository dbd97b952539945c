// Bias + GELU launcher interface: the arguments both rungs' launchers take and
// how the kernels read the bias.  Apart from bias_gelu.hpp (cost model, shapes,
// workload) because bias_gelu.cu's device passes need these and not the
// workload (rl/device_instances.hpp).
#pragma once

#include "gelu/gelu_launch.hpp"
#include "rl/cuda.hpp"
#include "rl/packed128.hpp"

#include <cstdint>

namespace rl::gelu {

template <typename T>
struct BiasGeluArgs {
  T* y;
  T* scratch;  // the unfused pair's intermediate t, one element per x element
  const T* x;
  const T* bias;
  std::int64_t rows;
  int width;
  std::int64_t max_blocks = kMaxGridStrideBlocks;  // grid cap (see grid_stride_grid)
};

// Whether the kernels read the bias 128 bits at a time (width a multiple of
// the vector length) or element by element (any other width).
template <typename T>
constexpr bool bias_loads_are_vectors(std::int64_t width) {
  return width % Packed128<T>::size == 0;
}

template <typename T>
using BiasGeluLauncher = void (*)(const BiasGeluArgs<T>&, cudaStream_t);

}  // namespace rl::gelu
