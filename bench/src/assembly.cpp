#include "rl/bench/assembly.hpp"

#include "rl/roofline/model.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace rl::bench {

roofline::TimeStats time_stats(std::vector<double> samples) {
  if (samples.empty()) throw std::invalid_argument("time_stats: no samples");
  roofline::TimeStats stats;
  stats.samples = samples;
  std::sort(samples.begin(), samples.end());
  const std::size_t n = samples.size();
  stats.repetitions = static_cast<int>(n);
  stats.min = samples.front();
  stats.max = samples.back();
  stats.median = n % 2 == 1 ? samples[n / 2] : 0.5 * (samples[n / 2 - 1] + samples[n / 2]);
  double mean = 0;
  for (const double s : samples) mean += s;
  mean /= static_cast<double>(n);
  double squares = 0;
  for (const double s : samples) squares += (s - mean) * (s - mean);
  stats.stddev = n > 1 ? std::sqrt(squares / static_cast<double>(n - 1)) : 0.0;
  return stats;
}

void set_cost(roofline::KernelResult& result, const roofline::Cost& cost) {
  result.flops = cost.flops;
  result.bytes_min = cost.bytes_min;
  result.bytes_model = cost.bytes_model;
  result.intensity = cost.bytes_model > 0 ? cost.flops / cost.bytes_model : 0.0;
  result.unit = std::string(roofline::compute_unit_name(cost.unit));
}

void set_timing(roofline::KernelResult& result, std::vector<double> samples) {
  result.time_s = time_stats(std::move(samples));
  const double median = result.time_s->median;
  result.achieved_flops_per_s = median > 0 ? result.flops / median : 0.0;
  result.achieved_bytes_per_s = median > 0 ? result.bytes_model / median : 0.0;
}

void set_clocks(roofline::KernelResult& result, const ClockWindow& window) {
  result.sm_clock_mhz = window.mean_sm_mhz;
  result.throttled = window.throttled();
}

bool is_memory_ceiling(std::string_view ceiling_name) {
  return ceiling_name.starts_with("hbm.") || ceiling_name.starts_with("l2.");
}

roofline::Ceiling measured_ceiling(const roofline::KernelResult& timed,
                                   std::string_view ceiling_name, std::string_view shape_text,
                                   const ClockWindow& window) {
  if (!timed.time_s || timed.time_s->min <= 0)
    throw std::invalid_argument("measured_ceiling: kernel " + timed.name + " was not timed");
  roofline::Ceiling ceiling;
  ceiling.name = std::string(ceiling_name);
  const bool memory = is_memory_ceiling(ceiling_name);
  ceiling.kind = memory ? "memory" : "compute";
  ceiling.unit = memory ? "B/s" : "FLOP/s";
  const double work = memory ? timed.bytes_model : timed.flops;
  ceiling.value = work / timed.time_s->min;
  ceiling.median = work / timed.time_s->median;
  ceiling.method = "kernel " + timed.name + ", " + std::string(shape_text);
  ceiling.observed_sm_mhz = window.mean_sm_mhz;
  ceiling.throttle_reasons = window.throttle_reasons;
  if (window.samples > 0) ceiling.throttled_fraction = window.throttled_fraction;
  return ceiling;
}

void merge_ceiling(std::vector<roofline::Ceiling>& ceilings, roofline::Ceiling ceiling) {
  for (auto& existing : ceilings) {
    if (existing.name != ceiling.name) continue;
    if (ceiling.value > existing.value) existing = std::move(ceiling);
    return;
  }
  ceilings.push_back(std::move(ceiling));
}

}  // namespace rl::bench
