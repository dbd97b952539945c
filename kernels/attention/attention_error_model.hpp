// Attention error model: how far a variant's O may be from the float64
// reference, per element, by a first-order rounding-error analysis of what
// it accumulates and what it rounds to its storage type on the way.
#pragma once

#include "attention/attention_problem.hpp"
#include "attention/attention_reference.hpp"
#include "rl/cuda.hpp"
#include "rl/packed128.hpp"  // precision_name
#include "rl/validate.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <type_traits>
#include <vector>

namespace rl::attention {

// ---------------------------------------------------------------- error model
//
// How far a variant's O may be from the float64 result, per element, by a
// first-order rounding-error analysis.  The inputs are exact (the reference
// reads the values as stored in T); the error comes from the arithmetic and
// from what the variant rounds to T on the way.  With M = max_abs_logit_terms,
// A = max_weighted_abs_v, u = 2^-24 (fp32) and u_T the unit roundoff of the
// storage type (bf16 2^-8, fp16 2^-11, fp32 0: covered by the plain fp32
// tolerance):
//
//  1. A logit s_j = scale·q·k_j is a sum of d products (exact in fp32 for
//     bf16 and fp16 inputs), off by at most Σ_d·M, where the sum factor is
//       SIMT fp32 (round to nearest)  Σ_n = λ·√n·u, the probabilistic bound of
//         an n-term sum (Higham & Mary, "A New Approach to Probabilistic
//         Rounding Error Analysis", SIAM J. Sci. Comput. 41(5), 2019: it holds
//         with probability at least 1 - 2n·exp(-λ²/2) under their model of
//         independent rounding errors; λ = 6);
//       tensor cores                  Σ_n = n·2u, the worst case of a
//         recursive sum that truncates (2u) once per term: the PTX ISA leaves
//         mma's accumulation order and rounding unspecified, and tensor cores
//         truncate rather than round (Fasi et al., "Numerical behavior of
//         NVIDIA tensor cores", PeerJ Comput. Sci. 7:e330, 2021), so the
//         errors are biased and the probabilistic √n bound does not apply.
//     Scaling (folding log2 e into the scale) and subtracting the row max
//     (|s - m| <= 2M) add 4u·M; storing S in T before the softmax (the naive
//     path in bf16/fp16) adds u_T·M.  exp / exp2 (expf, exp2f or
//     ex2.approx.f32, all within 2 ulp on the GPU, CUDA C++ Programming
//     Guide, "Mathematical Functions") adds kExpError = 2^-21 (4 ulp).  The
//     sum ε of these is a relative error on each weight p_j = exp(s_j - m).
//     (The max's own error cancels: it divides numerator and denominator.)
//  2. O = Σ p_j·v_j / Σ p_j.  Relative errors of at most a on the numerator's
//     weights and b on the denominator's move O by at most a·A + b·|O| <=
//     (a + b)·A.  Both carry ε (2ε·A); the numerator also carries u_T when P
//     is rounded to T before P·V (the flash kernel rounds the unnormalised
//     p_j in registers, the naive path the normalised P in memory); each of
//     the two sums over the N keys adds Σ_N, the division u.
//  3. fp16 has subnormals below 2^-14: a weight that small is rounded with an
//     absolute error up to 2^-25, not a relative one, which adds up to
//     N·2^-25·max|V| (the row sum is >= 1: the max key weighs 1).
//  4. Rounding O to T is a relative error u_T: the tolerance's rtol.
//
// So |O - O_ref| <= (2ε + 2Σ_N + u + [u_T if P in T])·A + [fp16] N·2^-25·max|V|,
// on top of rtol = u_T (or the plain fp32 tolerance, rl::tolerance_for("fp32")).
// Sizes at N = 129, d = 64, N(0, 1) inputs: fp32 SIMT ~1.5e-4 absolute, ~100x
// the error the fp32 kernels show, and a 0.1% error in the scale (~2e-3) fails;
// bf16 ~4e-3 + 2^-8·|O|, dominated by rounding P, and a 2% scale error, one
// masked key let through or a missing rescale of the accumulator fails (the
// tests show each).
inline constexpr double kUnitRoundoff = 0x1p-24;
inline constexpr double kLambda = 6.0;
inline constexpr double kExpError = 0x1p-21;

enum class Accumulation {
  simt_fp32,    // fp32 FMAs and adds, rounded to nearest
  tensor_core,  // mma.sync / library GEMMs with fp32 accumulators
};

struct ErrorModel {
  Accumulation accumulation;
  bool scores_in_storage_type;         // S stored in T before the softmax
  bool probabilities_in_storage_type;  // P rounded to T before P·V
};

// The fp32 SIMT kernels (naive and fused): nothing rounded below fp32.
inline constexpr ErrorModel kErrorSimtFp32{Accumulation::simt_fp32, false, false};
// The unfused path on library GEMMs: S and P stored in T between the kernels.
inline constexpr ErrorModel kErrorUnfusedTensorCore{Accumulation::tensor_core, true, true};
// Flash attention on tensor cores (this family's mma.sync kernel, cuDNN
// SDPA): S stays fp32 in registers, P is rounded to T as the A operand of P·V.
inline constexpr ErrorModel kErrorFlashTensorCore{Accumulation::tensor_core, false, true};

struct StorageRounding {
  double relative;       // unit roundoff u_T
  double tiny_absolute;  // absolute rounding error below the normal range (fp16)
};

template <typename T>
StorageRounding storage_rounding() {
  if constexpr (std::is_same_v<T, float>)
    return {0.0, 0.0};  // within the plain fp32 tolerance
  else  // u_T; fp16 also rounds absolutely below 2^-14 (bf16 has fp32's exponent range)
    return {unit_roundoff(precision_name<T>()), std::is_same_v<T, __half> ? 0x1p-25 : 0.0};
}

// Σ_n of item 1: the error factor of an n-term fp32 sum.
inline double sum_error_factor(std::int64_t n, Accumulation accumulation) {
  const double u = kUnitRoundoff;
  if (accumulation == Accumulation::simt_fp32)
    return kLambda * std::sqrt(static_cast<double>(n)) * u;
  return static_cast<double>(n) * 2.0 * u;
}

template <typename T>
Tolerance tolerance(const Dims& p, const Reference& ref, const ErrorModel& model) {
  const double u = kUnitRoundoff;
  const StorageRounding t = storage_rounding<T>();
  const double logit_error = sum_error_factor(p.d, model.accumulation) + 4.0 * u +
                             (model.scores_in_storage_type ? t.relative : 0.0);
  const double weight_error = logit_error * ref.max_abs_logit_terms + kExpError;
  const double relative_to_a = 2.0 * weight_error +
                               2.0 * sum_error_factor(p.N, model.accumulation) + u +
                               (model.probabilities_in_storage_type ? t.relative : 0.0);
  const double tiny_weights = model.probabilities_in_storage_type
                                  ? static_cast<double>(p.N) * t.tiny_absolute * ref.max_abs_v
                                  : 0.0;
  const double extra = relative_to_a * ref.max_weighted_abs_v + tiny_weights;
  if constexpr (std::is_same_v<T, float>) {
    const Tolerance base = tolerance_for("fp32");
    return {base.rtol, base.atol + extra};
  } else {
    // O rounded to T: relative u_T, absolute t.tiny_absolute below the normal range.
    return {t.relative, extra * (1.0 + t.relative) + t.tiny_absolute};
  }
}

// ---------------------------------------------------------------- FP8 (e4m3)
//
// attention_wgmma_fp8_sm90a.cu: Q, K, V stored as e4m3 codes times a
// per-tensor power-of-two scale, so the values they represent (code·scale)
// are exact in fp32 and the float64 reference reads exactly those.  The
// bound is per query row i (fp8_row_bounds computes its magnitudes; the FP8
// workload applies each row's own): a global max|V| or max logit would make
// it larger than |O| at long N (|O| ~ 1/√N for N(0, 1) inputs), where an
// all-zero O would pass.  The kernel's error, O stored in bf16:
//  1. Logits.  Products of two e4m3 codes are exact, but Hopper's fp8 tensor
//     cores add them keeping about 14 bits (DeepSeek-V3 report §3.3.2; not
//     measured here).  Under the alignment model of gemm_reference.hpp (each
//     mma step's k products and the accumulator aligned to the largest of
//     them and truncated), a k = 32 step errs by at most 33·2^-13 of
//     max(|accumulator|, max |q_c·k_c| of the step); over the d/32 steps of
//     a logit that is e_ij, which fp8_row_bounds sums with the exact partial
//     sums (the accumulator's own error is second order), times the scale.
//     The d/32 wgmmas of a tile are taken as one such run (no wider
//     accumulator between them): the worst case, kept while unmeasured.
//     The descales and log2 e fold into the softmax's one FFMA, and
//     subtracting the max: 4u·max_j |s_ij|; exp2: kExpError.  So weight p_ij
//     is off by a relative ε_ij = e_ij + 4u·max_j |s_ij| + kExpError, which
//     moves O_ic by at most L_ic = (Σ_j p_ij·ε_ij·|V_jc| + |O_ic|·Σ_j p_ij·
//     ε_ij) / ℓ_i (numerator and denominator); L_i, the largest over c.
//     Each key's own ε_ij, not the row's largest: the largest belongs to an
//     outlier key of little weight (the largest's 2ε·A is ~10x L_i at N = 16k).
//  2. P is rounded to e4m3 (round to nearest) as the A operand of P·V, after
//     a multiplication by 2^8 (exact; O's final division takes it back): a
//     relative 2^-4, or below 2^-14 (e4m3's subnormals of P·2^8) an absolute
//     2^-18, in units of the running max, which only grows, so at most that
//     in the final max's.  Round to nearest is unbiased: with the errors
//     independent and of mean zero (the model of Higham & Mary, as the SIMT
//     sums above use, λ = 6), Hoeffding's inequality bounds the error of
//     column c by λ·√(Σ_j (b_j·V_jc)²)/ℓ_i, b_j = 2^-4·p_ij + 2^-18, with
//     probability at least 1 - 2·exp(-λ²/2) per element: R_i, the largest
//     over c.  (Charged as a worst case, 2^-4·A_i, it exceeds |O| at N = 16k.)
//  3. P·V's sum runs in the wgmma accumulator, 128 keys per tile (another
//     run: 128·2^-13 = 2^-6 of Σ p|v|, the worst case kept: unmeasured), O
//     rescaled in fp32 between tiles (N·2u); ℓ is summed in fp32 from the
//     unrounded p (N·2u); the division and the descale of V: 2u.  That the
//     accumulator carried across tiles holds fp32 between the runs is the
//     assumption (as gemm_wgmma_inflight_fp8's header says of its K loop).
//     The emulator sums each wgmma in double, so there only 2 shows.
//  4. O rounded to bf16: rtol 2^-8.
// So row i: |O - O_ref| <= L_i + (2^-6 + 4N·u + 2u)·A_i + R_i, A_i = max_c
// Σ_j P_ij·|V_jc|, on top of rtol = 2^-8.  Sizes on e4m3-rounded N(0, 1)
// inputs, d = 64, not causal, the largest over 64 sampled rows (atol) and
// the largest |O_ref| (the former global bound, max |V| and the largest
// logit for every row: 0.21 / 0.26 / 0.55, above |O| from N = 4096 on):
//     N       atol     max |O_ref|   rows whose max |O_ref| > atol   L, 2^-6·A, R
//     1024    0.067    0.27          all                             0.005 0.013 0.025
//     4096    0.047    0.13          all                             0.005 0.013 0.012
//     16384   0.030    0.045         some (max |O_i| / atol_i 0.9-1.8) 0.004 0.013 0.005
// (one seed, a float64 simulation of this bound).  At 16k P·V's worst-case
// run term leads: a GPU measurement of the fp8 accumulation could shrink it.
// The emulator, whose sums are exact, shows P's rounding alone (0.012 at N =
// 200).  At N = 1024 an all-zero O, s_V off by a binade and a wrong last
// causal row fail (the tests show each); the bf16 flash bound (P's term
// 2^-8) rejects the correct kernel.
inline constexpr double kFp8TensorCoreSum = 0x1p-13;  // per product in a run
inline constexpr int kFp8MmaK = 32;                   // products per wgmma step (k32)
inline constexpr double kE4m3Roundoff = 0x1p-4;
inline constexpr double kFp8PScale = 256.0;  // 2^8: P·2^8 before rounding
inline constexpr double kE4m3SubnormalHalfSpacing = 0x1p-10 / kFp8PScale;  // of P
inline constexpr int kFp8PvRun = 128;                                      // keys per P·V tile

// One checked row's magnitudes (item numbers of the note above).
struct Fp8RowBound {
  double logit_term = 0;        // L_i (1)
  double weighted_abs_v = 0;    // A_i
  double rounded_p_spread = 0;  // R_i (2)
};

// For each checked row of each head, [B·H][rows.size()], on the values the
// kernel reads (code·scale).
inline std::vector<Fp8RowBound> fp8_row_bounds(const Dims& p, float scale, std::span<const float> q,
                                               std::span<const float> k, std::span<const float> v,
                                               const std::vector<std::int64_t>& rows) {
  const auto d = static_cast<std::size_t>(p.d), N = static_cast<std::size_t>(p.N);
  const double sc = std::fabs(double{scale});
  std::vector<Fp8RowBound> out;
  std::vector<double> logits(N), key_error(N);  // s_ij then p_ij; ε_ij
  std::vector<double> abs_v(d), spread(d), o(d), logit_v(d);
  for (std::size_t head = 0; head < static_cast<std::size_t>(p.heads()); ++head) {
    const float* qh = q.data() + head * N * d;
    const float* kh = k.data() + head * N * d;
    const float* vh = v.data() + head * N * d;
    for (const std::int64_t row : rows) {
      const auto i = static_cast<std::size_t>(row);
      const std::size_t visible = p.causal ? i + 1 : N;
      double row_max = -INFINITY, max_abs_logit = 0;
      for (std::size_t j = 0; j < visible; ++j) {
        double partial = 0, sum_error = 0;
        for (std::size_t c0 = 0; c0 < d; c0 += kFp8MmaK) {
          double largest = std::fabs(partial);
          for (std::size_t c = c0; c < std::min(d, c0 + kFp8MmaK); ++c) {
            const double term = double{qh[i * d + c]} * kh[j * d + c];
            largest = std::max(largest, std::fabs(term));
            partial += term;
          }
          sum_error += (kFp8MmaK + 1) * kFp8TensorCoreSum * largest;
        }
        logits[j] = sc * partial;
        row_max = std::max(row_max, logits[j]);
        max_abs_logit = std::max(max_abs_logit, std::fabs(logits[j]));
        key_error[j] = sc * sum_error;
      }
      double ell = 0, logit_ell = 0;  // ℓ_i and Σ_j p_ij·ε_ij
      for (std::size_t j = 0; j < visible; ++j) {
        ell += (logits[j] = std::exp(logits[j] - row_max));
        key_error[j] += 4.0 * kUnitRoundoff * max_abs_logit + kExpError;
        logit_ell += logits[j] * key_error[j];
      }
      for (std::vector<double>* sums : {&abs_v, &spread, &o, &logit_v})
        std::fill(sums->begin(), sums->end(), 0.0);
      for (std::size_t j = 0; j < visible; ++j) {
        const double b = kE4m3Roundoff * logits[j] + kE4m3SubnormalHalfSpacing;
        for (std::size_t c = 0; c < d; ++c) {
          const double vjc = vh[j * d + c];
          o[c] += logits[j] * vjc;
          abs_v[c] += logits[j] * std::fabs(vjc);
          logit_v[c] += logits[j] * key_error[j] * std::fabs(vjc);
          spread[c] += b * b * vjc * vjc;
        }
      }
      Fp8RowBound r;
      for (std::size_t c = 0; c < d; ++c) {
        r.logit_term =
            std::max(r.logit_term, (logit_v[c] + std::fabs(o[c] / ell) * logit_ell) / ell);
        r.weighted_abs_v = std::max(r.weighted_abs_v, abs_v[c] / ell);
        r.rounded_p_spread = std::max(r.rounded_p_spread, kLambda * std::sqrt(spread[c]) / ell);
      }
      out.push_back(r);
    }
  }
  return out;
}

inline Tolerance fp8_tolerance(const Dims& p, const Fp8RowBound& row) {
  const double u = kUnitRoundoff;
  const double relative_to_a =
      kFp8PvRun * kFp8TensorCoreSum + 4.0 * static_cast<double>(p.N) * u + 2.0 * u;
  const double bf16 = unit_roundoff("bf16");
  return {bf16, (row.logit_term + relative_to_a * row.weighted_abs_v + row.rounded_p_spread) *
                    (1.0 + bf16)};
}

}  // namespace rl::attention
