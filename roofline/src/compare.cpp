#include "rl/roofline/compare.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <numbers>
#include <regex>
#include <stdexcept>

#include <fmt/format.h>

namespace rl::roofline {

namespace {

// Upper-tail quantile of the standard normal: z with P(Z > z) = q, 0 < q < 1.
double normal_upper_quantile(double q) {
  double lo = -40, hi = 40;
  for (int i = 0; i < 200; ++i) {
    const double mid = 0.5 * (lo + hi);
    (0.5 * std::erfc(mid / std::numbers::sqrt2) > q ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

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

std::string_view verdict_name(Verdict verdict) {
  switch (verdict) {
    case Verdict::same:
      return "SAME";
    case Verdict::slow:
      return "SLOW";
    case Verdict::fast:
      return "FAST";
    case Verdict::unsure:
      return "UNSURE";
    case Verdict::inconclusive:
      return "INCONCLUSIVE";
  }
  return "UNSURE";
}

int Comparison::count(Verdict verdict) const {
  return static_cast<int>(std::count_if(kernels.begin(), kernels.end(),
                                        [&](const auto& k) { return k.verdict == verdict; }));
}

std::optional<double> Comparison::geometric_mean_ratio() const {
  if (kernels.empty()) return std::nullopt;
  double log_sum = 0;
  for (const auto& k : kernels) log_sum += std::log(k.ratio);
  return std::exp(log_sum / static_cast<double>(kernels.size()));
}

GateExit Comparison::exit_status() const {
  if (count(Verdict::slow) > 0 || !failures.empty()) return GateExit::fail;
  if (kernels.empty() || count(Verdict::unsure) > 0 || count(Verdict::inconclusive) > 0)
    return GateExit::undecided;
  return GateExit::pass;
}

std::string Comparison::exit_reason() const {
  switch (exit_status()) {
    case GateExit::fail:
      return fmt::format("{} SLOW kernel(s), {} gate failure(s)", count(Verdict::slow),
                         failures.size());
    case GateExit::undecided:
      if (kernels.empty()) return "no kernel was timed in both runs: nothing to decide";
      return fmt::format("cannot decide: {} UNSURE, {} INCONCLUSIVE kernel(s)",
                         count(Verdict::unsure), count(Verdict::inconclusive));
    case GateExit::pass:
    case GateExit::bad_input:
      break;
  }
  return "every kernel SAME or FAST";
}

namespace {

std::string label_of(const KernelResult& k) {
  return fmt::format("{} [{}]", k.name, shape_text(k.shape));
}

// Refuses a file the gate cannot trust: one entry per name and shape, and
// samples that agree with the stated repetitions and median.
void check_results_file(const Results& results, const std::string& file) {
  std::map<std::pair<std::string, std::string>, std::size_t> first_index;
  for (std::size_t i = 0; i < results.kernels.size(); ++i) {
    const KernelResult& k = results.kernels[i];
    auto [it, inserted] = first_index.try_emplace({k.name, shape_text(k.shape)}, i);
    if (!inserted)
      throw CompareInputError(
          fmt::format("{}: kernel {} appears twice (/kernels/{} and /kernels/{}); a results file "
                      "holds one entry per name and shape",
                      file, label_of(k), it->second, i));
    if (!k.time_s) continue;
    const TimeStats& t = *k.time_s;
    const std::string where = fmt::format("{}: /kernels/{}/time_s ({})", file, i, label_of(k));
    if (t.samples.empty())
      throw CompareInputError(fmt::format("{}: no samples; the gate needs them", where));
    if (static_cast<std::size_t>(t.repetitions) != t.samples.size())
      throw CompareInputError(fmt::format("{}: states {} repetitions but holds {} samples", where,
                                          t.repetitions, t.samples.size()));
    for (std::size_t s = 0; s < t.samples.size(); ++s)
      if (!(std::isfinite(t.samples[s]) && t.samples[s] > 0))
        throw CompareInputError(
            fmt::format("{}: sample {} is {}; times must be positive", where, s, t.samples[s]));
    const double recomputed = median(t.samples);
    if (!(std::abs(recomputed - t.median) <= 1e-9 * recomputed))
      throw CompareInputError(
          fmt::format("{}: states median {:.9g} s but its samples' median is {:.9g} s", where,
                      t.median, recomputed));
  }
}

// Device, backend, size preset and L2 policy must agree unless cross_device; returns
// what differs ("" when nothing).
std::string check_same_setup(const Results& base, const Results& next, const Comparison& out) {
  std::vector<std::string> differences;
  auto differ = [&](std::string_view what, const std::string& x, const std::string& y) {
    if (x != y) differences.push_back(fmt::format("{} '{}' vs '{}'", what, x, y));
  };
  differ("device", base.context.device.name, next.context.device.name);
  differ("backend", base.context.backend, next.context.backend);
  differ("size preset", base.context.size_preset, next.context.size_preset);
  // Cold samples (L2 flushed) and batch ones (--warm-l2) time different things.
  auto l2_policy = [](const Context& c) { return std::string(c.l2_flushed ? "cold" : "warm"); };
  differ("L2 policy", l2_policy(base.context), l2_policy(next.context));
  std::string text;
  for (const auto& d : differences) text += (text.empty() ? "" : ", ") + d;
  if (!text.empty() && !out.options.cross_device)
    throw CompareInputError(fmt::format(
        "{} and {} were measured differently ({}); pass --cross-device to compare them anyway",
        out.base_label, out.new_label, text));
  return text;
}

std::string opt(const std::optional<bool>& b) {
  return b ? (*b ? "on" : "off") : "unknown";
}
std::string opt(const std::optional<double>& d) {
  return d ? fmt::format("{:g}", *d) : "unknown";
}

void diff_context(const Context& a, const Context& b, std::vector<ContextDifference>& out) {
  auto add = [&](std::string field, const std::string& x, const std::string& y) {
    if (x != y) out.push_back({std::move(field), x, y});
  };
  auto mhz = [](double v) { return v > 0 ? fmt::format("{:g} MHz", v) : std::string("unknown"); };
  add("backend", a.backend, b.backend);
  add("device", a.device.name, b.device.name);
  add("device uuid", a.device.uuid, b.device.uuid);
  add("driver", a.driver_version, b.driver_version);
  add("CUDA driver API", a.cuda_driver_version, b.cuda_driver_version);
  add("CUDA runtime", a.cuda_runtime_version, b.cuda_runtime_version);
  std::map<std::string, std::pair<std::string, std::string>> libraries;
  for (const auto& [k, v] : a.library_versions) libraries[k].first = v;
  for (const auto& [k, v] : b.library_versions) libraries[k].second = v;
  for (const auto& [k, v] : libraries)
    add(k, v.first.empty() ? "absent" : v.first, v.second.empty() ? "absent" : v.second);
  add("SM clock", mhz(a.clocks.sm_mhz), mhz(b.clocks.sm_mhz));
  add("SM max clock", mhz(a.clocks.sm_max_mhz), mhz(b.clocks.sm_max_mhz));
  add("memory clock", mhz(a.clocks.memory_mhz), mhz(b.clocks.memory_mhz));
  add("ECC", opt(a.ecc_enabled), opt(b.ecc_enabled));
  add("persistence mode", opt(a.persistence_mode), opt(b.persistence_mode));
  add("power limit W", opt(a.power_limit_w), opt(b.power_limit_w));
  add("size preset", a.size_preset, b.size_preset);
  add("L2 flushed", a.l2_flushed ? "yes" : "no", b.l2_flushed ? "yes" : "no");
  add("git commit", a.git_commit, b.git_commit);
}

SideSummary summary_of(const KernelResult& k) {
  SideSummary s;
  s.median_s = k.time_s->median;
  s.repetitions = k.time_s->repetitions;
  s.noise = relative_noise(k.time_s->samples);
  if (k.sm_clock_mhz && *k.sm_clock_mhz > 0) s.sm_clock_mhz = k.sm_clock_mhz;
  s.bound = k.bound;
  return s;
}

std::vector<double> logs_of(const std::vector<double>& samples) {
  std::vector<double> out;
  out.reserve(samples.size());
  for (double s : samples) out.push_back(std::log(s));
  return out;
}

// About how many repetitions per side would bring the interval's half-width
// (for the Hodges-Lehmann shift of normal samples, about
// z sqrt(pi/3) sqrt(noise_a^2 + noise_b^2) / sqrt(n)) under `gap`.
std::string repetitions_hint(const KernelComparison& k, double gap, double z, double alpha) {
  const double spread = std::hypot(k.base.noise, k.next.noise);
  if (!(gap > 0) || !(spread > 0)) return "";
  const double n = std::numbers::pi / 3 * std::pow(z * spread / gap, 2);
  if (n > 1e5) return "; no practical number of repetitions would";
  const int needed = std::max(repetitions_to_reach(alpha), static_cast<int>(std::ceil(n)));
  if (needed <= std::min(k.base.repetitions, k.next.repetitions)) return "";
  return fmt::format("; about {} repetitions per side would", needed);
}

void judge(KernelComparison& k, const std::vector<double>& base_samples,
           const std::vector<double>& new_samples, const CompareOptions& options) {
  const double t = options.threshold_pct / 100, alpha = options.alpha;
  const double change = k.ratio - 1;
  k.test = mann_whitney(base_samples, new_samples);
  k.smallest_p = smallest_two_sided_p(k.base.repetitions, k.next.repetitions);
  if (auto shift = shift_interval(logs_of(base_samples), logs_of(new_samples), 2 * alpha))
    k.ratio_interval = Interval{std::exp(shift->low), std::exp(shift->high)};
  const std::string noise =
      fmt::format("noise {:.1f}% / {:.1f}%", k.base.noise * 100, k.next.noise * 100);

  if (k.smallest_p >= alpha) {
    k.verdict = Verdict::inconclusive;
    k.note = fmt::format(
        "{} vs {} repetitions cannot reach p < {:g} (the smallest possible p is {:.3g}); "
        "at least {} per side can",
        k.base.repetitions, k.next.repetitions, alpha, k.smallest_p, repetitions_to_reach(alpha));
  } else if (k.test.p < alpha && std::abs(change) > t) {
    k.verdict = change > 0 ? Verdict::slow : Verdict::fast;
  } else if (std::abs(change) <= t && k.ratio_interval && k.ratio_interval->low >= 1 - t &&
             k.ratio_interval->high <= 1 + t) {
    k.verdict = Verdict::same;
  } else {
    k.verdict = Verdict::unsure;
    if (std::abs(change) > t)
      k.note = fmt::format(
          "the {:+.1f}% change is not significant (p = {:.3g}, {}){}", change * 100, k.test.p,
          noise, repetitions_hint(k, std::abs(change), normal_upper_quantile(alpha / 2), alpha));
    else
      k.note = fmt::format(
          "{}: the {:.0f}% interval of the ratio reaches beyond ±{:g}%{}", noise,
          (1 - 2 * alpha) * 100, options.threshold_pct,
          repetitions_hint(k, t - std::abs(change), normal_upper_quantile(alpha), alpha));
  }

  if (k.base.sm_clock_mhz && k.next.sm_clock_mhz && k.base.bound == "compute" &&
      k.next.bound == "compute")
    k.clock_ratio = k.ratio * *k.next.sm_clock_mhz / *k.base.sm_clock_mhz;
  if (!k.clock_ratio) return;
  const double cycles_change = *k.clock_ratio - 1;
  const std::string clocks =
      fmt::format("SM clock {:g} → {:g} MHz, {:+.1f}% in cycles", *k.base.sm_clock_mhz,
                  *k.next.sm_clock_mhz, cycles_change * 100);
  std::string clock_note;
  if (k.verdict == Verdict::slow || k.verdict == Verdict::fast)
    clock_note = std::abs(cycles_change) <= t ? clocks + ": the clock explains it"
                                              : clocks + ": confirmed in cycles";
  else if (std::abs(cycles_change) > t)
    clock_note = clocks + "; the verdict rests on the times";
  if (!clock_note.empty()) k.note += (k.note.empty() ? "" : "; ") + clock_note;
}

std::vector<std::regex> compile_allowed(const CompareOptions& options) {
  std::vector<std::regex> out;
  for (const auto& pattern : options.allow_missing) {
    try {
      out.emplace_back(pattern);
    } catch (const std::regex_error& e) {
      throw CompareInputError(fmt::format("--allow-missing '{}': {}", pattern, e.what()));
    }
  }
  return out;
}

}  // namespace

Comparison compare_results(const Results& base, const Results& next, const CompareOptions& options,
                           std::string base_label, std::string new_label) {
  Comparison out;
  out.options = options;
  out.base_label = std::move(base_label);
  out.new_label = std::move(new_label);
  const std::vector<std::regex> allow = compile_allowed(options);
  auto allowed_missing = [&](const std::string& name) {
    return std::any_of(allow.begin(), allow.end(),
                       [&](const std::regex& pattern) { return std::regex_search(name, pattern); });
  };
  check_results_file(base, out.base_label);
  check_results_file(next, out.new_label);
  out.cross_device_note = check_same_setup(base, next, out);
  diff_context(base.context, next.context, out.context);

  std::map<std::pair<std::string, std::string>, const KernelResult*> new_by_key;
  for (const auto& k : next.kernels) new_by_key[{k.name, shape_text(k.shape)}] = &k;
  std::map<std::pair<std::string, std::string>, bool> matched;

  for (const auto& b : base.kernels) {
    auto key = std::make_pair(b.name, shape_text(b.shape));
    const std::string label = label_of(b);
    auto it = new_by_key.find(key);
    if (it == new_by_key.end()) {
      GateFailure missing{label, fmt::format("missing from {}", out.new_label)};
      (allowed_missing(b.name) ? out.allowed : out.failures).push_back(missing);
      continue;
    }
    matched[key] = true;
    const KernelResult& n = *it->second;
    const std::string why = n.error.empty() ? "" : ": " + n.error;
    if (n.status == "failed_validation" || (n.time_s && !n.validated)) {
      out.failures.push_back({label, fmt::format("failed validation in {}{}", out.new_label, why)});
      continue;
    }
    if (n.status == "error") {
      out.failures.push_back({label, fmt::format("errored in {}{}", out.new_label, why)});
      continue;
    }
    if (!n.time_s) {
      if (!b.time_s) {
        out.not_compared.push_back(fmt::format("{}: not timed in either run", label));
        continue;
      }
      GateFailure not_run{label, fmt::format("not run in {} ({}{})", out.new_label,
                                             n.status.empty() ? "not timed" : n.status, why)};
      (allowed_missing(b.name) ? out.allowed : out.failures).push_back(not_run);
      continue;
    }
    if (!b.time_s) {
      out.not_compared.push_back(fmt::format("{}: not timed in {} ({})", label, out.base_label,
                                             b.status.empty() ? "no time" : b.status));
      continue;
    }
    KernelComparison c;
    c.name = b.name;
    c.shape = key.second;
    c.base = summary_of(b);
    c.next = summary_of(n);
    c.ratio = c.next.median_s / c.base.median_s;
    c.change_pct = (c.ratio - 1) * 100;
    judge(c, b.time_s->samples, n.time_s->samples, options);
    out.kernels.push_back(std::move(c));
  }
  for (const auto& k : next.kernels)
    if (!matched.contains({k.name, shape_text(k.shape)})) out.only_in_new.push_back(label_of(k));
  return out;
}

std::string comparison_markdown(const Comparison& c) {
  std::string s = fmt::format("## roofline compare: {} → {}\n\n", c.base_label, c.new_label);
  s += fmt::format(
      "Threshold ±{:g}%, alpha {:g}.  Verdicts rest on the measured times: two-sided "
      "Mann-Whitney U over the repetitions (exact up to {} samples); SAME needs the {:.0f}% "
      "interval of the ratio within the threshold; noise = 1.4826 × MAD / median per side.  "
      "The clock-normalised ratio (compute-bound kernels with a sampled SM clock) is shown, "
      "never judged.\n\n",
      c.options.threshold_pct, c.options.alpha, kExactMannWhitneyMaxSamples,
      (1 - 2 * c.options.alpha) * 100);
  if (!c.cross_device_note.empty())
    s += fmt::format("**Cross-device comparison (--cross-device):** {}.\n\n", c.cross_device_note);
  s += "| kernel | shape | base median | new median | ratio | interval | noise base / new | "
       "p-value | clock-normalised | verdict | note |\n"
       "|---|---|---:|---:|---:|---:|---:|---:|---:|---|---|\n";
  for (const auto& k : c.kernels) {
    s += fmt::format(
        "| {} | {} | {:.4g} s ×{} | {:.4g} s ×{} | {:.3f} | {} | {:.1f}% / {:.1f}% | {:.3g}{} | "
        "{} | **{}** | {} |\n",
        k.name, k.shape, k.base.median_s, k.base.repetitions, k.next.median_s, k.next.repetitions,
        k.ratio,
        k.ratio_interval
            ? fmt::format("{:.3f} – {:.3f}", k.ratio_interval->low, k.ratio_interval->high)
            : "n/a",
        k.base.noise * 100, k.next.noise * 100, k.test.p, k.test.exact ? " (exact)" : "",
        k.clock_ratio ? fmt::format("{:.3f}", *k.clock_ratio) : "n/a", verdict_name(k.verdict),
        k.note);
  }
  if (c.kernels.empty()) s += "| (no kernel timed in both runs) | | | | | | | | | | |\n";
  if (auto geomean = c.geometric_mean_ratio())
    s += fmt::format("\nGeometric-mean ratio over {} kernel(s): {:.4f} ({:+.2f}%).\n",
                     c.kernels.size(), *geomean, (*geomean - 1) * 100);
  auto list = [&](std::string_view title, const std::vector<GateFailure>& items) {
    if (items.empty()) return;
    s += fmt::format("\n**{}:**\n", title);
    for (const auto& f : items) s += fmt::format("- {}: {}\n", f.kernel, f.reason);
  };
  list("Gate failures", c.failures);
  list("Allowed by --allow-missing", c.allowed);
  auto names = [&](std::string_view title, const std::vector<std::string>& items) {
    if (items.empty()) return;
    s += fmt::format("\n**{}:** ", title);
    for (std::size_t i = 0; i < items.size(); ++i) s += (i ? ", " : "") + items[i];
    s += "\n";
  };
  names("Only in " + c.new_label, c.only_in_new);
  names("Not compared", c.not_compared);
  s += "\n### Context differences\n\n";
  if (c.context.empty()) {
    s += "None.\n";
  } else {
    s += "| field | base | new |\n|---|---|---|\n";
    for (const auto& d : c.context) s += fmt::format("| {} | {} | {} |\n", d.field, d.base, d.next);
  }
  s += fmt::format(
      "\nResult: {} SAME, {} FAST, {} SLOW, {} UNSURE, {} INCONCLUSIVE; {} → exit {}.\n",
      c.count(Verdict::same), c.count(Verdict::fast), c.count(Verdict::slow),
      c.count(Verdict::unsure), c.count(Verdict::inconclusive), c.exit_reason(),
      static_cast<int>(c.exit_status()));
  return s;
}

nlohmann::json comparison_json(const Comparison& c) {
  auto finite_or_null = [](std::optional<double> v) {
    return v && std::isfinite(*v) ? nlohmann::json(*v) : nlohmann::json(nullptr);
  };
  auto side = [&](const SideSummary& s) {
    return nlohmann::json{{"median_s", s.median_s},
                          {"repetitions", s.repetitions},
                          {"noise", s.noise},
                          {"sm_clock_mhz", finite_or_null(s.sm_clock_mhz)},
                          {"bound", s.bound}};
  };
  nlohmann::json kernels = nlohmann::json::array();
  for (const auto& k : c.kernels) {
    kernels.push_back(
        {{"name", k.name},
         {"shape", k.shape},
         {"base", side(k.base)},
         {"new", side(k.next)},
         {"ratio", k.ratio},
         {"change_pct", k.change_pct},
         {"ratio_interval",
          k.ratio_interval ? nlohmann::json::array({k.ratio_interval->low, k.ratio_interval->high})
                           : nlohmann::json(nullptr)},
         {"p_value", k.test.p},
         {"p_exact", k.test.exact},
         {"smallest_p", k.smallest_p},
         {"clock_ratio", finite_or_null(k.clock_ratio)},
         {"verdict", verdict_name(k.verdict)},
         {"note", k.note}});
  }
  auto failures = [](const std::vector<GateFailure>& items) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& f : items) out.push_back({{"kernel", f.kernel}, {"reason", f.reason}});
    return out;
  };
  nlohmann::json context = nlohmann::json::array();
  for (const auto& d : c.context)
    context.push_back({{"field", d.field}, {"base", d.base}, {"new", d.next}});
  nlohmann::json counts = nlohmann::json::object();
  for (Verdict v :
       {Verdict::same, Verdict::fast, Verdict::slow, Verdict::unsure, Verdict::inconclusive})
    counts[std::string(verdict_name(v))] = c.count(v);
  return {{"base", c.base_label},
          {"new", c.new_label},
          {"threshold_pct", c.options.threshold_pct},
          {"alpha", c.options.alpha},
          {"cross_device", c.cross_device_note.empty() ? nlohmann::json(nullptr)
                                                       : nlohmann::json(c.cross_device_note)},
          {"kernels", kernels},
          {"geometric_mean_ratio", finite_or_null(c.geometric_mean_ratio())},
          {"failures", failures(c.failures)},
          {"allowed_missing", failures(c.allowed)},
          {"only_in_new", c.only_in_new},
          {"not_compared", c.not_compared},
          {"context_differences", context},
          {"verdict_counts", counts},
          {"exit_code", static_cast<int>(c.exit_status())},
          {"exit_reason", c.exit_reason()}};
}

}  // namespace rl::roofline
