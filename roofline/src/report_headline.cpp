#include "report_headline.hpp"

#include "rl/roofline/counter_agreement.hpp"
#include "rl/roofline/model.hpp"
#include "rl/roofline/text.hpp"

#include <algorithm>
#include <utility>

#include <fmt/format.h>

namespace rl::roofline::report_detail {

Claim claim_for(const Ceiling& c, const Results& r, const Sku* sku, bool sku_chosen) {
  Claim claim{c.datasheet, c.derived_peak};
  if (sku_chosen) claim = {};  // the chosen row's figures only
  if (!sku) return claim;
  if (c.kind == "memory") {
    if (!claim.datasheet && c.name.starts_with("hbm.") && sku->memory_bytes_per_s > 0)
      claim.datasheet = sku->memory_bytes_per_s;
    return claim;
  }
  auto unit = parse_compute_unit(c.name);
  if (!unit) return claim;
  if (!claim.datasheet) claim.datasheet = sku->datasheet[*unit];
  if (!claim.derived) {
    double clock = c.observed_sm_mhz.value_or(r.context.clocks.sm_max_mhz);
    if (clock > 0) claim.derived = derived_peak_for_device(r.context.device, sku, *unit, clock);
  }
  return claim;
}

namespace {

void add_distinct(std::vector<std::string>& list, std::string item) {
  if (std::find(list.begin(), list.end(), item) == list.end()) list.push_back(std::move(item));
}

void count_counters(const KernelResult& k, Headline& h) {
  if (!k.counters) return;
  ++h.counted;
  const KernelCounters& c = *k.counters;
  add_distinct(h.counter_sources, c.source == CounterSource::emulator ? "exact emulator counts"
                                  : c.chip.empty()                    ? "CUPTI"
                                                                      : "CUPTI on " + c.chip);
  const CounterVerdict verdict = counter_verdict(c);
  if (!c.unavailable.empty()) {
    ++h.counters_unavailable;
    add_distinct(h.counters_unavailable_why, c.unavailable);
  } else if (verdict.disagrees) {
    ++h.counters_differ;
  } else if (!c.comparisons.empty()) {
    ++h.counters_agree;
  }
}

CeilingVerdict ceiling_verdict(const Ceiling& c, const Claim& claim) {
  CeilingVerdict v{c.name, si(c.value) + c.unit, "", false, {}};
  std::optional<double> pct;
  if (claim.datasheet && *claim.datasheet > 0) {
    pct = 100 * c.value / *claim.datasheet;
    v.against.push_back(
        fmt::format("{:.0f}% of the datasheet's {}", *pct, si(*claim.datasheet) + c.unit));
  }
  if (claim.derived && *claim.derived > 0) {
    double of_derived = 100 * c.value / *claim.derived;
    if (!pct) pct = of_derived;
    v.against.push_back(
        fmt::format("{:.0f}% of the derived peak {}", of_derived, si(*claim.derived) + c.unit));
  }
  if (!pct) return v;
  // Thresholds a reader can check: a well-run ceiling loop reaches about 90%.
  v.word = *pct > 105   ? "above the claim: check the method"
           : *pct >= 90 ? "meets the claim"
           : *pct >= 70 ? "short of the claim"
                        : "far short of the claim";
  v.bad = *pct > 105 || *pct < 70;
  return v;
}

}  // namespace

// A kernel's relative noise: the harness's robust figure when the file has
// it, else the spread of the repetitions (stddev / median).
std::optional<double> kernel_noise(const KernelResult& k, bool& robust) {
  if (!k.time_s || !(k.time_s->median > 0)) return std::nullopt;
  if (k.time_s->noise) {
    robust = true;
    return *k.time_s->noise;
  }
  if (k.time_s->repetitions < 2) return std::nullopt;
  return k.time_s->stddev / k.time_s->median;
}

Headline headline_facts(const Results& r, const ReportOptions& options) {
  const auto& c = r.context;
  Headline h;
  h.device = c.device.name.empty() ? "unknown device" : c.device.name;
  h.compute_capability = c.device.compute_capability.empty() ? "n/a" : c.device.compute_capability;
  h.sm_count = c.device.sm_count;
  h.backend = to_string(c.backend);
  h.emulator = c.backend == Backend::emulator;
  h.sku = options.sku ? options.sku->name : "";
  h.sku_reason = options.sku_reason;
  for (const auto& k : r.kernels) {
    if (k.status == Status::ok && k.validated)
      ++h.ok;
    else if (k.status == Status::skipped)
      ++h.skipped;
    else if (k.status == Status::failed_validation || k.status == Status::error || !k.validated)
      ++h.failed;
    else
      ++h.other;
  }
  for (const auto& ceiling : r.ceilings)
    h.verdicts.push_back(
        ceiling_verdict(ceiling, claim_for(ceiling, r, options.sku, options.sku_chosen)));
  std::vector<std::pair<double, std::string>> noise;
  for (const auto& k : r.kernels)
    if (auto n = kernel_noise(k, h.noise_robust)) noise.emplace_back(*n, k.name);
  if (!noise.empty()) {
    std::sort(noise.begin(), noise.end());
    h.noise_count = noise.size();
    h.noise_median = noise[noise.size() / 2].first;
    h.noise_worst = noise.back().first;
    h.noise_worst_kernel = noise.back().second;
  }
  h.nvml = c.nvml_available;
  h.nvml_note = c.nvml_note;
  for (const auto& k : r.kernels) {
    h.throttled += k.throttled;
    h.discarded += k.discarded_throttled;
  }
  for (const auto& ceiling : r.ceilings)
    if (!ceiling.throttle_reasons.empty())
      h.throttled_ceilings += (h.throttled_ceilings.empty() ? "" : ", ") + ceiling.name;
  for (const auto& k : r.kernels) count_counters(k, h);
  return h;
}

// "Noise (what it is): median ..., worst ...", or unknown.
std::string noise_text(const Headline& h) {
  if (h.noise_count == 0) return "Noise: unknown (no kernel timed with two or more repetitions)";
  return fmt::format("Noise ({}): median {:.2f}% over {} kernels, worst {:.2f}% ({})",
                     h.noise_robust ? "1.4826 × MAD / median of the samples"
                                    : "spread: stddev / median of the repetitions",
                     100 * h.noise_median, h.noise_count, 100 * h.noise_worst,
                     h.noise_worst_kernel);
}

// Throttling: only what NVML watched; without it nothing can be said.
std::string throttling_text(const Headline& h) {
  if (!h.nvml)
    return "unknown — NVML not available" + (h.nvml_note.empty() ? "" : " (" + h.nvml_note + ")");
  if (h.throttled == 0 && h.discarded == 0 && h.throttled_ceilings.empty())
    return "none seen by NVML during the samples";
  return fmt::format("{} kernel(s) throttled, {} sample(s) discarded for a clock-lowering reason{}",
                     h.throttled, h.discarded,
                     h.throttled_ceilings.empty()
                         ? ""
                         : "; ceilings with throttle reasons: " + h.throttled_ceilings);
}

std::string counters_text(const Headline& h) {
  if (h.counted == 0) return "";
  auto join = [](const std::vector<std::string>& items, std::string_view separator) {
    std::string out;
    for (const auto& item : items) out += (out.empty() ? "" : std::string(separator)) + item;
    return out;
  };
  const int nothing = h.counted - h.counters_agree - h.counters_differ - h.counters_unavailable;
  std::string text =
      fmt::format("Counters beside the cost model ({}): {} agree, {} differ",
                  join(h.counter_sources, ", "), h.counters_agree, h.counters_differ);
  if (nothing > 0) text += fmt::format(", {} with nothing the model declares to compare", nothing);
  if (h.counters_unavailable > 0)
    text += fmt::format("; {} unavailable: {}", h.counters_unavailable,
                        join(h.counters_unavailable_why, "; "));
  return text;
}

}  // namespace rl::roofline::report_detail
