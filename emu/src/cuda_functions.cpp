// Kernel functions: their attributes (dynamic shared memory, carveout) and
// occupancy, from the emulated device's properties (rl/emu/cuda_api.hpp).
#include <algorithm>

#include "clusters.hpp"
#include "cuda_api_internal.hpp"
#include "internal.hpp"
#include "rl/emu/arch.hpp"

using rl::emu::detail::status;

cudaError_t cudaFuncSetAttribute(const void* func, cudaFuncAttribute attr, int value) {
  switch (attr) {
    case cudaFuncAttributeMaxDynamicSharedMemorySize:
      return status(rl::emu::detail::set_max_dynamic_shared(func, value));
    case cudaFuncAttributePreferredSharedMemoryCarveout:
      if (func == nullptr) return status(cudaErrorInvalidDeviceFunction);
      return value >= -1 && value <= 100 ? cudaSuccess : status(cudaErrorInvalidValue);
    case cudaFuncAttributeNonPortableClusterSizeAllowed:
      return status(rl::emu::detail::allow_non_portable_clusters(func, value));
  }
  return status(cudaErrorInvalidValue);
}

cudaError_t cudaFuncGetAttributes(cudaFuncAttributes* attr, const void* func) {
  if (attr == nullptr) return status(cudaErrorInvalidValue);
  if (func == nullptr) return status(cudaErrorInvalidDeviceFunction);
  *attr = cudaFuncAttributes{};
  attr->maxThreadsPerBlock = 1024;
  attr->ptxVersion = rl::emu::compute_capability();
  attr->binaryVersion = rl::emu::compute_capability();
  attr->maxDynamicSharedSizeBytes = static_cast<int>(rl::emu::detail::max_dynamic_shared(func));
  attr->preferredShmemCarveout = -1;
  return cudaSuccess;
}

cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int* blocks, const void* func,
                                                          int block_size,
                                                          std::size_t dynamic_shared) {
  if (blocks == nullptr || block_size <= 0) return status(cudaErrorInvalidValue);
  if (func == nullptr) return status(cudaErrorInvalidDeviceFunction);
  cudaDeviceProp prop;
  if (const cudaError_t e = cudaGetDeviceProperties(&prop, 0); e != cudaSuccess) return e;
  *blocks = 0;
  if (block_size > prop.maxThreadsPerBlock ||
      dynamic_shared > rl::emu::detail::max_dynamic_shared(func))
    return cudaSuccess;
  const int warps_per_block = (block_size + prop.warpSize - 1) / prop.warpSize;
  int fit = std::min(prop.maxBlocksPerMultiProcessor,
                     prop.maxThreadsPerMultiProcessor / (warps_per_block * prop.warpSize));
  const std::size_t shared_per_block = dynamic_shared + prop.reservedSharedMemPerBlock;
  if (shared_per_block > 0)
    fit = std::min(fit, static_cast<int>(prop.sharedMemPerMultiprocessor / shared_per_block));
  *blocks = fit;
  return cudaSuccess;
}

cudaError_t cudaOccupancyMaxPotentialBlockSize(int* min_grid_size, int* block_size,
                                               const void* func, std::size_t dynamic_shared,
                                               int block_size_limit) {
  if (min_grid_size == nullptr || block_size == nullptr || block_size_limit < 0)
    return status(cudaErrorInvalidValue);
  cudaDeviceProp prop;
  if (const cudaError_t e = cudaGetDeviceProperties(&prop, 0); e != cudaSuccess) return e;
  const int limit = block_size_limit == 0 ? prop.maxThreadsPerBlock
                                          : std::min(block_size_limit, prop.maxThreadsPerBlock);
  int best_threads = 0;
  int best_size = 0;
  int best_blocks = 0;
  // Whole warps, or the limit itself when it is below one warp.
  const int start = limit >= prop.warpSize ? limit / prop.warpSize * prop.warpSize : limit;
  for (int size = start; size > 0; size -= prop.warpSize) {
    int blocks = 0;
    if (const cudaError_t e =
            cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, func, size, dynamic_shared);
        e != cudaSuccess)
      return e;
    if (blocks * size > best_threads) {
      best_threads = blocks * size;
      best_size = size;
      best_blocks = blocks;
    }
  }
  *block_size = best_size;
  *min_grid_size = best_blocks * prop.multiProcessorCount;
  return cudaSuccess;
}
