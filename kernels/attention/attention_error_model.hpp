// Attention error model: how far a variant's O may be from the float64
// reference, per element, by a first-order rounding-error analysis of what
// it accumulates and what it rounds to its storage type on the way.
#pragma once

#include "attention/attention_problem.hpp"
#include "attention/attention_reference.hpp"
#include "rl/cuda.hpp"
#include "rl/packed128.hpp"  // precision_name
#include "rl/validate.hpp"

#include <cmath>
#include <cstdint>
#include <type_traits>

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
// kernel's error, in the terms of the model above (M, A, u; O stored in
// bf16):
//  1. Logits.  Products of two e4m3 codes are exact, but Hopper's fp8 tensor
//     cores add them keeping about 14 bits (kFp8TensorCoreSum: a run of n
//     products truncated at 2^-13 errs by up to n·2^-13 of Σ|q·k|, the
//     GEMM family's kHopperFp8Error reasoning), n = d: 2^-7·M at d = 64.  The
//     descales and log2 e fold into the one FFMA of the softmax: 4u.
//  2. P is rounded to e4m3 as the A operand of P·V: a relative 2^-4 (3
//     mantissa bits, round to nearest), 16x bf16's, and the error the
//     emulator shows (its sums are exact).  P is multiplied by 2^8 first (exact;
//     O's final division takes it back), so only weights below 2^-14 fall into
//     e4m3's subnormals, with an absolute error of at most 2^-18 each:
//     N·2^-18·max|V| in all (without the 2^8 it would be N·2^-10·max|V|,
//     0.2·max|V| at N = 200).
//  3. P·V's sum runs in the wgmma accumulator, 128 keys per tile (another
//     run: 2^-6 of Σ p|v|), O rescaled in fp32 between tiles (N·2u); ℓ is
//     summed in fp32 from the unrounded p (N·2u); the division and the
//     descale of V: 2u.  That the accumulator carried across tiles holds
//     fp32 between the runs is the assumption (as gemm_wgmma_inflight_fp8's
//     header says of its K loop): an expectation on the GPU, not a worst case.
//     The emulator sums each wgmma in double, so there only 2 can show.
//  4. O rounded to bf16: rtol 2^-8.
// So |O - O_ref| <= (2ε + 2^-6 + 2^-4 + 4N·u + 2u)·A + N·2^-18·max|V|, ε =
// (d·2^-13 + 4u)·M + kExpError, on top of rtol = 2^-8.  Which term leads:
// on the GPU's worst case, the logits' truncation (2·d·2^-13·M = 0.14 at d
// = 64 with M ~ 8.7 from N(0, 1) inputs), then P's rounding (2^-4); what
// the emulator measures is P's rounding alone.  At N = 200, d = 64 (A ~
// 1.2) the bound is 0.26, the emulated kernel errs by 0.012, a missed
// rescale by 0.50 (fails; the bound has no factor 2 to spare), and the bf16
// flash bound (P's term 2^-8, not 2^-4) rejects the correct fp8 kernel: the
// tests show each, and a key let through the causal mask and P in the wrong
// layout (errors > 1) failing.  A V descale off by 12.5% passes (O moves ~0.15): the
// tolerance cannot see scale errors that small, one binade it does.
inline constexpr double kFp8TensorCoreSum = 0x1p-13;  // per product in a run
inline constexpr double kE4m3Roundoff = 0x1p-4;
inline constexpr double kFp8PScale = 256.0;                   // 2^8: P·2^8 before rounding
inline constexpr double kE4m3SubnormalHalfSpacing = 0x1p-10;  // of P·2^8: 2^-18 of P

inline Tolerance fp8_tolerance(const Dims& p, const Reference& ref) {
  const double u = kUnitRoundoff;
  const double logit_error = static_cast<double>(p.d) * kFp8TensorCoreSum + 4.0 * u;
  const double weight_error = logit_error * ref.max_abs_logit_terms + kExpError;
  const double relative_to_a = 2.0 * weight_error + 128.0 * kFp8TensorCoreSum + kE4m3Roundoff +
                               4.0 * static_cast<double>(p.N) * u + 2.0 * u;
  const double tiny_weights =
      static_cast<double>(p.N) * kE4m3SubnormalHalfSpacing / kFp8PScale * ref.max_abs_v;
  const double bf16 = unit_roundoff("bf16");
  return {bf16, (relative_to_a * ref.max_weighted_abs_v + tiny_weights) * (1.0 + bf16)};
}

}  // namespace rl::attention
