// GELU validation: the float64 reference of each form and the per-element
// error bound every rung must meet.
#pragma once

#include "gelu/gelu_forms.hpp"
#include "rl/validate.hpp"

#include <cmath>
#include <numbers>
#include <string_view>

namespace rl::gelu {

inline double reference(Form form, double x) {
  if (form == Form::tanh) {
    const double inner = std::sqrt(2.0 / std::numbers::pi) * (x + 0.044715 * x * x * x);
    return 0.5 * x * (1.0 + std::tanh(inner));
  }
  return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
}

// Error model (rl::tolerance_for's policy, with GELU's operands).  y =
// 0.5 x (1 + t), t = tanh(...) or erf(...), in fp32 then rounded to T.  The
// math is accurate to M = tolerance_for(T).atol relative on each factor, but
// on the negative side 1 + t cancels: t's absolute error (at most M, |t| <= 1)
// reaches y as 0.5 |x| M, not as a relative error of y.  So element i may be
// off by
//   (u_T + M) |y_i|  +  (M + r) 0.5 |x_i|,
// with r = 0 for tanhf and erff, and r = 2^-10.987 for the hardware
// tanh.approx.f32 (its maximum relative error, PTX ISA "tanh"; see
// rl::ptx::tanh_approx): t off by r |t| <= r moves y by at most 0.5 |x| r.
// Both are far below the 11% by which the erf form differs from the tanh
// form at x = -3 (and more further out), so a wrong form fails in either
// storage type (the tests show it).
inline constexpr double kTanhApproxMaxRelError = 4.927009930882233e-4;  // 2^-10.987

inline double error_bound(std::string_view precision, double x, double y_reference,
                          double tanh_error) {
  const Tolerance tol = tolerance_for(precision);
  return tol.rtol * std::fabs(y_reference) + (tol.atol + tanh_error) * 0.5 * std::fabs(x);
}

}  // namespace rl::gelu
