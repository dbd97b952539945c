// LayerNorm validation: the float64 reference (y, mean, rstd) on the
// storage-rounded inputs, and the per-element error bounds every rung must
// meet, from the row's condition number.
#pragma once

#include "layernorm/layernorm_launch.hpp"
#include "rl/validate.hpp"

#include <cmath>
#include <cstddef>
#include <span>
#include <string_view>
#include <vector>

namespace rl::layernorm {

struct Reference {
  std::vector<double> y, mean, rstd;
  std::vector<double> condition;  // per row: (|mean| + std) * rstd
};

// float64 reference on the exact (storage-rounded) inputs the kernel reads.
inline Reference reference(std::span<const double> x, std::span<const double> weight,
                           std::span<const double> bias, int rows, int C) {
  Reference ref{.y = std::vector<double>(x.size()),
                .mean = std::vector<double>(static_cast<std::size_t>(rows)),
                .rstd = std::vector<double>(static_cast<std::size_t>(rows)),
                .condition = std::vector<double>(static_cast<std::size_t>(rows))};
  for (int r = 0; r < rows; ++r) {
    const double* xr = x.data() + static_cast<std::size_t>(r) * static_cast<std::size_t>(C);
    double sum = 0;
    for (int c = 0; c < C; ++c) sum += xr[c];
    const double mean = sum / C;
    double var = 0;
    for (int c = 0; c < C; ++c) var += (xr[c] - mean) * (xr[c] - mean);
    var /= C;
    const double rstd = 1.0 / std::sqrt(var + static_cast<double>(kEps));
    for (int c = 0; c < C; ++c)
      ref.y[static_cast<std::size_t>(r) * static_cast<std::size_t>(C) +
            static_cast<std::size_t>(c)] =
          (xr[c] - mean) * rstd * weight[static_cast<std::size_t>(c)] +
          bias[static_cast<std::size_t>(c)];
    ref.mean[static_cast<std::size_t>(r)] = mean;
    ref.rstd[static_cast<std::size_t>(r)] = rstd;
    ref.condition[static_cast<std::size_t>(r)] = (std::fabs(mean) + std::sqrt(var)) * rstd;
  }
  return ref;
}

// Error model (rl::tolerance_for's policy with LayerNorm's sums).  All
// rungs compute in fp32 with the centred two-pass variance.
//  - A C-term fp32 sum is off by at most S_C = 6 sqrt(C) u32 relative to the
//    sum of the magnitudes (probabilistic bound, Higham & Mary 2019, as the
//    attention family uses), so the mean is off by S_C (|mean| + std).
//  - That error reaches y through x - mean amplified by rstd: S_C kappa_r,
//    kappa_r = (|mean_r| + std_r) rstd_r the row's condition number (1e4 for
//    rows of mean 1e4 and std 1: a backward-stable kernel can do no better).
//  - The variance, a sum of squares of the values centred on the computed
//    mean, is the true variance plus the mean's error squared, (S_C kappa_r)^2
//    in units of var, and its own sum and rsqrt are off by S_C + M relative
//    (M = rl::kMathRoundoffs units of u32).  So rstd is off by
//    (S_C + M + (S_C kappa_r)^2 / 2) rstd, and y = xhat w + b by
//    ((S_C + M) kappa_r + (S_C + M + (S_C kappa_r)^2 / 2) |xhat|) |w|
//    before the rounding to T, which tolerance_for adds as (u_T + M) |y|.
// The one-pass E[x^2] - E[x]^2 is off by about S_C kappa^2 and fails by
// orders of magnitude at large offsets; the tests show it, and that dividing
// by C - 1 fails too.
inline double sum_error_factor(int C) {
  return 6.0 * std::sqrt(static_cast<double>(C)) * math_roundoff("fp32");
}

struct Bounds {
  std::vector<double> y, mean, rstd;
};

inline Bounds error_bounds(const Reference& ref, std::span<const double> x,
                           std::span<const double> weight, int rows, int C,
                           std::string_view precision) {
  const double sums = sum_error_factor(C);
  const Tolerance math = tolerance_for("fp32");
  const Tolerance storage = tolerance_for(precision);
  Bounds b{.y = std::vector<double>(ref.y.size()),
           .mean = std::vector<double>(ref.mean.size()),
           .rstd = std::vector<double>(ref.rstd.size())};
  for (std::size_t r = 0; r < static_cast<std::size_t>(rows); ++r) {
    const double rstd = ref.rstd[r];
    const double kappa = ref.condition[r];
    const double centring = sums * kappa;  // the mean's error, in units of the row's spread
    const double rstd_error = sums + math.rtol + 0.5 * centring * centring;
    b.mean[r] = centring / rstd + math.rtol * std::fabs(ref.mean[r]);
    b.rstd[r] = rstd_error * rstd;
    for (std::size_t c = 0; c < static_cast<std::size_t>(C); ++c) {
      const std::size_t i = r * static_cast<std::size_t>(C) + c;
      const double xhat = (x[i] - ref.mean[r]) * rstd;
      b.y[i] = ((sums + math.atol) * kappa + rstd_error * std::fabs(xhat)) * std::fabs(weight[c]) +
               storage.rtol * std::fabs(ref.y[i]);
    }
  }
  return b;
}

}  // namespace rl::layernorm
