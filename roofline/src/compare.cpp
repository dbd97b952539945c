#include "rl/roofline/compare.hpp"

#include "compare_statistics.hpp"

#include "rl/roofline/counter_agreement.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <regex>
#include <stdexcept>

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

using stats::normal_upper_quantile;

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
  differ("backend", std::string(to_string(base.context.backend)),
         std::string(to_string(next.context.backend)));
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
  add("backend", std::string(to_string(a.backend)), std::string(to_string(b.backend)));
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

  if (k.base.sm_clock_mhz && k.next.sm_clock_mhz && k.base.bound == Bound::compute &&
      k.next.bound == Bound::compute)
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
    if (n.status == Status::failed_validation || (n.time_s && !n.validated)) {
      out.failures.push_back({label, fmt::format("failed validation in {}{}", out.new_label, why)});
      continue;
    }
    if (n.status == Status::error) {
      out.failures.push_back({label, fmt::format("errored in {}{}", out.new_label, why)});
      continue;
    }
    if (!n.time_s) {
      if (!b.time_s) {
        out.not_compared.push_back(fmt::format("{}: not timed in either run", label));
        continue;
      }
      GateFailure not_run{
          label, fmt::format("not run in {} ({}{})", out.new_label,
                             n.status == Status::none ? "not timed" : to_string(n.status), why)};
      (allowed_missing(b.name) ? out.allowed : out.failures).push_back(not_run);
      continue;
    }
    if (!b.time_s) {
      out.not_compared.push_back(
          fmt::format("{}: not timed in {} ({})", label, out.base_label,
                      b.status == Status::none ? "no time" : to_string(b.status)));
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
  for (const auto& [file, label] : {std::pair{&base, &out.base_label}, {&next, &out.new_label}})
    for (const auto& k : file->kernels)
      if (k.counters)
        if (const CounterVerdict v = counter_verdict(*k.counters); v.disagrees)
          out.counter_flags.push_back({label_of(k), *label, v.text});
  return out;
}

}  // namespace rl::roofline
