// The one tolerance policy per precision and the one comparison against a
// float64 reference.  NaN or Inf in the output never passes.
#pragma once

#include "rl/registry.hpp"

#include <cmath>
#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <utility>

namespace rl {

struct Tolerance {
  double rtol;  // relative to |reference|
  double atol;  // absolute floor, for references near zero
};

// Output precision -> tolerance.  A variant may pass a tighter or looser one
// with a reason written next to it (e.g. a fast-math approximation's bound).
inline Tolerance tolerance_for(std::string_view precision) {
  if (precision == "fp64") return {1e-12, 1e-12};
  if (precision == "fp32") return {1e-5, 1e-5};
  if (precision == "tf32") return {5e-3, 5e-3};
  if (precision == "fp16") return {2e-3, 2e-3};
  if (precision == "bf16") return {1e-2, 1e-2};
  if (precision == "fp8") return {1.5e-1, 1e-1};
  return {1e-5, 1e-5};
}

namespace detail {

// The one element-wise comparison behind both policies below: element i
// passes if |got - ref| <= allowed(i); its relative error is |got - ref| /
// max(|ref|, rel_floor(i)); the first failure is described with `suffix(i)`
// appended.  A non-finite output never passes.
template <typename Allowed, typename RelFloor, typename Suffix>
Validation compare_elements(std::span<const float> got, std::span<const double> ref,
                            Validation result, Allowed allowed, RelFloor rel_floor, Suffix suffix) {
  if (result.detail.empty()) result.passed = true;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double g = got[i];
    const double r = ref[i];
    const double diff = std::fabs(g - r);
    if (!std::isfinite(g)) {
      if (result.passed || result.detail.empty())
        result.detail =
            "non-finite output at " + std::to_string(i) + " (reference " + std::to_string(r) + ")";
      result.passed = false;
      result.max_rel_err = INFINITY;
      result.max_abs_err = INFINITY;
      continue;
    }
    const double rel = diff / std::fmax(std::fabs(r), rel_floor(i));
    if (rel > result.max_rel_err) result.max_rel_err = rel;
    if (diff > result.max_abs_err) result.max_abs_err = diff;
    if (!(diff <= allowed(i, r)) && result.passed) {
      result.passed = false;
      result.detail = "element " + std::to_string(i) + ": got " + std::to_string(g) +
                      ", expected " + std::to_string(r) + suffix(i);
    }
  }
  return result;
}

}  // namespace detail

// Element i passes if |got - ref| <= atol + rtol * |ref|.  max_rel_err is
// |got - ref| / max(|ref|, atol / rtol): a relative error that does not blow
// up at zero crossings.
inline Validation compare_to_reference(std::span<const float> got, std::span<const double> ref,
                                       Tolerance tol, Validation result = {}) {
  if (got.size() != ref.size()) {
    result.passed = false;
    result.detail = "output size " + std::to_string(got.size()) + " != reference size " +
                    std::to_string(ref.size());
    return result;
  }
  const double floor = tol.atol / tol.rtol;
  return detail::compare_elements(
      got, ref, std::move(result),
      [tol](std::size_t, double r) { return tol.atol + tol.rtol * std::fabs(r); },
      [floor](std::size_t) { return floor; }, [](std::size_t) { return std::string(); });
}

// Element i passes if |got - ref| <= bound[i], an absolute error bound the
// caller derived for that element (GEMM: gamma * sum_k |a_ik| |b_kj|, see
// gemm/gemm_common.hpp).  For operations whose error scales with the size of
// the terms rather than of the result, where a relative tolerance would be
// either vacuous or fail on cancellation.  max_rel_err is |got - ref| /
// max(|ref|, bound[i]); max_abs_err is the largest |got - ref|.
inline Validation compare_with_bounds(std::span<const float> got, std::span<const double> ref,
                                      std::span<const double> bound, Validation result = {}) {
  if (got.size() != ref.size() || bound.size() != ref.size()) {
    result.passed = false;
    result.detail = "output size " + std::to_string(got.size()) + " != reference size " +
                    std::to_string(ref.size()) + " or bound size " + std::to_string(bound.size());
    return result;
  }
  return detail::compare_elements(
      got, ref, std::move(result), [bound](std::size_t i, double) { return bound[i]; },
      [bound](std::size_t i) { return bound[i]; },
      [bound](std::size_t i) { return " (bound " + std::to_string(bound[i]) + ")"; });
}

}  // namespace rl
