// The statistics behind the gate: the Mann-Whitney U test, the shift
// interval, the median and the robust relative noise.
#include "rl/roofline/compare.hpp"

#include "compare_statistics.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <stdexcept>

namespace rl::roofline {

double stats::normal_upper_quantile(double q) {
  double lo = -40, hi = 40;
  for (int i = 0; i < 200; ++i) {
    const double mid = 0.5 * (lo + hi);
    (0.5 * std::erfc(mid / std::numbers::sqrt2) > q ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

namespace {

using stats::normal_upper_quantile;

// How many of the C(n, k) ways of choosing k of the n doubled ranks give each
// doubled rank sum (index = sum).  Doubled ranks keep average ranks of ties
// integral, so the distribution is exact with ties.
std::vector<double> doubled_rank_sum_counts(std::span<const int> doubled_ranks, int k) {
  int total = 0;
  for (int r : doubled_ranks) total += r;
  // ways[j][s]: subsets of size j of the ranks seen so far with sum s.
  std::vector<std::vector<double>> ways(static_cast<std::size_t>(k) + 1,
                                        std::vector<double>(static_cast<std::size_t>(total) + 1));
  ways[0][0] = 1;
  int seen_sum = 0, seen = 0;
  for (int r : doubled_ranks) {
    ++seen;
    seen_sum += r;
    for (int j = std::min(seen, k); j >= 1; --j)
      for (int s = seen_sum; s >= r; --s) ways[j][s] += ways[j - 1][s - r];
  }
  return std::move(ways[static_cast<std::size_t>(k)]);
}

// Doubled average ranks of the pooled samples, and the doubled rank sum of a.
struct PooledRanks {
  std::vector<int> doubled;  // one per pooled sample
  long long a_doubled_sum = 0;
  double tie_term = 0;  // sum of t^3 - t over tie groups
};

PooledRanks pooled_ranks(std::span<const double> a, std::span<const double> b) {
  struct Tagged {
    double value;
    bool from_a;
  };
  std::vector<Tagged> all;
  all.reserve(a.size() + b.size());
  for (double v : a) all.push_back({v, true});
  for (double v : b) all.push_back({v, false});
  std::sort(all.begin(), all.end(), [](const auto& x, const auto& y) { return x.value < y.value; });
  PooledRanks out;
  for (std::size_t i = 0; i < all.size();) {
    std::size_t j = i;
    while (j < all.size() && all[j].value == all[i].value) ++j;
    // Positions i+1..j share the average rank (i+1+j)/2: doubled, i+1+j.
    const int doubled = static_cast<int>(i + 1 + j);
    for (std::size_t k = i; k < j; ++k) {
      out.doubled.push_back(doubled);
      if (all[k].from_a) out.a_doubled_sum += doubled;
    }
    const double t = static_cast<double>(j - i);
    out.tie_term += t * t * t - t;
    i = j;
  }
  return out;
}

double exact_p(const PooledRanks& ranks, int na) {
  const long long n = static_cast<long long>(ranks.doubled.size());
  const long long mean = na * (n + 1);  // E[doubled rank sum of a]
  const long long observed = std::llabs(ranks.a_doubled_sum - mean);
  const std::vector<double> counts = doubled_rank_sum_counts(ranks.doubled, na);
  double extreme = 0, total = 0;
  for (std::size_t s = 0; s < counts.size(); ++s) {
    total += counts[s];
    if (std::llabs(static_cast<long long>(s) - mean) >= observed) extreme += counts[s];
  }
  return std::clamp(extreme / total, 0.0, 1.0);
}

// scipy.stats.mannwhitneyu(method="asymptotic"): tie and continuity corrected.
double asymptotic_p(const PooledRanks& ranks, std::size_t na, std::size_t nb) {
  const double n1 = static_cast<double>(na), n2 = static_cast<double>(nb), n = n1 + n2;
  const double u1 = static_cast<double>(ranks.a_doubled_sum) / 2 - n1 * (n1 + 1) / 2;
  const double u = std::max(u1, n1 * n2 - u1);
  const double sigma = std::sqrt(n1 * n2 / 12 * ((n + 1) - ranks.tie_term / (n * (n - 1))));
  if (!(sigma > 0)) return 1.0;  // every sample equal: no evidence of a difference
  const double z = (u - n1 * n2 / 2 - 0.5) / sigma;
  return std::clamp(std::erfc(z / std::numbers::sqrt2), 0.0, 1.0);
}

bool use_exact(std::size_t na, std::size_t nb, MannWhitneyMethod method) {
  if (method == MannWhitneyMethod::automatic)
    return na + nb <= static_cast<std::size_t>(kExactMannWhitneyMaxSamples);
  return method == MannWhitneyMethod::exact;
}

// The k-th smallest (1-based) of the differences b_j - a_i, both sorted: a
// bisection on the value, counting differences <= d with two pointers, so the
// na x nb differences are never stored.
double kth_difference(std::span<const double> a, std::span<const double> b, std::size_t k) {
  auto at_most = [&](double d) {
    std::size_t count = 0, i = 0;
    for (double bj : b) {
      while (i < a.size() && bj - a[i] > d) ++i;  // a ascending: bj - a[i] descending
      count += a.size() - i;
    }
    return count;
  };
  double lo = b.front() - a.back(), hi = b.back() - a.front();
  if (at_most(lo) >= k) return lo;
  for (int step = 0; step < 400; ++step) {
    const double mid = lo + (hi - lo) / 2;
    if (!(mid > lo && mid < hi)) break;
    (at_most(mid) >= k ? hi : lo) = mid;
  }
  return hi;
}

}  // namespace

MannWhitney mann_whitney(std::span<const double> a, std::span<const double> b,
                         MannWhitneyMethod method) {
  if (a.empty() || b.empty()) throw std::invalid_argument("mann_whitney: an empty sample");
  const PooledRanks ranks = pooled_ranks(a, b);
  if (use_exact(a.size(), b.size(), method)) {
    // The rank-sum statistic of the smaller side is as extreme as the other's.
    const bool a_smaller = a.size() <= b.size();
    PooledRanks by_smaller = ranks;
    if (!a_smaller) {
      long long total = 0;
      for (int r : ranks.doubled) total += r;
      by_smaller.a_doubled_sum = total - ranks.a_doubled_sum;
    }
    return {exact_p(by_smaller, static_cast<int>(std::min(a.size(), b.size()))), true};
  }
  return {asymptotic_p(ranks, a.size(), b.size()), false};
}

double smallest_two_sided_p(int na, int nb) {
  if (na < 1 || nb < 1) return 1.0;
  double ways = 1;  // C(na + nb, na)
  for (int i = 1; i <= na; ++i) ways = ways * (nb + i) / i;
  return std::min(1.0, 2.0 / ways);
}

int repetitions_to_reach(double alpha) {
  int n = 1;
  while (smallest_two_sided_p(n, n) >= alpha && n < 1000) ++n;
  return n;
}

std::optional<Interval> shift_interval(std::span<const double> a, std::span<const double> b,
                                       double gamma) {
  if (a.empty() || b.empty()) return std::nullopt;
  const std::size_t na = a.size(), nb = b.size(), m = na * nb;
  // c: the largest count with P(U <= c) <= gamma / 2 under no shift.
  long long c = -1;
  if (use_exact(na, nb, MannWhitneyMethod::automatic)) {
    const std::size_t small = std::min(na, nb);
    std::vector<int> doubled(na + nb);
    for (std::size_t i = 0; i < doubled.size(); ++i) doubled[i] = static_cast<int>(2 * (i + 1));
    const std::vector<double> counts = doubled_rank_sum_counts(doubled, static_cast<int>(small));
    double total = 0;
    for (double w : counts) total += w;
    // U = S - small (small + 1) / 2 with S = doubled sum / 2.
    const std::size_t offset = small * (small + 1);  // doubled sum at U = 0
    double below = 0;
    for (std::size_t u = 0; u <= m; ++u) {
      below += counts[offset + 2 * u];
      if (below / total > gamma / 2) break;
      c = static_cast<long long>(u);
    }
  } else {
    const double mm = static_cast<double>(m), n = static_cast<double>(na + nb);
    const double sigma = std::sqrt(mm * (n + 1) / 12);
    c = static_cast<long long>(std::floor(mm / 2 - 0.5 - normal_upper_quantile(gamma / 2) * sigma));
  }
  if (c < 0) return std::nullopt;
  std::vector<double> sa(a.begin(), a.end()), sb(b.begin(), b.end());
  std::sort(sa.begin(), sa.end());
  std::sort(sb.begin(), sb.end());
  const auto cu = static_cast<std::size_t>(c);
  return Interval{kth_difference(sa, sb, cu + 1), kth_difference(sa, sb, m - cu)};
}

double median(std::span<const double> values) {
  std::vector<double> sorted(values.begin(), values.end());
  std::sort(sorted.begin(), sorted.end());
  const std::size_t n = sorted.size();
  if (n == 0) return 0;
  return n % 2 == 1 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
}

double relative_noise(std::span<const double> samples) {
  std::vector<double> values(samples.begin(), samples.end());
  const double center = median(values);
  if (center == 0) return 0;
  for (double& v : values) v = std::abs(v - center);
  return 1.4826 * median(values) / std::abs(center);
}

}  // namespace rl::roofline
