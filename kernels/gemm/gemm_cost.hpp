// GEMM cost model: FLOPs, bytes_min and the reuse-tile bytes_model every rung
// declares, and the device memory an instance allocates.
#pragma once

#include "gemm/gemm_problem.hpp"
#include "rl/roofline/cost.hpp"

#include <cmath>
#include <cstddef>

namespace rl::gemm {

// ---------------------------------------------------------------- cost model
//
// FLOPs: 2 M N K (one multiply and one add per term; an FMA counts 2).
//
// bytes_min: A and B read once, C written once, at their storage sizes.
//
// bytes_model: the global-memory traffic the rung requests, counted at the
// granularity at which the rung shares a load between the outputs that need
// it, its reuse tile (TileM x TileN outputs).  A tile of C needs a TileM x K
// panel of A and a K x TileN panel of B; so A is requested ceil(N / TileN)
// times in all, B ceil(M / TileM) times, and C is written once:
//
//   bytes_model = M K ceil(N / TileN) sizeof(A) + K N ceil(M / TileM) sizeof(B)
//                 + M N sizeof(C)
//
// The reuse tile is the block tile (BlockM x BlockN) for every rung that
// stages its panels in shared memory.  The naive and coalesced rungs stage
// nothing; the only sharing they get without relying on a cache is a warp's
// broadcast (one request serves every lane that reads the same address), so
// their reuse tile is the warp's footprint in C: 32 x 1 (naive) or 1 x 32
// (coalesced).  Whatever L1 and L2 recover on top of that shows as achieved
// bandwidth above the model, not as fewer modelled bytes.  BlockK does not
// enter: it sets how a panel is cut into steps, not how often it is read.
// As tiles grow the ladder moves right on the roofline, and the FP32 rungs
// cross from the memory-bound side to the compute-bound side.
struct ReuseTile {
  int M;
  int N;
};

inline double ceil_div(double a, double b) {
  return std::ceil(a / b);
}

inline roofline::Cost cost(const Dims& d, ReuseTile tile, std::size_t input_bytes,
                           roofline::ComputeUnit unit) {
  const double M = static_cast<double>(d.M), N = static_cast<double>(d.N),
               K = static_cast<double>(d.K);
  const double in = static_cast<double>(input_bytes);
  const double c_bytes = M * N * sizeof(float);
  return {
      .flops = 2.0 * M * N * K,
      .bytes_min = (M * K + K * N) * in + c_bytes,
      .bytes_model = M * K * ceil_div(N, tile.N) * in + K * N * ceil_div(M, tile.M) * in + c_bytes,
      .unit = unit};
}

// ------------------------------------------------ what the counters check
//
// (issue 28, docs/counters.md; the emulator counts exactly what rl/emu/
// counters.hpp lists.)  For a rung that issues its MMAs over whole block
// tiles BlockM x BlockN x BlockK, the edge tiles padded:
//
//   tensor_ops    = 2 ceil(M / BlockM) BlockM  ceil(N / BlockN) BlockN
//                     ceil(K / BlockK) BlockK
//   bytes_l2_load = M K ceil(N / BlockN) sizeof(A) + K N ceil(M / BlockM) sizeof(B)
//
// The loads are bytes_model's A and B terms: a cp.async with src-size reads
// only a chunk's in-bounds bytes and a TMA box only its in-bounds elements,
// so each block reads its in-bounds panels exactly (rows past M or K, columns
// past N or K: nothing).  Declared only where `loads_counted` (every load of
// A and B goes through those paths at this shape); C's plain stores are not
// declared, except by a rung that stores C through TMA (c_stores_counted):
//
//   bytes_l2_store = M N sizeof(C)   (a box's out-of-bounds part is not written)
struct CountedTile {
  int M;
  int N;
  int K;
};

inline void declare_counted(roofline::Cost& c, const Dims& d, CountedTile tile,
                            std::size_t input_bytes, bool loads_counted, bool c_stores_counted) {
  const double M = static_cast<double>(d.M), N = static_cast<double>(d.N),
               K = static_cast<double>(d.K);
  c.tensor_ops = 2.0 * ceil_div(M, tile.M) * tile.M * ceil_div(N, tile.N) * tile.N *
                 ceil_div(K, tile.K) * tile.K;
  const double in = static_cast<double>(input_bytes);
  if (loads_counted)
    c.bytes_l2_load = M * K * ceil_div(N, tile.N) * in + K * N * ceil_div(M, tile.M) * in;
  if (c_stores_counted) c.bytes_l2_store = M * N * sizeof(float);
}

// loads_counted of a rung that reads A and B through TMA only: the records
// pad rows to TMA's 16-byte pitch, so at every shape.
inline bool tma_loads_counted(const Dims&, std::size_t) {
  return true;
}

// How an instance stores B on the device (its host copies are always the
// logical, row-major K x N): as K x N, or transposed, N x K, for a kernel that
// takes B K-major only (Hopper's fp8 wgmma), as cuBLASLt's fp8 "TN" does.
enum class BStorage {
  k_by_n,  // row-major K x N, rows of N padded
  n_by_k,  // Bᵀ, row-major N x K, rows of K padded
};

// The device memory an instance allocates: A and B at storage size, their
// rows padded to a multiple of ld_multiple elements (B's rows as stored), C
// fp32.
inline std::size_t device_bytes(const Dims& d, std::size_t input_bytes, int ld_multiple = 1,
                                BStorage b_storage = BStorage::k_by_n) {
  const auto M = static_cast<std::size_t>(d.M), N = static_cast<std::size_t>(d.N),
             K = static_cast<std::size_t>(d.K);
  const bool transposed = b_storage == BStorage::n_by_k;
  const auto lda = static_cast<std::size_t>(padded_ld(d.K, ld_multiple)),
             ldb = static_cast<std::size_t>(padded_ld(transposed ? d.K : d.N, ld_multiple));
  return (M * lda + (transposed ? N : K) * ldb) * input_bytes + M * N * sizeof(float);
}

}  // namespace rl::gemm
