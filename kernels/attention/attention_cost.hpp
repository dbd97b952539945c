// Attention cost model: FLOPs, bytes_min, the naive and fused bytes_model,
// and the device memory an instance allocates.
//
// Why fusion wins, in the cost model's terms: the naive path writes and
// re-reads two B·H·N² tensors, so its traffic grows like N² while its FLOPs
// grow like N²·d: its intensity is a small constant (a few FLOP/B) and it sits
// on the bandwidth diagonal.  The fused kernel's traffic is Q, K, V, O plus
// the K/V re-reads per query tile, so its intensity is about BlockM/2 FLOP/B
// in fp32 (BlockM in a 16-bit type) and it moves right towards the compute
// roof (FP32, or the tensor cores').
#pragma once

#include "attention/attention_problem.hpp"
#include "rl/registry.hpp"
#include "rl/roofline/cost.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace rl::attention {

// ---------------------------------------------------------------- cost model
//
// FLOPs: the FlashAttention convention, 4·B·H·N²·d: the two matrix products
// Q·Kᵀ and P·V, 2·N²·d each per head (an FMA counts 2).  The softmax (exp,
// max, sum, divide) is not counted.  With the causal mask the count is halved
// (N²/2, not N(N+1)/2), so rates compare with published numbers; a variant
// that computes the masked half anyway (the naive one) gets no credit for it.
//
// Bytes are counted at the storage size (element_bytes = sizeof(T)): a bf16
// variant moves half the bytes of an fp32 one for the same traffic pattern.
inline double flops(const Dims& p) {
  return 4.0 * static_cast<double>(p.heads()) * static_cast<double>(p.N) *
         static_cast<double>(p.N) * static_cast<double>(p.d) * (p.causal ? 0.5 : 1.0);
}

inline double tensor_bytes(const Dims& p, std::size_t element_bytes) {
  return static_cast<double>(p.tensor_elements()) * static_cast<double>(element_bytes);
}

inline double score_bytes(const Dims& p, std::size_t element_bytes) {
  return static_cast<double>(p.score_elements()) * static_cast<double>(element_bytes);
}

// bytes_min: Q, K, V read once, O written once.
inline double bytes_min(const Dims& p, std::size_t element_bytes) {
  return 4.0 * tensor_bytes(p, element_bytes);
}

// bytes_model follows the GEMM family's convention: the global traffic the
// block tiles request (a matrix re-read once per tile of the other operand),
// whether or not L2 serves the re-reads, so all variants are counted alike.
//
// Naive (16×16 output tiles, one thread per output element, see
// attention_naive.cu):
//   scores   Q and K each read ⌈N/16⌉ times, S written once;
//   softmax  S read twice (running max and sum, then normalise), P written once;
//   P·V      P read ⌈d/16⌉ times, V read ⌈N/16⌉ times, O written once.
// The mask changes nothing: S and P are computed and stored in full.
inline constexpr std::int64_t kNaiveTile = 16;

inline double naive_bytes_model(const Dims& p, std::size_t element_bytes) {
  const auto tiles = [](std::int64_t n) {
    return static_cast<double>((n + kNaiveTile - 1) / kNaiveTile);
  };
  const double t = tensor_bytes(p, element_bytes);
  const double s = score_bytes(p, element_bytes);
  const double scores = 2.0 * tiles(p.N) * t + s;
  const double softmax = 2.0 * s + s;
  const double pv = tiles(p.d) * s + tiles(p.N) * t + t;
  return scores + softmax + pv;
}

// Fused (block_m query rows per block, K/V tiles of block_n keys): Q read
// once, O written once, K and V read once per query tile.  Under the causal
// mask a query tile reads only the key tiles up to its last row (the ones
// wholly above the diagonal are skipped), about half of them.
inline double fused_key_rows_read(const Dims& p, std::int64_t block_m, std::int64_t block_n) {
  double rows = 0;
  for (std::int64_t m0 = 0; m0 < p.N; m0 += block_m) {
    if (!p.causal) {
      rows += static_cast<double>(p.N);
      continue;
    }
    const std::int64_t last_row = std::min(m0 + block_m, p.N) - 1;
    rows += static_cast<double>(std::min(p.N, (last_row / block_n + 1) * block_n));
  }
  return rows;
}

inline double fused_bytes_model(const Dims& p, std::int64_t block_m, std::int64_t block_n,
                                std::size_t element_bytes) {
  const double kv_rereads = 2.0 * static_cast<double>(p.heads()) *
                            fused_key_rows_read(p, block_m, block_n) * static_cast<double>(p.d) *
                            static_cast<double>(element_bytes);
  return 2.0 * tensor_bytes(p, element_bytes) + kv_rereads;
}

// What the counters check (issue 28, docs/counters.md) for a fused kernel
// that loads Q, K and V through cp.async (src-size 0 past row N) or TMA (in
// bounds only) and computes every key tile it visits whole:
//   bytes_l2_load = fused_bytes_model - O's bytes (Q once, K and V once per
//                   query tile, only their rows < N);
//   tensor_ops    = 4 B H block_m block_n d x (key tiles the query tiles
//                   visit): Q·Kᵀ and P·V are each 2 block_m block_n d per
//                   (query tile, key tile), the padded rows past N included.
// O goes out through plain stores: not declared.
inline double fused_key_tiles(const Dims& p, std::int64_t block_m, std::int64_t block_n) {
  double tiles = 0;
  for (std::int64_t m0 = 0; m0 < p.N; m0 += block_m) {
    const std::int64_t keys = p.causal ? std::min(m0 + block_m, p.N) : p.N;
    tiles += static_cast<double>((keys + block_n - 1) / block_n);
  }
  return tiles;
}

inline void declare_fused_counts(roofline::Cost& c, const Dims& p, std::int64_t block_m,
                                 std::int64_t block_n, std::size_t element_bytes) {
  c.bytes_l2_load =
      fused_bytes_model(p, block_m, block_n, element_bytes) - tensor_bytes(p, element_bytes);
  c.tensor_ops = 4.0 * static_cast<double>(p.heads()) * static_cast<double>(block_m) *
                 static_cast<double>(block_n) * static_cast<double>(p.d) *
                 fused_key_tiles(p, block_m, block_n);
}

// The same for a kernel whose TMA maps see Q, K and V as one [B·H·N, d]
// matrix each (attention_wgmma_parts.hpp): a box's rows past its head's N
// are the next head's rows, inside the map, and read; only rows past the
// last head's lie out of bounds.  So each query tile reads block_m rows of Q
// and each visited key tile block_n rows of K and of V, clipped at B·H·N.
// tensor_ops as declare_fused_counts.
inline void declare_flattened_tma_counts(roofline::Cost& c, const Dims& p, std::int64_t block_m,
                                         std::int64_t block_n, std::size_t element_bytes) {
  const std::int64_t all_rows = p.heads() * p.N;
  const auto rows_from = [all_rows](std::int64_t row, std::int64_t box_rows) {
    return static_cast<double>(std::min(box_rows, all_rows - row));
  };
  double rows = 0;  // of Q, K and V together
  for (std::int64_t h = 0; h < p.heads(); ++h) {
    for (std::int64_t m0 = 0; m0 < p.N; m0 += block_m) {
      rows += rows_from(h * p.N + m0, block_m);
      const std::int64_t keys = p.causal ? std::min(m0 + block_m, p.N) : p.N;
      for (std::int64_t n0 = 0; n0 < keys; n0 += block_n)
        rows += 2 * rows_from(h * p.N + n0, block_n);
    }
  }
  declare_fused_counts(c, p, block_m, block_n, element_bytes);
  c.bytes_l2_load = rows * static_cast<double>(p.d) * static_cast<double>(element_bytes);
}

inline roofline::Cost cost(const Dims& p, double bytes_model, std::size_t element_bytes,
                           roofline::ComputeUnit unit) {
  return {.flops = flops(p),
          .bytes_min = bytes_min(p, element_bytes),
          .bytes_model = bytes_model,
          .unit = unit};
}

// ---------------------------------------------------------------- memory footprint
//
// Device memory an instance allocates (KernelRecord::device_bytes), so the
// harness can skip what does not fit before allocating.  Naive: Q, K, V, O
// and the two B·H·N² scratch tensors S and P, all of T (at B·N = 16k, d = 64,
// N = 16k in fp32 that is 69 GB).  Fused: Q, K, V, O only.
template <typename T = float>
std::size_t device_bytes_needed_naive(const Shape& shape) {
  const Dims p = dims(shape);
  return static_cast<std::size_t>(4 * p.tensor_elements() + 2 * p.score_elements()) * sizeof(T);
}

template <typename T = float>
std::size_t device_bytes_needed_fused(const Shape& shape) {
  return static_cast<std::size_t>(4 * dims(shape).tensor_elements()) * sizeof(T);
}

}  // namespace rl::attention
