// Attention shared-memory swizzle: where the tensor-core kernel stores each
// 16-byte chunk of its Q, K and V tiles so that ldmatrix and cp.async run
// without bank conflicts.  Host and device (constexpr), so a host test can
// check the conflict-freedom.
#pragma once

#include "rl/cuda.hpp"

namespace rl::attention {

// ---------------------------------------------------------------- shared-memory swizzle
//
// The tensor-core kernel's Q, K and V tiles in shared memory are [rows][D]
// 16-bit elements, a row of D/8 chunks of 16 bytes.  ldmatrix reads an 8×8
// matrix per 8-lane phase: 8 rows, one 16-byte chunk each, at the same column.
// Shared memory has 32 banks of 4 bytes (a 128-byte line), so chunk c of any
// row whose pitch is a multiple of 128 bytes (D = 64: 128 B, D = 128: 256 B)
// sits on banks 4·(c % 8) .. +3: the 8 rows of a phase would all hit the same
// 4 banks, an 8-way conflict.  XOR-ing the chunk index with row % 8 spreads
// any 8 consecutive rows over the 8 bank quads, for reads (ldmatrix, .trans
// too) and for the cp.async writes of a row alike.  Here (not in the kernel's
// file) so a host test can check exactly that.
inline constexpr int kSwizzleChunkElements = 8;  // 16 bytes of a 16-bit type

__host__ __device__ constexpr int swizzled_chunk(int row, int chunk) {
  return chunk ^ (row & 7);
}

// Element offset of (row, col) in a swizzled [rows][D] tile; col % 8 is kept.
template <int D>
__host__ __device__ constexpr int swizzled_index(int row, int col) {
  static_assert(D % (8 * kSwizzleChunkElements) == 0, "the XOR needs 8 chunks per row");
  return row * D + swizzled_chunk(row, col / kSwizzleChunkElements) * kSwizzleChunkElements +
         col % kSwizzleChunkElements;
}

// The swizzled offset 16·k columns further along a row, from the offset of
// a column in the row's first 16: swizzled_index<D>(row, col + 16·k) ==
// swizzled_advance(swizzled_index<D>(row, col), k) for col < 16 and 16·k <
// D.  Chunk c + 2k is c ^ 2k there (c < 2 shares no bit with 2k), XOR
// commutes with the swizzle's, and row·D leaves the low log2(D) bits free:
// one XOR per k-step instead of the whole index, with the lane's part of it
// computed once.
__host__ __device__ constexpr int swizzled_advance(int offset, int k) {
  return offset ^ (2 * k * kSwizzleChunkElements);
}

}  // namespace rl::attention
