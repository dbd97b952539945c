// How the mma.sync rung (gemm_mma_sync_multistage.cu) stages its A and B
// tiles into swizzled shared memory: the hot loop's precomputed cp.async
// copies, the general copy of an edge tile, and tf32's rounding of a landed
// stage.
#pragma once

#include "gemm/gemm_storage.hpp"
#include "gemm/gemm_swizzle.hpp"
#include "gemm/gemm_tiles.hpp"
#include "rl/ptx.hpp"
#include "rl/unroll.hpp"

#include <bit>
#include <cstdint>

namespace rl::gemm {

// Whether the swizzle's XOR is the same for row r and row r + rows, every r:
// then a tile row `rows` further down is at a constant offset.
__host__ __device__ constexpr bool swizzle_repeats_every(Swizzle s, int rows) {
  for (int r = 0; r < 64; ++r)
    if (swizzle_xor(s, r) != swizzle_xor(s, r + rows)) return false;
  return true;
}

// One thread's cp.async copies of a Rows x (ChunksPerRow x 16 bytes) tile,
// computed once per thread for the whole k-loop: the hot loop only passes
// the k-tile's source pointer and the stage's tile.  Thread t copies chunk
// t % ChunksPerRow of rows t / ChunksPerRow + i·kRowStep: consecutive
// threads read consecutive chunks of a row (coalesced), and kRowStep is a
// period of the swizzle, so copy i lands kRowStep rows below copy 0 at the
// same swizzled chunk (an immediate offset).  Chunks outside the matrix
// (rows past rows_left, columns past cols_left) are zero-filled without a
// read and point at the tile's first element, which is inside the matrix
// for every k-tile the copies serve (tiles wholly inside K).
template <typename T, int Rows, int ChunksPerRow, int Threads, Swizzle S>
struct TileCopies {
  static constexpr int kPerChunk = 16 / static_cast<int>(sizeof(T));
  static constexpr int kRowBytes = ChunksPerRow * 16;
  static constexpr int kRowStep = Threads / ChunksPerRow;
  static constexpr int kCopies = Rows / kRowStep;
  static_assert(Threads % ChunksPerRow == 0 && Rows % kRowStep == 0, "whole rows per step");
  static_assert(swizzle_repeats_every(S, kRowStep), "each copy at the same swizzled chunk");

  int shared_offset;        // copy 0's swizzled byte offset in the tile
  int offset[kCopies];      // elements from the tile's first element (row·ld + column)
  unsigned bytes[kCopies];  // 16, fewer at a partial chunk, 0 outside the matrix

  // rows_left, cols_left: the matrix's rows and columns from the tile's
  // first element on (beyond them: zeros).
  __device__ __forceinline__ TileCopies(int thread, int ld, int rows_left, int cols_left) {
    // row < kRowStep for every thread of the block; written so that the
    // compiler knows it (a tile wholly inside its rows then needs no compare).
    const int row = thread / ChunksPerRow % kRowStep, col = thread % ChunksPerRow * kPerChunk;
    shared_offset = swizzled_offset(S, kRowBytes, row, thread % ChunksPerRow);
    const int col_elements = cols_left - col < kPerChunk ? cols_left - col : kPerChunk;
    RL_UNROLL
    for (int i = 0; i < kCopies; ++i) {
      const bool inside = row + i * kRowStep < rows_left && col_elements > 0;
      offset[i] = inside ? (row + i * kRowStep) * ld + col : 0;
      bytes[i] = inside ? static_cast<unsigned>(col_elements * static_cast<int>(sizeof(T))) : 0u;
    }
  }

  // src: the tile's first element; tile: the stage's swizzled tile.
  __device__ __forceinline__ void issue(unsigned char* tile, const T* src) const {
    RL_UNROLL
    for (int i = 0; i < kCopies; ++i)
      ptx::cp_async_16_zfill(tile + shared_offset + i * kRowStep * kRowBytes, src + offset[i],
                             bytes[i]);
  }
};

// The general copy, for the tiles TileCopies does not serve (the partial
// last k-tile, and operands whose rows are not 16-byte aligned): the rows x
// (chunks_per_row x 16 bytes) tile at (row0, col0) of a rows_total x
// cols_total row-major matrix, one 16-byte chunk per thread and step, zeros
// outside the matrix.  cp.async needs 16-byte-aligned sources: unaligned
// operands are copied element by element into the same swizzled slots.
template <typename T, int Rows, int ChunksPerRow, int Threads, Swizzle S>
__device__ __forceinline__ void stage_tile(unsigned char* tile, const T* __restrict__ src, int ld,
                                           int row0, int col0, int rows_total, int cols_total,
                                           bool aligned) {
  constexpr int kPerChunk = 16 / static_cast<int>(sizeof(T));
  constexpr int kChunks = Rows * ChunksPerRow;
  static_assert(kChunks % Threads == 0, "tile split evenly over the threads");
  const int tid = static_cast<int>(threadIdx.x);
  RL_UNROLL
  for (int i = 0; i < kChunks / Threads; ++i) {
    const int idx = tid + i * Threads;
    const int r = idx / ChunksPerRow, c = idx % ChunksPerRow;
    const int row = row0 + r, col = col0 + c * kPerChunk;
    unsigned char* dst = tile + swizzled_offset(S, ChunksPerRow * 16, r, c);
    const int in_bounds = row < rows_total && col < cols_total
                              ? (cols_total - col < kPerChunk ? cols_total - col : kPerChunk)
                              : 0;
    if (aligned) {
      // src_bytes = 0: nothing is read, the address only has to be valid.
      const T* from = in_bounds > 0 ? src + row * ld + col : src;
      ptx::cp_async_16_zfill(dst, from, static_cast<unsigned>(in_bounds * sizeof(T)));
    } else {
      T* out = reinterpret_cast<T*>(dst);
      RL_UNROLL
      for (int e = 0; e < kPerChunk; ++e)
        out[e] = e < in_bounds ? src[row * ld + col + e] : input_from_f32<T>(0.0f);
    }
  }
}

__device__ __forceinline__ std::uint32_t round_to_tf32(std::uint32_t bits) {
  return ptx::f32_to_tf32(std::bit_cast<float>(bits));
}

// tf32: each thread rounds the chunks it copied into a stage (cp.async
// bypasses the registers), in place, after its copies have landed and
// before the barrier that publishes them.  Every input is then rounded once
// per block (cvt.rna, u = 2^-11), where rounding at each fragment load would
// round it once per warp that reads it (two): 8 LDS.128 + 8 STS.128 + 32
// roundings per thread and k-tile instead of 64 roundings.
template <typename Copies>
__device__ __forceinline__ void round_own_chunks_to_tf32(unsigned char* tile,
                                                         const Copies& copies) {
  RL_UNROLL
  for (int i = 0; i < Copies::kCopies; ++i) {
    uint4* chunk = reinterpret_cast<uint4*>(tile + copies.shared_offset +
                                            i * Copies::kRowStep * Copies::kRowBytes);
    uint4 v = *chunk;
    v.x = round_to_tf32(v.x);
    v.y = round_to_tf32(v.y);
    v.z = round_to_tf32(v.z);
    v.w = round_to_tf32(v.w);
    *chunk = v;
  }
}

}  // namespace rl::gemm
