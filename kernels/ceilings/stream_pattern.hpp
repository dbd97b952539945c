// What the memory ceilings share: their input data, filled on the device (a
// 1 GiB upload would dominate the set-up time), the per-thread sum that
// keeps their loads alive, and the vector copy (also the node family's).
#pragma once

#include "rl/check.hpp"
#include "rl/cuda.hpp"
#include "rl/device_buffer.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace rl::ceilings {

// Input element i of the memory ceilings: small positive integers (1..15),
// so every sum those kernels form stays exact in fp32 and the expected values
// are exact.
__host__ __device__ inline float stream_pattern(std::uint64_t i, std::uint64_t seed) {
  return static_cast<float>((i + seed) % 15u + 1u);
}

// A template only so that several kernel files can include it (vague linkage).
template <typename T>
__global__ void fill_stream_pattern(T* data, std::uint64_t n, std::uint64_t seed) {
  const std::uint64_t stride = std::uint64_t{gridDim.x} * blockDim.x;
  for (std::uint64_t i = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < n; i += stride)
    data[i] = static_cast<T>(stream_pattern(i, seed));
}

// acc += v lane by lane: four independent adds, no dependency between lanes.
__device__ inline void add_lanes(float4& acc, const float4& v) {
  acc.x += v.x;
  acc.y += v.y;
  acc.z += v.z;
  acc.w += v.w;
}

__device__ inline float lane_sum(const float4& acc) {
  return (acc.x + acc.y) + (acc.z + acc.w);
}

// out = in over n4 float4s: a grid-stride loop in which each thread issues
// `Unroll` independent 16-byte loads before it stores any of them, so enough
// bytes are in flight to cover the latency of the memory read (Little's law).
// The body of hbm.copy and of the node family's copies over links (the same
// copy, other memory behind the pointers).
template <int Unroll>
__device__ inline void copy_vec16(const float4* __restrict__ in, float4* __restrict__ out,
                                  std::size_t n4) {
  const std::size_t stride = std::size_t{gridDim.x} * blockDim.x;
  std::size_t i = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x;
  for (; i + (Unroll - 1) * stride < n4; i += Unroll * stride) {
    float4 v[Unroll];
    for (int u = 0; u < Unroll; ++u) v[u] = in[i + u * stride];
    for (int u = 0; u < Unroll; ++u) out[i + u * stride] = v[u];
  }
  for (; i < n4; i += stride) out[i] = in[i];
}

inline DeviceBuffer<float> patterned(std::size_t n, std::uint64_t seed) {
  DeviceBuffer<float> buffer(n);
  // At most 1024 blocks, which the grid-stride loop makes enough for any n;
  // fewer for a small n (the emulator runs every block a launch names).
  constexpr std::size_t kThreads = 256;
  const auto blocks =
      static_cast<unsigned>(std::min<std::size_t>(1024, (n + kThreads - 1) / kThreads));
  rl::launch(fill_stream_pattern<float>, dim3(std::max(blocks, 1u)), dim3(kThreads), 0, nullptr,
             buffer.get(), std::uint64_t{n}, seed);
  RL_CUDA_CHECK(cudaGetLastError());
  RL_CUDA_CHECK(cudaDeviceSynchronize());
  return buffer;
}

}  // namespace rl::ceilings
