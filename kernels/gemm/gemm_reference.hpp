// GEMM validation: the float64 reference (full, or sampled on large
// problems) and the per-element error bound gamma_K * sum |a||b| it carries,
// for the FP32 SIMT rungs and for the tensor cores.
#pragma once

#include "gemm/gemm_problem.hpp"
#include "rl/device_buffer.hpp"  // SeededRng

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <utility>
#include <vector>

namespace rl::gemm {

// ---------------------------------------------------------------- error bound
//
// Every rung sums the K products of an output in some order (a running sum,
// BlockK-sized partial sums, FMAs or not).  For any order, floating-point
// summation of the K products with unit roundoff u satisfies
//
//   |c - ref| <= gamma_K * sum_k |a_ik| |b_kj|,   gamma_K = K u / (1 - K u)
//
// (Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed., §3.1 and
// eq. 3.5: each product passes through at most K roundings).  A kernel that
// rounds its inputs to a narrower type first (TF32 tensor cores read fp32 A
// and B with 10 mantissa bits) adds a relative error of at most u_in to each
// factor, (1 + u_in)^2 on each product.  The bound is applied to
// sum |a||b|, not to |c|: it is what the arithmetic guarantees even where
// the terms cancel.  How sharp it is: a dropped K step changes c by one term,
// about sum |a||b| / K, against a bound of about K u sum |a||b|, so a single
// missing term fails as long as K^2 u < 1 (K up to ~4000 in fp32; every test
// shape is far inside that).  Beyond it the worst-case bound can hide one
// term in some outputs, but not a wrong index or a missing tile, which
// change many terms of many outputs.
//
// Tensor cores.  Each input type's products are exact in fp32 (tf32 11 x 11
// significand bits, fp16 11 x 11, bf16 8 x 8, e4m3 4 x 4, all < 24 bits; the
// smallest subnormal products are far above fp32's underflow).  What is not
// IEEE is the sum: within one mma the k products and the accumulator are
// aligned to the largest exponent among them and added with truncation
// (round toward zero), then truncated to fp32 (Fasi, Higham, Mikaitis,
// Pranesh, "Numerical behavior of NVIDIA tensor cores", PeerJ CS 2021, for
// V100, T4 and A100).  So one mma step of depth k errs by at most about
// (k + 1) 2^-23 times its largest term, which is at most sum |a||b| of the
// terms so far, and over K / k steps by K (1 + 1/k) 2^-23 sum |a||b|
// <= K 2^-22 sum |a||b|.  The bound below counts this as K roundings with
// u = 2^-22 (twice fp32's round-to-nearest u: truncation, and the alignment
// inside a k group), whatever the order in which the tensor core adds.
// Hopper's fp8 path accumulates in fewer bits (about 14, DeepSeek-V3 report,
// section 3.3.2); it is not covered here but by kHopperFp8Error below, and
// the fp8 mma.sync rung does not run there (see gemm_mma_sync_multistage.cu).  Inputs stored in
// fp16, bf16 or fp8 are exact as read (unit_roundoff_inputs = 0: the reference reads the same
// stored values); TF32 kernels round fp32 inputs to 10 mantissa bits (cvt.rna, u_in = 2^-11).
struct ErrorModel {
  double unit_roundoff_accumulate = 0x1p-24;  // fp32 accumulation
  double unit_roundoff_inputs = 0;            // rounding of A and B by the kernel (0: none)
};

inline constexpr ErrorModel kFp32SimtError{};
inline constexpr ErrorModel kTensorCoreError{.unit_roundoff_accumulate = 0x1p-22};
inline constexpr ErrorModel kTensorCoreTf32Error{.unit_roundoff_accumulate = 0x1p-22,
                                                 .unit_roundoff_inputs = 0x1p-11};

// Hopper's fp8 tensor cores (wgmma e4m3; cuBLASLt's fp8 runs on them) add
// products into the fp32 accumulator keeping about 14 bits (DeepSeek-V3
// report, section 3.3.2), which the bound above does not cover.  A run of up
// to 128 products truncated at 2^-13 errs by up to 2^-6 of its sum |a||b|;
// this model allows that on top of the fp32 accumulation by counting it as
// an input rounding of 2^-7 ((1 + 2^-7)^2 - 1 > 2^-6).  That is a worst case
// only where the partial sums are promoted to full fp32 every 128 products
// or fewer (cuBLASLt without fast accumulation promotes at an interval it
// does not document; DeepSeek's kernels every 4 wgmmas).  A rung that keeps
// all of K in the wgmma accumulator (gemm_wgmma_inflight_fp8) has no such
// guarantee: its worst case grows with the K / 32 steps.  It passes because
// the truncation errors of terms of random sign largely cancel, far below
// the bound (one H100 run at 8192³, 2026-11-26: largest error 1.3% of
// max(|ref|, bound), cuBLASLt fp8's 0.05%; the emulator sums each wgmma in
// double): if an H100 fails it at large K, the rung needs promotion, not a
// looser bound.  A wrong index still fails at the test
// shapes (it moves an output by about sum |a||b| / sqrt(K), 6% at K = 256);
// at K = 8192 single wrong terms may hide.
inline constexpr ErrorModel kHopperFp8Error{.unit_roundoff_accumulate = 0x1p-22,
                                            .unit_roundoff_inputs = 0x1p-7};

// K u < 1 for every shape here (K <= 8192, u <= 2^-22); beyond, nothing is
// guaranteed and the factor is infinite.
inline double error_bound_factor(std::int64_t K, const ErrorModel& e) {
  const double ku = static_cast<double>(K) * e.unit_roundoff_accumulate;
  if (ku >= 1.0) return std::numeric_limits<double>::infinity();
  const double gamma = ku / (1.0 - ku);
  const double input = (1.0 + e.unit_roundoff_inputs) * (1.0 + e.unit_roundoff_inputs);
  return input * (1.0 + gamma) - 1.0;
}

// ---------------------------------------------------------------- reference
//
// Validation is full while the float64 reference costs at most
// kFullCheckMaxMacs multiply-adds and C has at most kFullCheckMaxOutputs
// elements; beyond that it is sampled: every element of the first and last
// row and column (where the tails of every tiling lie) plus at least
// kRandomSamples seeded positions, an O(samples K) host cost.
inline constexpr std::int64_t kFullCheckMaxMacs = std::int64_t{1} << 30;
inline constexpr std::int64_t kFullCheckMaxOutputs = std::int64_t{1} << 22;
inline constexpr std::int64_t kRandomSamples = 4096;

// Row-major positions (row * N + col), sorted, without repeats.
inline std::vector<std::int64_t> sample_positions(const Dims& d, std::uint64_t seed) {
  std::vector<std::int64_t> out;
  for (std::int64_t c = 0; c < d.N; ++c) {
    out.push_back(c);
    out.push_back((d.M - 1) * d.N + c);
  }
  for (std::int64_t r = 0; r < d.M; ++r) {
    out.push_back(r * d.N);
    out.push_back(r * d.N + d.N - 1);
  }
  auto dedup = [&] {
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
  };
  dedup();
  const std::int64_t target =
      std::min<std::int64_t>(d.M * d.N, static_cast<std::int64_t>(out.size()) + kRandomSamples);
  SeededRng rng(seed);
  while (static_cast<std::int64_t>(out.size()) < target) {
    for (std::int64_t i = 0; i < kRandomSamples; ++i)
      out.push_back(
          static_cast<std::int64_t>(rng.next_u64() % static_cast<std::uint64_t>(d.M * d.N)));
    dedup();
  }
  return out;
}

struct Reference {
  std::vector<std::int64_t> positions;  // empty: every output, in row-major order
  std::vector<double> value;            // float64 C at each checked position
  std::vector<double> bound;            // its absolute error bound
};

// a: M x K, b: K x N, exactly the values the kernel reads.  Full: row by row,
// c_i += a_ik b_k (streams B).  Sampled: over a transposed copy of B so that
// each sampled dot product reads both operands contiguously.
template <typename T>
Reference reference(std::span<const T> a, std::span<const T> b, const Dims& d,
                    const ErrorModel& error, bool sampled, std::uint64_t seed) {
  const auto M = static_cast<std::size_t>(d.M), N = static_cast<std::size_t>(d.N),
             K = static_cast<std::size_t>(d.K);
  const double factor = error_bound_factor(d.K, error);
  if (!sampled) {
    std::vector<double> value(M * N, 0.0), bound(M * N, 0.0);
    for (std::size_t i = 0; i < M; ++i) {
      double* c = value.data() + i * N;
      double* s = bound.data() + i * N;
      for (std::size_t k = 0; k < K; ++k) {
        const double aik = input_to_f32(a[i * K + k]);
        const T* bk = b.data() + k * N;
        for (std::size_t j = 0; j < N; ++j) {
          const double bkj = input_to_f32(bk[j]);
          c[j] += aik * bkj;
          s[j] += std::fabs(aik * bkj);
        }
      }
    }
    for (double& s : bound) s *= factor;
    return Reference{{}, std::move(value), std::move(bound)};
  }
  std::vector<T> bt(K * N);
  for (std::size_t k = 0; k < K; ++k)
    for (std::size_t j = 0; j < N; ++j) bt[j * K + k] = b[k * N + j];
  std::vector<std::int64_t> positions = sample_positions(d, seed);
  std::vector<double> value(positions.size()), bound(positions.size());
  for (std::size_t p = 0; p < positions.size(); ++p) {
    const auto i = static_cast<std::size_t>(positions[p]) / N;
    const auto j = static_cast<std::size_t>(positions[p]) % N;
    double c = 0, s = 0;
    for (std::size_t k = 0; k < K; ++k) {
      const double prod =
          static_cast<double>(input_to_f32(a[i * K + k])) * input_to_f32(bt[j * K + k]);
      c += prod;
      s += std::fabs(prod);
    }
    value[p] = c;
    bound[p] = factor * s;
  }
  return Reference{std::move(positions), std::move(value), std::move(bound)};
}

}  // namespace rl::gemm
