#include "rl/bench/assembly.hpp"

#include "rl/bench/options.hpp"
#include "rl/roofline/compare.hpp"
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
  stats.median = roofline::median(samples);
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
  result.unit = cost.unit;
}

void set_timing(roofline::KernelResult& result, std::vector<double> samples) {
  result.time_s = time_stats(std::move(samples));
  const double median = result.time_s->median;
  result.achieved_flops_per_s = median > 0 ? result.flops / median : 0.0;
  result.achieved_bytes_per_s = median > 0 ? result.bytes_model / median : 0.0;
}

roofline::TimeStats sampled_time_stats(const SampleSet& set) {
  roofline::TimeStats stats = time_stats(repetition_medians(set));
  stats.kind = std::string(sample_kind_name(set.kind));
  stats.launches_per_sample = set.launches_per_sample;
  const std::vector<double> all = pooled(set);
  stats.samples_taken = static_cast<int>(all.size());
  stats.noise = roofline::relative_noise(all);
  stats.stopped_by = "noise";
  for (const StopReason reason : set.stopped_by)
    if (reason != StopReason::noise) {
      stats.stopped_by = std::string(stop_reason_name(reason));
      break;
    }
  return stats;
}

void set_sampled_timing(roofline::KernelResult& result, const SampleSet& judged,
                        const SampleSet& other) {
  set_timing(result, repetition_medians(judged));
  result.time_s = sampled_time_stats(judged);
  result.l2_flushed = judged.kind == SampleKind::cold;
  if (!other.repetitions.empty()) result.other_time_s = sampled_time_stats(other);
}

void set_clocks(roofline::KernelResult& result, const ClockWindow& window) {
  result.sm_clock_mhz = window.mean_sm_mhz;
  result.memory_clock_mhz = window.mean_memory_mhz;
  result.power_w = window.mean_power_w;
  result.temperature_c = window.mean_temperature_c;
  result.throttled = window.throttled();
}

bool is_memory_ceiling(std::string_view ceiling_name) {
  return ceiling_name.starts_with("hbm.") || ceiling_name.starts_with("l2.") ||
         ceiling_name.starts_with("smem.");
}

roofline::Ceiling measured_ceiling(const roofline::KernelResult& timed,
                                   std::string_view ceiling_name, std::string_view shape_text,
                                   const ClockWindow& window, std::string_view instruction) {
  if (!timed.time_s || timed.time_s->min <= 0)
    throw std::invalid_argument("measured_ceiling: kernel " + timed.name + " was not timed");
  roofline::Ceiling ceiling;
  ceiling.name = std::string(ceiling_name);
  const bool memory = is_memory_ceiling(ceiling_name);
  ceiling.kind = memory ? "memory" : "compute";
  ceiling.unit = memory ? "B/s" : "FLOP/s";
  const double work = memory ? timed.bytes_model : timed.flops;
  ceiling.value = work / timed.time_s->median;
  ceiling.best = work / timed.time_s->min;
  ceiling.method = "kernel " + timed.name +
                   (instruction.empty() ? "" : " (" + std::string(instruction) + ")") + ", " +
                   std::string(shape_text);
  ceiling.observed_sm_mhz = window.mean_sm_mhz;
  ceiling.throttle_reasons = window.throttle_reasons;
  if (window.samples > 0) ceiling.throttled_fraction = window.throttled_fraction;
  return ceiling;
}

bool merge_ceiling(std::vector<roofline::Ceiling>& ceilings, roofline::Ceiling ceiling) {
  for (auto& existing : ceilings) {
    if (existing.name != ceiling.name) continue;
    if (ceiling.value <= existing.value) return false;
    existing = std::move(ceiling);
    return true;
  }
  ceilings.push_back(std::move(ceiling));
  return true;
}

std::vector<roofline::Ceiling> reusable_ceilings(const roofline::Results& earlier,
                                                 const roofline::Context& here,
                                                 std::string_view source) {
  const std::string prefix = "--ceilings-from " + std::string(source) + ": ";
  const roofline::DeviceInfo& was = earlier.context.device;
  const roofline::DeviceInfo& is = here.device;
  auto describe = [](const roofline::Context& c) {
    return c.device.name + (c.device.uuid.empty() ? "" : " " + c.device.uuid) + " (" +
           std::string(roofline::to_string(c.backend)) + ")";
  };
  const bool same_device =
      !was.uuid.empty() && !is.uuid.empty()
          ? was.uuid == is.uuid
          : was.name == is.name && was.compute_capability == is.compute_capability;
  if (earlier.context.backend != here.backend || !same_device)
    throw UsageError(prefix + "measured on " + describe(earlier.context) + ", this run is on " +
                     describe(here) + "; roofs do not carry across devices");
  if (earlier.ceilings.empty()) throw UsageError(prefix + "holds no measured ceiling");
  std::vector<roofline::Ceiling> ceilings = earlier.ceilings;
  for (roofline::Ceiling& c : ceilings)
    c.method += "; from " + std::string(source) + " (" + earlier.context.timestamp_utc + ")";
  return ceilings;
}

}  // namespace rl::bench
