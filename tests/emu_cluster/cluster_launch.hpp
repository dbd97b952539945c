// The cluster tests' launch: cudaLaunchKernelEx with a cluster shape, as on
// a GPU.
#pragma once

#include <cstddef>

#include "rl/cuda.hpp"

namespace cluster_test {

// Launches `kernel` in clusters of `cluster` blocks (cudaLaunchKernelEx, as
// on a GPU).
template <typename... Params, typename... Args>
cudaError_t launch_clustered(void (*kernel)(Params...), dim3 grid, dim3 block, dim3 cluster,
                             std::size_t shared_bytes, Args... args) {
  cudaLaunchAttribute attribute{};
  attribute.id = cudaLaunchAttributeClusterDimension;
  attribute.val.clusterDim.x = cluster.x;
  attribute.val.clusterDim.y = cluster.y;
  attribute.val.clusterDim.z = cluster.z;
  cudaLaunchConfig_t config{};
  config.gridDim = grid;
  config.blockDim = block;
  config.dynamicSmemBytes = shared_bytes;
  config.attrs = &attribute;
  config.numAttrs = 1;
  return cudaLaunchKernelEx(&config, kernel, args...);
}

}  // namespace cluster_test
