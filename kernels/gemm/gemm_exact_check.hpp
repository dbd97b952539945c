// GEMM validation exact by construction: integer inputs whose every product
// and partial sum is exact in fp32, so C is compared with == and one
// dropped, duplicated or misplaced k-tile or element fails at any size.
//
// Why it is exact.  Every element of A and B is one of -2, -1, 1, 2: exact in
// every storage type (fp32, tf32, fp16, bf16, e4m3: 2 = 1.0 x 2^1; a block
// scale, where a format has one, is a power of two).  Each product is an
// integer in -4..4 and every partial sum, in any order and grouping, an
// integer of magnitude at most 4K.  fp32 holds every integer up to 2^24, so
// for 4K <= 2^24 (K <= 4M; the ladder's largest K is 11008) no rounding ever
// happens: not in an FFMA, not in a tensor core's aligned, truncated sum of a
// k group (aligning integers below 2^24 to the largest exponent among them
// drops no set bit).  Zero is left out so that a term in the wrong place
// changes the sum more often than not.
//
// Not by construction: Hopper's fp8 tensor cores keep about 14 bits of the
// sum inside an mma (DeepSeek-V3 report, section 3.3.2), exact while partial
// sums stay below 2^14 in magnitude.  With random signs they are near 2.5
// sqrt(K) (about 230 at K = 8192), so fp8 on Hopper (gemm_cublaslt_fp8,
// gemm_wgmma_inflight_fp8) is exact with overwhelming probability, not by
// construction; a failure there says the accumulator is narrower still, a
// finding rather than noise.
//
// How it scales.  While the full integer reference is cheap (the same limits
// as the float64 one, gemm_reference.hpp) every output is compared.  Beyond
// that, the sampled positions (every element of the first and last row and
// column, and thousands more) are compared exactly, and every output is
// checked at O(MN + MK + KN) cost by Freivalds' identities in int64:
//   C x = A (B x)   and   y^T C = (y^T A) B
// with x, y seeded vectors of -2, -1, 1, 2.  A single wrong output C_ij
// changes (C x)_i by (its error) x_j != 0, so it always fails the row check
// (and the column check); several wrong outputs could cancel in both sums
// only by a coincidence of the seeded weights.
//
// The timed inputs stay the seeded normals (gemm_workload.hpp says why).
#pragma once

#include "gemm/gemm_problem.hpp"
#include "gemm/gemm_reference.hpp"  // kFullCheckMax*, sample_positions
#include "rl/device_buffer.hpp"     // SeededRng
#include "rl/validate.hpp"

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace rl::gemm {

// count values from {-2, -1, 1, 2}, seeded.
inline std::vector<std::int8_t> exact_inputs(std::size_t count, std::uint64_t seed) {
  static constexpr std::int8_t kValues[] = {-2, -1, 1, 2};
  SeededRng rng(seed);
  std::vector<std::int8_t> out(count);
  for (std::int8_t& v : out) v = kValues[rng.next_u64() >> 62];
  return out;
}

namespace exact_detail {

inline std::size_t at(std::int64_t row, std::int64_t col, std::int64_t cols) {
  return static_cast<std::size_t>(row * cols + col);
}

// The first line of Freivalds' identities that fails, or "".  Row identity
// C x = A (B x); column identity y^T C = (y^T A) B.  Every sum streams its
// matrix row by row.  C's sums are kept in double, exact for integers (|C| <=
// 4K, weights <= 2, N < 2^31); an output that is not an integer or not finite
// makes its line's sum differ, whatever it is.
inline std::string first_wrong_line(std::span<const float> c, std::span<const std::int8_t> a,
                                    std::span<const std::int8_t> b, const Dims& d,
                                    std::span<const std::int8_t> x,
                                    std::span<const std::int8_t> y) {
  std::vector<std::int64_t> bx(static_cast<std::size_t>(d.K), 0);
  for (std::int64_t k = 0; k < d.K; ++k)
    for (std::int64_t j = 0; j < d.N; ++j) bx[k] += std::int64_t{b[at(k, j, d.N)]} * x[j];
  for (std::int64_t i = 0; i < d.M; ++i) {
    std::int64_t expected = 0;
    for (std::int64_t k = 0; k < d.K; ++k) expected += std::int64_t{a[at(i, k, d.K)]} * bx[k];
    double got = 0;
    for (std::int64_t j = 0; j < d.N; ++j) got += static_cast<double>(c[at(i, j, d.N)]) * x[j];
    if (!(got == static_cast<double>(expected)))
      return "row " + std::to_string(i) + ": C x = " + std::to_string(got) +
             ", A (B x) = " + std::to_string(expected);
  }
  std::vector<std::int64_t> ya(static_cast<std::size_t>(d.K), 0),
      expected(static_cast<std::size_t>(d.N), 0);
  std::vector<double> got(static_cast<std::size_t>(d.N), 0.0);
  for (std::int64_t i = 0; i < d.M; ++i) {
    for (std::int64_t k = 0; k < d.K; ++k) ya[k] += std::int64_t{a[at(i, k, d.K)]} * y[i];
    for (std::int64_t j = 0; j < d.N; ++j) got[j] += static_cast<double>(c[at(i, j, d.N)]) * y[i];
  }
  for (std::int64_t k = 0; k < d.K; ++k)
    for (std::int64_t j = 0; j < d.N; ++j) expected[j] += ya[k] * b[at(k, j, d.N)];
  for (std::int64_t j = 0; j < d.N; ++j)
    if (!(got[j] == static_cast<double>(expected[j])))
      return "column " + std::to_string(j) + ": y^T C = " + std::to_string(got[j]) +
             ", (y^T A) B = " + std::to_string(expected[j]);
  return "";
}

}  // namespace exact_detail

// C (M x N, as the kernel wrote it) against the exact product of the integer
// inputs a (M x K) and b (K x N): every output compared, or, past the full
// check's limits, the sampled positions compared and every output checked by
// Freivalds' row and column identities.
inline Validation exact_check(std::span<const float> c, std::span<const std::int8_t> a,
                              std::span<const std::int8_t> b, const Dims& d, bool sampled,
                              std::uint64_t seed) {
  using exact_detail::at;
  if (!sampled) {
    std::vector<std::int32_t> sum(static_cast<std::size_t>(d.M * d.N), 0);
    for (std::int64_t i = 0; i < d.M; ++i)
      for (std::int64_t k = 0; k < d.K; ++k)
        for (std::int64_t j = 0; j < d.N; ++j)
          sum[at(i, j, d.N)] += std::int32_t{a[at(i, k, d.K)]} * b[at(k, j, d.N)];
    const std::vector<double> ref(sum.begin(), sum.end());
    return compare_exactly(c, ref);
  }
  std::vector<std::int8_t> bt(b.size());  // B^T: each sampled dot reads two rows
  for (std::int64_t k = 0; k < d.K; ++k)
    for (std::int64_t j = 0; j < d.N; ++j) bt[at(j, k, d.K)] = b[at(k, j, d.N)];
  const std::vector<std::int64_t> positions = sample_positions(d, seed);
  std::vector<float> got(positions.size());
  std::vector<double> ref(positions.size());
  for (std::size_t p = 0; p < positions.size(); ++p) {
    const std::int64_t i = positions[p] / d.N, j = positions[p] % d.N;
    std::int64_t sum = 0;
    for (std::int64_t k = 0; k < d.K; ++k)
      sum += std::int64_t{a[at(i, k, d.K)]} * bt[at(j, k, d.K)];
    got[p] = c[static_cast<std::size_t>(positions[p])];
    ref[p] = static_cast<double>(sum);
  }
  Validation v = compare_exactly(got, ref);
  if (!v.passed) {
    v.detail = "sampled exact check of " + std::to_string(got.size()) +
               " outputs (element = index into the sampled positions): " + v.detail;
    return v;
  }
  const std::string wrong = exact_detail::first_wrong_line(
      c, a, b, d, exact_inputs(static_cast<std::size_t>(d.N), seed + 1),
      exact_inputs(static_cast<std::size_t>(d.M), seed + 2));
  if (!wrong.empty()) {
    v.passed = false;
    v.detail = "Freivalds check of every output (exact, integer inputs), " + wrong;
  }
  return v;
}

}  // namespace rl::gemm
