#include "rl/bench/policy.hpp"

#include "rl/bench/assembly.hpp"
#include "rl/roofline/compare.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

namespace rl::bench {

std::string_view sample_kind_name(SampleKind kind) {
  return kind == SampleKind::cold ? "cold" : "batch";
}

std::string_view stop_reason_name(StopReason reason) {
  switch (reason) {
    case StopReason::noise:
      return "noise";
    case StopReason::timeout:
      return "timeout";
    case StopReason::max_samples:
      return "max_samples";
  }
  return "?";
}

int launches_per_sample(double single_launch_seconds) {
  if (!(single_launch_seconds > 0) || single_launch_seconds >= kBatchBelowSeconds) return 1;
  const double count = std::ceil(kBatchTargetSeconds / single_launch_seconds);
  return static_cast<int>(std::min(count, static_cast<double>(kMaxLaunchesPerSample)));
}

std::vector<int> other_devices_to_flush(int min_devices, int timed_device, int device_count) {
  std::vector<int> devices;
  if (min_devices > 1)
    for (int d = 0; d < device_count; ++d)
      if (d != timed_device) devices.push_back(d);
  return devices;
}

double repetition_budget_s(const SamplingPolicy& policy, int repetitions, int kinds) {
  return policy.timeout_s / std::max(1, repetitions) / std::max(1, kinds);
}

std::optional<StopReason> should_stop(std::span<const double> samples, double elapsed_s,
                                      double budget_s, const SamplingPolicy& policy) {
  if (samples.empty()) return std::nullopt;
  if (static_cast<int>(samples.size()) >= policy.max_samples) return StopReason::max_samples;
  if (static_cast<int>(samples.size()) >= std::max(2, policy.min_samples) &&
      roofline::relative_noise(samples) <= policy.max_noise)
    return StopReason::noise;
  if (elapsed_s >= budget_s) return StopReason::timeout;
  return std::nullopt;
}

std::vector<double> repetition_medians(const SampleSet& set) {
  std::vector<double> medians;
  for (const auto& samples : set.repetitions)
    if (!samples.empty()) medians.push_back(time_stats(samples).median);
  return medians;
}

std::vector<double> pooled(const SampleSet& set) {
  std::vector<double> all;
  for (const auto& samples : set.repetitions) all.insert(all.end(), samples.begin(), samples.end());
  return all;
}

}  // namespace rl::bench
