// Attention validation rows and the float64 reference: O on the checked query
// rows of every head, with the magnitudes attention_error_model.hpp's bound
// needs.
#pragma once

#include "attention/attention_problem.hpp"
#include "rl/packed128.hpp"  // to_f32

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

namespace rl::attention {

// ---------------------------------------------------------------- validation
//
// The float64 reference is computed on the query rows listed by
// checked_rows(): every row while N <= full_check_max_n, else 64 rows per
// head spread evenly from the first to the last (both always included).
inline constexpr std::int64_t kFullCheckMaxN = 256;
inline constexpr std::int64_t kSampledRowsPerHead = 64;

inline std::vector<std::int64_t> checked_rows(std::int64_t N,
                                              std::int64_t full_check_max_n = kFullCheckMaxN) {
  std::vector<std::int64_t> rows;
  if (N <= full_check_max_n || N <= kSampledRowsPerHead) {
    for (std::int64_t i = 0; i < N; ++i) rows.push_back(i);
    return rows;
  }
  for (std::int64_t k = 0; k < kSampledRowsPerHead; ++k)
    rows.push_back((k * (N - 1) + (kSampledRowsPerHead - 1) / 2) / (kSampledRowsPerHead - 1));
  rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
  return rows;
}

struct Reference {
  std::vector<std::int64_t> rows;  // checked query rows of every head
  std::vector<double> O;           // [B·H][rows.size()][d]
  double max_abs_logit_terms = 0;  // max over rows and visible keys of scale·Σ_k |q_ik·k_jk|
  double max_weighted_abs_v = 0;   // max over rows and columns of Σ_j P_ij·|V_jc|
  double max_abs_v = 0;            // max |V_jc|
};

// Float64 reference on exactly the values (inputs as stored in T, and the
// fp32 scale) the kernels read, with the magnitudes the error bound needs.
template <typename T>
Reference reference(const Dims& p, float scale, std::span<const T> q, std::span<const T> k,
                    std::span<const T> v, std::vector<std::int64_t> rows) {
  const auto d = static_cast<std::size_t>(p.d);
  const auto N = static_cast<std::size_t>(p.N);
  const double sc = scale;
  Reference ref;
  ref.rows = std::move(rows);
  ref.O.assign(static_cast<std::size_t>(p.heads()) * ref.rows.size() * d, 0.0);
  for (const T x : v) ref.max_abs_v = std::max(ref.max_abs_v, std::fabs(double{to_f32(x)}));
  std::vector<double> logits(N), weighted_abs_v(d), qi(d);
  for (std::size_t head = 0; head < static_cast<std::size_t>(p.heads()); ++head) {
    const T* qh = q.data() + head * N * d;
    const T* kh = k.data() + head * N * d;
    const T* vh = v.data() + head * N * d;
    for (std::size_t r = 0; r < ref.rows.size(); ++r) {
      const auto i = static_cast<std::size_t>(ref.rows[r]);
      for (std::size_t c = 0; c < d; ++c) qi[c] = to_f32(qh[i * d + c]);
      const std::size_t visible = p.causal ? i + 1 : N;
      double row_max = -INFINITY;
      for (std::size_t j = 0; j < visible; ++j) {
        double dot = 0, abs_terms = 0;
        for (std::size_t c = 0; c < d; ++c) {
          const double term = qi[c] * to_f32(kh[j * d + c]);
          dot += term;
          abs_terms += std::fabs(term);
        }
        logits[j] = sc * dot;
        row_max = std::max(row_max, logits[j]);
        ref.max_abs_logit_terms = std::max(ref.max_abs_logit_terms, std::fabs(sc) * abs_terms);
      }
      double sum = 0;
      for (std::size_t j = 0; j < visible; ++j) sum += (logits[j] = std::exp(logits[j] - row_max));
      double* out = ref.O.data() + (head * ref.rows.size() + r) * d;
      std::fill(weighted_abs_v.begin(), weighted_abs_v.end(), 0.0);
      for (std::size_t j = 0; j < visible; ++j) {
        const double w = logits[j] / sum;
        for (std::size_t c = 0; c < d; ++c) {
          const double vjc = to_f32(vh[j * d + c]);
          out[c] += w * vjc;
          weighted_abs_v[c] += w * std::fabs(vjc);
        }
      }
      for (const double a : weighted_abs_v)
        ref.max_weighted_abs_v = std::max(ref.max_weighted_abs_v, a);
    }
  }
  return ref;
}

}  // namespace rl::attention
