// GEMM device-side tile helpers of the FP32 SIMT rungs: bounded tile loads
// into shared memory, 128-bit loads and stores with tail handling, the 4 x 4
// outer product and the vec128 tile loader.
#pragma once

#include "rl/cuda.hpp"
#include "rl/packed128.hpp"
#include "rl/unroll.hpp"

#include <cstdint>

namespace rl::gemm {

// Device code only: the host compiler sees this header too, from the tests of
// the CUDA backend.
#if defined(__CUDACC__) || defined(RL_EMULATE)

// dst[r][c] = src[(row0 + r) * ld + col0 + c], 0 outside rows x cols, by
// `Threads` threads (the whole block) in turn.  Zeros past the edges make the
// tile loops of every rung tail-free: a zero term adds nothing, exactly.
template <int Rows, int Cols, int Threads>
__device__ __forceinline__ void load_tile(float (&dst)[Rows][Cols], const float* __restrict__ src,
                                          int ld, int row0, int col0, int rows, int cols) {
  const int tid = static_cast<int>(threadIdx.y * blockDim.x + threadIdx.x);
  RL_UNROLL
  for (int i = tid; i < Rows * Cols; i += Threads) {
    const int r = i / Cols, c = i % Cols;
    dst[r][c] = (row0 + r < rows && col0 + c < cols) ? src[(row0 + r) * ld + col0 + c] : 0.0f;
  }
}

// Elements (row, col .. col + 3) of a rows x cols row-major matrix with
// leading dimension ld, those outside the matrix read as 0.  One 128-bit load
// (LDG.E.128) when all four are inside and `aligned` (rows_aligned16, col a
// multiple of 4); element loads at the edges.  No address outside the matrix
// is formed.
__device__ __forceinline__ Packed128<float> load4_or_zeros(const float* __restrict__ m, int ld,
                                                           int row, int col, int rows, int cols,
                                                           bool aligned) {
  Packed128<float> v{};
  if (row >= rows || col >= cols) return v;
  const float* src = m + row * ld + col;
  if (aligned && col + 4 <= cols) return load128(src);
  RL_UNROLL
  for (int j = 0; j < 4; ++j)
    if (col + j < cols) v[j] = src[j];
  return v;
}

// acc[i][j] += a[i] * b[j]: the 4 x 4 outer product of one float4 of A and
// one of B, 16 FFMAs.
__device__ __forceinline__ void outer_product_4x4(float (&acc)[4][4], const Packed128<float>& a,
                                                  const Packed128<float>& b) {
  RL_UNROLL
  for (int i = 0; i < 4; ++i) {
    RL_UNROLL
    for (int j = 0; j < 4; ++j) acc[i][j] += a[i] * b[j];
  }
}

// A 16-byte-aligned matrix with a leading dimension that keeps every row
// 16-byte aligned: the precondition of the 128-bit paths.
__device__ __forceinline__ bool rows_aligned16(const float* base, int ld) {
  return (reinterpret_cast<std::uintptr_t>(base) & 15u) == 0 && (ld & 3) == 0;
}

// Stores the four values of row `row`, columns col..col+3 of C, where in
// bounds: one 128-bit store (STG.E.128) when all four are and `aligned`.
__device__ __forceinline__ void store4_clipped(float* __restrict__ C, int ldc, int row, int col,
                                               int M, int N, bool aligned,
                                               const Packed128<float>& v) {
  if (row >= M || col >= N) return;
  float* dst = C + row * ldc + col;
  if (aligned && col + 4 <= N) {
    store128(dst, v);
    return;
  }
  RL_UNROLL
  for (int j = 0; j < 4; ++j)
    if (col + j < N) dst[j] = v[j];
}

// The global -> register half of a 128-bit tile load, for a block tile of
// BlockM x BlockN x BlockK by `Threads` threads: each thread fetches runs of
// four consecutive floats of a row (float4) of the A tile (BlockM x BlockK)
// and of the B tile (BlockK x BlockN), kAVecs and kBVecs of them.  store_staged() writes them into
// shared memory with A transposed (As[k][m]), so the compute loop reads A's thread fragment as
// consecutive floats, 128 bits at a time, just as it reads B's.
template <int BlockM, int BlockN, int BlockK, int Threads>
struct Vec128TileLoader {
  static constexpr int kAVecs = BlockM * BlockK / 4 / Threads;  // float4 per thread
  static constexpr int kBVecs = BlockK * BlockN / 4 / Threads;
  static_assert(kAVecs >= 1 && kAVecs * Threads * 4 == BlockM * BlockK, "A tile split evenly");
  static_assert(kBVecs >= 1 && kBVecs * Threads * 4 == BlockK * BlockN, "B tile split evenly");

  Packed128<float> a[kAVecs];
  Packed128<float> b[kBVecs];

  // Tile (block_row, block_col) of C at K offset k0.
  __device__ __forceinline__ void fetch(const float* __restrict__ A, const float* __restrict__ B,
                                        int M, int N, int K, int lda, int ldb, int block_row,
                                        int block_col, int k0, bool a_aligned, bool b_aligned) {
    const int tid = static_cast<int>(threadIdx.x);
    RL_UNROLL
    for (int i = 0; i < kAVecs; ++i) {
      const int v = tid + i * Threads;
      const int r = v / (BlockK / 4), c = (v % (BlockK / 4)) * 4;
      a[i] = load4_or_zeros(A, lda, block_row + r, k0 + c, M, K, a_aligned);
    }
    RL_UNROLL
    for (int i = 0; i < kBVecs; ++i) {
      const int v = tid + i * Threads;
      const int r = v / (BlockN / 4), c = (v % (BlockN / 4)) * 4;
      b[i] = load4_or_zeros(B, ldb, k0 + r, block_col + c, K, N, b_aligned);
    }
  }

  __device__ __forceinline__ void store_staged(float (&As)[BlockK][BlockM],
                                               float (&Bs)[BlockK][BlockN]) const {
    const int tid = static_cast<int>(threadIdx.x);
    RL_UNROLL
    for (int i = 0; i < kAVecs; ++i) {
      const int v = tid + i * Threads;
      const int r = v / (BlockK / 4), c = (v % (BlockK / 4)) * 4;
      RL_UNROLL
      for (int j = 0; j < 4; ++j) As[c + j][r] = a[i][j];
    }
    RL_UNROLL
    for (int i = 0; i < kBVecs; ++i) {
      const int v = tid + i * Threads;
      const int r = v / (BlockN / 4), c = (v % (BlockN / 4)) * 4;
      store128(&Bs[r][c], b[i]);
    }
  }
};

#endif  // __CUDACC__ || RL_EMULATE

}  // namespace rl::gemm
