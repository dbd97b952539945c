#include "rl/roofline/compare.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

#include <fmt/format.h>

namespace rl::roofline {

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
  }
  return "UNSURE";
}

int Comparison::slow_count() const {
  return static_cast<int>(std::count_if(kernels.begin(), kernels.end(),
                                        [](const auto& k) { return k.verdict == Verdict::slow; }));
}

std::optional<double> mann_whitney_p(std::span<const double> a, std::span<const double> b) {
  if (a.size() < 2 || b.size() < 2) return std::nullopt;
  struct Tagged {
    double value;
    bool from_a;
  };
  std::vector<Tagged> all;
  for (double v : a) all.push_back({v, true});
  for (double v : b) all.push_back({v, false});
  std::sort(all.begin(), all.end(), [](const auto& x, const auto& y) { return x.value < y.value; });

  const double n1 = static_cast<double>(a.size()), n2 = static_cast<double>(b.size());
  const double n = n1 + n2;
  double rank_sum_a = 0, tie_term = 0;
  for (std::size_t i = 0; i < all.size();) {
    std::size_t j = i;
    while (j < all.size() && all[j].value == all[i].value) ++j;
    double t = static_cast<double>(j - i);
    double average_rank = (static_cast<double>(i + 1) + static_cast<double>(j)) / 2;
    for (std::size_t k = i; k < j; ++k)
      if (all[k].from_a) rank_sum_a += average_rank;
    tie_term += t * t * t - t;
    i = j;
  }
  double u1 = rank_sum_a - n1 * (n1 + 1) / 2;
  double u = std::max(u1, n1 * n2 - u1);
  double mu = n1 * n2 / 2;
  double sigma = std::sqrt(n1 * n2 / 12 * ((n + 1) - tie_term / (n * (n - 1))));
  if (!(sigma > 0)) return 1.0;  // every sample equal: no evidence of a difference
  double z = (u - mu - 0.5) / sigma;
  return std::clamp(std::erfc(z / std::sqrt(2.0)), 0.0, 1.0);
}

namespace {

std::optional<double> clock_of(const KernelResult& k, const Context& c) {
  if (k.sm_clock_mhz && *k.sm_clock_mhz > 0) return k.sm_clock_mhz;
  if (c.clocks.sm_mhz > 0) return c.clocks.sm_mhz;
  return std::nullopt;
}

std::vector<double> samples_of(const TimeStats& t, double scale) {
  std::vector<double> s = t.samples.empty() ? std::vector<double>{t.median} : t.samples;
  for (auto& v : s) v *= scale;
  return s;
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

}  // namespace

Comparison compare_results(const Results& base, const Results& next, const CompareOptions& options,
                           std::string base_label, std::string new_label) {
  Comparison out;
  out.options = options;
  out.base_label = std::move(base_label);
  out.new_label = std::move(new_label);
  diff_context(base.context, next.context, out.context);

  std::map<std::pair<std::string, std::string>, const KernelResult*> new_by_key;
  for (const auto& k : next.kernels) new_by_key[{k.name, shape_text(k.shape)}] = &k;
  std::map<std::pair<std::string, std::string>, bool> matched;

  for (const auto& b : base.kernels) {
    auto key = std::make_pair(b.name, shape_text(b.shape));
    auto it = new_by_key.find(key);
    std::string label = fmt::format("{} [{}]", b.name, key.second);
    if (it == new_by_key.end()) {
      out.only_in_base.push_back(label);
      continue;
    }
    matched[key] = true;
    const KernelResult& n = *it->second;
    if (!b.time_s || !n.time_s || !(b.time_s->median > 0) || !(n.time_s->median > 0)) {
      out.not_comparable.push_back(
          fmt::format("{}: not timed in {}", label,
                      !b.time_s || !(b.time_s->median > 0) ? out.base_label : out.new_label));
      continue;
    }
    KernelComparison c;
    c.name = b.name;
    c.shape = key.second;
    c.base_median_s = b.time_s->median;
    c.new_median_s = n.time_s->median;
    c.ratio = c.new_median_s / c.base_median_s;
    c.base_clock_mhz = clock_of(b, base.context);
    c.new_clock_mhz = clock_of(n, next.context);
    double base_scale = 1, new_scale = 1;
    if (c.base_clock_mhz && c.new_clock_mhz) {
      base_scale = *c.base_clock_mhz;
      new_scale = *c.new_clock_mhz;
      c.clock_ratio = c.ratio * new_scale / base_scale;
    }
    auto base_samples = samples_of(*b.time_s, base_scale);
    auto new_samples = samples_of(*n.time_s, new_scale);
    c.p_value = mann_whitney_p(base_samples, new_samples);
    c.change_pct = (c.clock_ratio.value_or(c.ratio) - 1) * 100;
    if (std::abs(c.change_pct) <= options.threshold_pct)
      c.verdict = Verdict::same;
    else if (c.p_value && *c.p_value < options.alpha)
      c.verdict = c.change_pct > 0 ? Verdict::slow : Verdict::fast;
    else
      c.verdict = Verdict::unsure;
    out.kernels.push_back(std::move(c));
  }
  for (const auto& k : next.kernels)
    if (!matched.contains({k.name, shape_text(k.shape)}))
      out.only_in_new.push_back(fmt::format("{} [{}]", k.name, shape_text(k.shape)));
  return out;
}

std::string comparison_markdown(const Comparison& c) {
  std::string s = fmt::format("## roofline compare: {} → {}\n\n", c.base_label, c.new_label);
  s += fmt::format(
      "Threshold {:g}%, alpha {:g} (two-sided Mann-Whitney U over repetitions; "
      "clock-normalised = time × SM clock when both runs recorded it).\n\n",
      c.options.threshold_pct, c.options.alpha);
  s += "| kernel | shape | base median | new median | ratio | clock-normalised | change | "
       "p-value | verdict |\n|---|---|---:|---:|---:|---:|---:|---:|---|\n";
  for (const auto& k : c.kernels) {
    s += fmt::format("| {} | {} | {:.4g} s | {:.4g} s | {:.3f} | {} | {:+.1f}% | {} | **{}** |\n",
                     k.name, k.shape, k.base_median_s, k.new_median_s, k.ratio,
                     k.clock_ratio ? fmt::format("{:.3f}", *k.clock_ratio) : "n/a", k.change_pct,
                     k.p_value ? fmt::format("{:.3g}", *k.p_value) : "n/a (<2 samples)",
                     verdict_name(k.verdict));
  }
  if (c.kernels.empty()) s += "| (no kernel in both runs) | | | | | | | | |\n";
  auto list = [&](std::string_view title, const std::vector<std::string>& items) {
    if (items.empty()) return;
    s += fmt::format("\n**{}:** ", title);
    for (std::size_t i = 0; i < items.size(); ++i) s += (i ? ", " : "") + items[i];
    s += "\n";
  };
  list("Only in " + c.base_label, c.only_in_base);
  list("Only in " + c.new_label, c.only_in_new);
  list("Not comparable", c.not_comparable);
  s += "\n### Context differences\n\n";
  if (c.context.empty()) {
    s += "None.\n";
  } else {
    s += "| field | base | new |\n|---|---|---|\n";
    for (const auto& d : c.context) s += fmt::format("| {} | {} | {} |\n", d.field, d.base, d.next);
  }
  s += fmt::format("\nResult: {} SLOW kernel(s) → exit {}.\n", c.slow_count(), c.exit_code());
  return s;
}

nlohmann::json comparison_json(const Comparison& c) {
  auto finite_or_null = [](std::optional<double> v) {
    return v && std::isfinite(*v) ? nlohmann::json(*v) : nlohmann::json(nullptr);
  };
  nlohmann::json kernels = nlohmann::json::array();
  for (const auto& k : c.kernels) {
    kernels.push_back({{"name", k.name},
                       {"shape", k.shape},
                       {"base_median_s", k.base_median_s},
                       {"new_median_s", k.new_median_s},
                       {"ratio", k.ratio},
                       {"clock_ratio", finite_or_null(k.clock_ratio)},
                       {"base_sm_clock_mhz", finite_or_null(k.base_clock_mhz)},
                       {"new_sm_clock_mhz", finite_or_null(k.new_clock_mhz)},
                       {"change_pct", k.change_pct},
                       {"p_value", finite_or_null(k.p_value)},
                       {"verdict", verdict_name(k.verdict)}});
  }
  nlohmann::json context = nlohmann::json::array();
  for (const auto& d : c.context)
    context.push_back({{"field", d.field}, {"base", d.base}, {"new", d.next}});
  return {{"base", c.base_label},
          {"new", c.new_label},
          {"threshold_pct", c.options.threshold_pct},
          {"alpha", c.options.alpha},
          {"kernels", kernels},
          {"context_differences", context},
          {"only_in_base", c.only_in_base},
          {"only_in_new", c.only_in_new},
          {"not_comparable", c.not_comparable},
          {"slow_count", c.slow_count()},
          {"exit_code", c.exit_code()}};
}

}  // namespace rl::roofline
