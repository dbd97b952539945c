// GEMM shared-memory swizzles: where the mma.sync rung stores each 16-byte
// chunk of its A and B tiles so that ldmatrix and cp.async run without bank
// conflicts, and which chunk each ldmatrix lane addresses.  Host and device
// (constexpr), so a host test can check the conflict-freedom.
#pragma once

#include "rl/cuda.hpp"

namespace rl::gemm {

// ---------------------------------------------------------------- swizzled shared memory
//
// The mma.sync rung stages tiles in shared memory as rows of 16-byte chunks
// (the unit of cp.async and of an ldmatrix row).  Shared memory has 32 banks
// of 4 bytes: a 128-byte line, 8 chunks, one per "bank group" of 4 banks.
// A warp's ldmatrix is served in 4 phases of 8 lanes, each phase reading 8
// chunks (the 8 rows of one 8 x 8 matrix); a 16-byte cp.async store, in
// phases of 8 threads likewise.  A phase is conflict-free when its 8 chunks
// lie in 8 distinct bank groups.  Stored plainly, the 8 rows an ldmatrix
// reads sit at the same chunk of consecutive rows: in the same bank group
// whenever the row length is a multiple of 128 bytes (B: an 8-way conflict),
// or in 2 groups with 64-byte rows (A: 4-way).  The swizzle stores chunk c of
// row r at chunk c ^ x(r), a permutation of each aligned group of 8 (of 4 for
// 64-byte rows), so a row's chunks stay in that row (cp.async writes of 8
// consecutive chunks stay conflict-free) while x(r) spreads the rows a read
// phase touches over all 8 groups.  Which rows a phase touches depends on the
// operand, hence one x per operand kind:
enum class Swizzle {
  none,     // plain row-major (the counter-example of the tests)
  rows64B,  // A tiles, 64-byte rows (BlockK elements): ldmatrix over 8 consecutive
            // rows, two rows per 128-byte line: x = (r / 2) mod 4
  rows8,    // 16-bit B, rows >= 128 bytes: ldmatrix.trans over 8 consecutive k: x = r mod 8
  tf32_b,   // tf32 B, LDS.32 of rows k..k+3 at 2 adjacent chunks: x = 2 (r mod 4)
  fp8_b,    // fp8 B, ldmatrix.trans over rows k = 4t, 4t+1 (t = 0..3) or 4t+2, 4t+3:
            // x = (r mod 2) + 2 ((r / 4) mod 4)
};

__host__ __device__ constexpr int swizzle_xor(Swizzle s, int row) {
  switch (s) {
    case Swizzle::none:
      return 0;
    case Swizzle::rows64B:
      return (row >> 1) & 3;
    case Swizzle::rows8:
      return row & 7;
    case Swizzle::tf32_b:
      return (row & 3) << 1;
    case Swizzle::fp8_b:
      return (row & 1) | ((row >> 1) & 6);
  }
  return 0;
}

// The swizzle: where chunk `chunk` of tile row `row` is stored, in bytes from
// the tile's start (row_bytes: the tile's row length, a multiple of 64).
__host__ __device__ constexpr int swizzled_offset(Swizzle s, int row_bytes, int row, int chunk) {
  return row * row_bytes + (chunk ^ swizzle_xor(s, row)) * 16;
}

struct ChunkAt {
  int row;
  int chunk;
};

// The row an ldmatrix.x4 lane addresses: lane L gives row L % 8 of matrix
// L / 8, the matrices being (rows row0.., chunk0), (rows row0 + 8.., chunk0),
// (rows row0.., chunk0 + 1), (rows row0 + 8.., chunk0 + 1).  For A (rows = m,
// chunks along k) that is a0..a3 of an m16 x k fragment (16-bit k16, and
// also tf32 k8 and e4m3 k32: ldmatrix.b16 hands lane L bytes 4(L % 4)..+3 of
// row L / 4, which is the 32-bit A element of those types); for 16-bit B
// with .trans (rows = k, chunks along n) it is b0, b1 of two n8 tiles.
__host__ __device__ constexpr ChunkAt ldmatrix_x4_source(int lane, int row0, int chunk0) {
  return {row0 + lane % 8 + 8 * ((lane / 8) % 2), chunk0 + lane / 16};
}

// fp8 B (row-major, rows = k, 16 n per chunk) by ldmatrix.x4.trans: matrix
// q = L / 8 takes rows k0 + 16 (q / 2) + 2 (q % 2) + {0, 1, 4, 5, 8, 9, 12,
// 13}, so that lane (g, t) receives k = 4t, 4t + 1 (q even) and 4t + 2,
// 4t + 3 (q odd) of n columns 2g, 2g + 1: byte permutes then form the four
// consecutive k of one n that the m16n8k32 B fragment holds.
__host__ __device__ constexpr ChunkAt fp8_b_ldmatrix_x4_trans_source(int lane, int k0, int chunk) {
  const int q = lane / 8, r = lane % 8;
  return {k0 + 16 * (q / 2) + 2 * (q % 2) + 4 * (r / 2) + r % 2, chunk};
}

}  // namespace rl::gemm
