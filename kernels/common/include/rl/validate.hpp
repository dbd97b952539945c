// The one tolerance policy per precision and the one comparison against a
// float64 reference.  NaN or Inf in the output never passes.
#pragma once

#include "rl/host_parallel.hpp"
#include "rl/registry.hpp"

#include <cmath>
#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace rl {

struct Tolerance {
  double rtol;  // relative to |reference|
  double atol;  // absolute floor, for references near zero
};

// Significand bits p of a storage format, the implicit leading bit included
// (e4m3 for fp8; tf32 keeps fp16's 10 stored bits).
inline constexpr int significand_bits(std::string_view precision) {
  if (precision == "fp64") return 53;
  if (precision == "tf32" || precision == "fp16") return 11;
  if (precision == "bf16") return 8;
  if (precision == "fp8") return 4;
  return 24;  // fp32
}

// Unit roundoff u = 2^-p: rounding a value to the format moves it by at most
// u relative (half a unit in the last place), below the subnormal range aside.
inline double unit_roundoff(std::string_view precision) {
  return std::ldexp(1.0, -significand_bits(precision));
}

// The arithmetic behind every kernel's output is fp32 (fp64 for an fp64
// output); a few rounded operations and one CUDA math function (tanhf, erff,
// expf, rsqrtf: at most 2 ulp each, CUDA C++ Programming Guide, "Mathematical
// Functions") stay within this many units of its roundoff.
inline constexpr double kMathRoundoffs = 8.0;

inline double math_roundoff(std::string_view precision) {
  return unit_roundoff(precision == "fp64" ? "fp64" : "fp32");
}

// The one tolerance policy.  An output stored as `precision` whose fp32 math
// is accurate to a relative `math_error` (default: kMathRoundoffs units of
// fp32 roundoff) is within
//   rtol = u_T + math_error   the rounding to the output's type, relative to
//                             the result and never amplified, plus the math;
//   atol = math_error         an absolute floor in the units of the operands
//                             (magnitude ~1): a result near zero after
//                             cancellation keeps the math's absolute error.
// A variant or family whose error model amplifies the math (a condition
// number, a long sum, an approximation's documented bound) passes its own
// math_error, or scales atol by its operands' magnitude, and says why next
// to it.  bf16: rtol 2^-8 + 2^-21, atol 2^-21, so an output one bf16 ulp
// further from the truth than the correctly rounded value fails (the GELU
// tests show it), as does the erf form of GELU where the tanh form is asked.
inline Tolerance tolerance_for(std::string_view precision, double math_error) {
  const double output_rounding = precision == "fp32" || precision == "fp64"
                                     ? 0.0  // the math's last rounding is the output's
                                     : unit_roundoff(precision);
  return {output_rounding + math_error, math_error};
}

inline Tolerance tolerance_for(std::string_view precision) {
  return tolerance_for(precision, kMathRoundoffs * math_roundoff(precision));
}

namespace detail {

// What element i of a comparison is held to: it passes if |got - ref| <=
// allowed; its relative error is |got - ref| / max(|ref|, rel_floor).
struct ElementLimits {
  double allowed;
  double rel_floor;
};

// The one element-wise comparison behind both policies below, element i held
// to limits(i, ref[i]); the first failure is described with `suffix(i)`
// appended, unless `result` arrives failed already.  A non-finite output never
// passes.  Chunks run on all cores (host_parallel.hpp); each notes its maxima
// and its first failure, and the chunks are folded in index order, so the
// result is the serial loop's, whatever the thread count.
template <typename Limits, typename Suffix>
Validation compare_elements(std::span<const float> got, std::span<const double> ref,
                            Validation result, Limits limits, Suffix suffix) {
  struct ChunkResult {
    double max_rel_err = 0;
    double max_abs_err = 0;
    std::string first_failure;  // empty if every element of the chunk passed
  };
  std::vector<ChunkResult> chunks((got.size() + kLoopChunk - 1) / kLoopChunk);
  parallel_chunks(got.size(), kLoopChunk, [&](std::size_t begin, std::size_t end) {
    ChunkResult& c = chunks[begin / kLoopChunk];
    for (std::size_t i = begin; i < end; ++i) {
      const double g = got[i];
      const double r = ref[i];
      const double diff = std::fabs(g - r);
      if (!std::isfinite(g)) {
        if (c.first_failure.empty())
          c.first_failure = "non-finite output at " + std::to_string(i) + " (reference " +
                            std::to_string(r) + ")";
        c.max_rel_err = INFINITY;
        c.max_abs_err = INFINITY;
        continue;
      }
      const ElementLimits limit = limits(i, r);
      const double rel = diff / std::fmax(std::fabs(r), limit.rel_floor);
      if (rel > c.max_rel_err) c.max_rel_err = rel;
      if (diff > c.max_abs_err) c.max_abs_err = diff;
      if (!(diff <= limit.allowed) && c.first_failure.empty())
        c.first_failure = "element " + std::to_string(i) + ": got " + std::to_string(g) +
                          ", expected " + std::to_string(r) + suffix(i);
    }
  });
  if (result.detail.empty()) result.passed = true;
  for (ChunkResult& c : chunks) {
    if (c.max_rel_err > result.max_rel_err) result.max_rel_err = c.max_rel_err;
    if (c.max_abs_err > result.max_abs_err) result.max_abs_err = c.max_abs_err;
    if (!c.first_failure.empty() && result.passed) {
      result.passed = false;
      result.detail = std::move(c.first_failure);
    }
  }
  return result;
}

inline Validation size_mismatch(Validation result, std::string detail) {
  result.passed = false;
  result.detail = std::move(detail);
  return result;
}

inline Validation size_mismatch(Validation result, std::size_t got, std::size_t ref) {
  return size_mismatch(std::move(result), "output size " + std::to_string(got) +
                                              " != reference size " + std::to_string(ref));
}

}  // namespace detail

// Element i passes if |got - ref| <= atol + rtol * |ref|.  max_rel_err is
// |got - ref| / max(|ref|, atol / rtol): a relative error that does not blow
// up at zero crossings.
inline Validation compare_to_reference(std::span<const float> got, std::span<const double> ref,
                                       Tolerance tol, Validation result = {}) {
  if (got.size() != ref.size())
    return detail::size_mismatch(std::move(result), got.size(), ref.size());
  const double floor = tol.atol / tol.rtol;
  return detail::compare_elements(
      got, ref, std::move(result),
      [tol, floor](std::size_t, double r) {
        return detail::ElementLimits{tol.atol + tol.rtol * std::fabs(r), floor};
      },
      [](std::size_t) { return std::string(); });
}

// Element i passes if |got - ref| <= bound(i), an absolute error bound the
// caller derived for that element (GELU: gelu/gelu_reference.hpp's
// error_bound).  For operations whose error scales with the size of the terms
// rather than of the result, where a relative tolerance would be either
// vacuous or fail on cancellation.  max_rel_err is |got - ref| / max(|ref|,
// bound(i)); max_abs_err is the largest |got - ref|.  bound(i) is computed
// during the comparison, on all cores: at the large preset an array of bounds
// would be another 2-4 GiB to fill and to read.
template <typename Bound>
requires std::is_invocable_r_v<double, Bound, std::size_t> Validation compare_with_bounds(
    std::span<const float> got, std::span<const double> ref, Bound bound, Validation result = {}) {
  if (got.size() != ref.size())
    return detail::size_mismatch(std::move(result), got.size(), ref.size());
  return detail::compare_elements(
      got, ref, std::move(result),
      [&bound](std::size_t i, double) {
        const double b = bound(i);
        return detail::ElementLimits{b, b};
      },
      [&bound](std::size_t i) { return " (bound " + std::to_string(bound(i)) + ")"; });
}

// As above with the bounds stored, bound[i] (GEMM: gamma * sum_k |a_ik|
// |b_kj|, see gemm/gemm_reference.hpp).
inline Validation compare_with_bounds(std::span<const float> got, std::span<const double> ref,
                                      std::span<const double> bound, Validation result = {}) {
  if (got.size() != ref.size() || bound.size() != ref.size())
    return detail::size_mismatch(
        std::move(result), "output size " + std::to_string(got.size()) + " != reference size " +
                               std::to_string(ref.size()) + " or bound size " +
                               std::to_string(bound.size()));
  return compare_with_bounds(
      got, ref, [bound](std::size_t i) { return bound[i]; }, std::move(result));
}

// Element i passes only if got[i] == ref[i]: for outputs that are exact by
// construction (GEMM on integer inputs, gemm/gemm_exact_check.hpp).
// max_rel_err is |got - ref| / max(|ref|, 1).
inline Validation compare_exactly(std::span<const float> got, std::span<const double> ref,
                                  Validation result = {}) {
  if (got.size() != ref.size())
    return detail::size_mismatch(std::move(result), got.size(), ref.size());
  return detail::compare_elements(
      got, ref, std::move(result),
      [](std::size_t, double) {
        return detail::ElementLimits{0.0, 1.0};
      },
      [](std::size_t) { return std::string(" (exact compare)"); });
}

}  // namespace rl
