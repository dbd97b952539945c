// LayerNorm device helpers every rung shares: warp and block sums, whole
// 16-byte chunks of a row with a ragged end, and a row held in registers
// with its two-pass statistics.
#pragma once

#include "layernorm/layernorm_launch.hpp"
#include "rl/cuda.hpp"
#include "rl/packed128.hpp"

namespace rl::layernorm {

// Device code only: the host compiler sees this header too, from the tests
// of the CUDA backend.
#if defined(__CUDACC__) || defined(RL_EMULATE)

__device__ __forceinline__ float warp_sum(float v) {
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}

// Sum over the whole block (blockDim.x a multiple of 32, at most 1024); every
// thread gets the total.  Warps reduce in registers, lane 0 of each parks its
// partial in `scratch` (32 floats of shared memory), then every warp reduces
// the partials itself instead of waiting for a broadcast.  The trailing
// barrier lets the caller reuse `scratch` for the next reduction.
__device__ __forceinline__ float block_sum(float v, float* scratch) {
  const int lane = static_cast<int>(threadIdx.x % 32);
  const int warp = static_cast<int>(threadIdx.x / 32);
  const int warps = static_cast<int>(blockDim.x / 32);
  v = warp_sum(v);
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  v = warp_sum(lane < warps ? scratch[lane] : 0.0f);
  __syncthreads();
  return v;
}

// How whole 16-byte chunks cross the memory bus: plain 128-bit accesses (and
// plain scalar loads at a row's ragged end).  The streaming rung passes
// cache-hinted ones instead (StreamingChunks in layernorm_rows_per_block.hpp).
struct PlainChunks {
  template <typename T>
  __device__ __forceinline__ static Packed128<T> load(const T* address) {
    return load128(address);
  }
  template <typename T>
  __device__ __forceinline__ static T load_scalar(const T* row, int i) {
    return row[i];
  }
  template <typename T>
  __device__ __forceinline__ static void store(T* address, const Packed128<T>& value) {
    store128(address, value);
  }
};

// Elements e .. e + kVec - 1 of a row of C: one 128-bit load when the row is
// 16-byte aligned (`aligned`: C a multiple of kVec) and the chunk is whole,
// else scalar loads, zero past the end of the row.
template <typename Chunks = PlainChunks, typename T>
__device__ __forceinline__ Packed128<T> load_chunk(const T* row, int e, int C, bool aligned) {
  constexpr int kVec = Packed128<T>::size;
  if (aligned && e + kVec <= C) return Chunks::load(row + e);
  Packed128<T> v;
  for (int j = 0; j < kVec; ++j)
    v[j] = e + j < C ? Chunks::load_scalar(row, e + j) : from_f32<T>(0.0f);
  return v;
}

// The counterpart of load_chunk: stores the elements that lie inside the row.
template <typename Chunks = PlainChunks, typename T>
__device__ __forceinline__ void store_chunk(T* row, int e, int C, bool aligned,
                                            const Packed128<T>& v) {
  constexpr int kVec = Packed128<T>::size;
  if (aligned && e + kVec <= C) {
    Chunks::store(row + e, v);
  } else {
    for (int j = 0; j < kVec && e + j < C; ++j) row[e + j] = v[j];
  }
}

// A row of C held in registers by the block: this thread's chunk k is
// elements (k * blockDim.x + threadIdx.x) * kVec onwards (the block's loads
// of one k are contiguous: fully coalesced), zero past the end of the row.
template <typename Chunks = PlainChunks, typename T, int kChunks>
__device__ __forceinline__ void load_cached_row(Packed128<T> (&cached)[kChunks], const T* row,
                                                int C, bool aligned) {
  constexpr int kVec = Packed128<T>::size;
  for (int k = 0; k < kChunks; ++k) {
    const int e = (k * static_cast<int>(blockDim.x) + static_cast<int>(threadIdx.x)) * kVec;
    cached[k] = load_chunk<Chunks>(row, e, C, aligned);
  }
}

struct RowStats {
  float mean;
  float rstd;
};

// Mean and rstd of a row held as load_cached_row leaves it: the centred
// two-pass variance over registers, two block reductions.
template <typename T, int kChunks>
__device__ __forceinline__ RowStats cached_row_stats(const Packed128<T> (&cached)[kChunks], int C,
                                                     float* scratch) {
  constexpr int kVec = Packed128<T>::size;
  float sum = 0.0f;
  for (int k = 0; k < kChunks; ++k)
    for (int j = 0; j < kVec; ++j) sum += to_f32(cached[k][j]);
  const float m = block_sum(sum, scratch) / static_cast<float>(C);
  float var = 0.0f;
  for (int k = 0; k < kChunks; ++k) {
    const int e = (k * static_cast<int>(blockDim.x) + static_cast<int>(threadIdx.x)) * kVec;
    for (int j = 0; j < kVec; ++j) {
      const float d = e + j < C ? to_f32(cached[k][j]) - m : 0.0f;
      var += d * d;
    }
  }
  return {m, rsqrtf(block_sum(var, scratch) / static_cast<float>(C) + kEps)};
}

#endif  // __CUDACC__ || RL_EMULATE

}  // namespace rl::layernorm
