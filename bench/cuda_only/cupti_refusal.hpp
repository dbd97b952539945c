// When CUPTI will not count on this machine (no permission, a device or chip
// its profiler does not support, another profiler attached), the one line
// that says why and what to do about it.  Functions of CUPTI's answers alone,
// so a unit test checks every sentence without a device.
#pragma once

#include <cupti_profiler_target.h>
#include <cupti_result.h>

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace rl::bench {

// The sentence for an error that refuses counting for the whole run; nullopt
// for an error that concerns one collection only (the caller reports that
// one as CUPTI's own words, for that kernel).
std::optional<std::string> cupti_refusal(CUptiResult result);

// The sentence when cuptiProfilerDeviceSupported says the range profiler
// cannot run on the device; nullopt when it can.
std::optional<std::string> device_support_refusal(
    const CUpti_Profiler_DeviceSupported_Params& support);

// CUPTI's host API does not know the device's chip (`cupti_says`: the
// plan's error, which lists the chips it knows).
std::string unknown_chip_refusal(std::string_view chip, std::string_view cupti_says);

// Whether a count's `unavailable` is one of the sentences above (this
// machine will not count: a GPU test skips) rather than one count's failure.
bool is_refusal(std::string_view unavailable);

// Why CUPTI's host object for a device (the chip's, with the device's counter
// availability image) could not configure `metrics`, as `error` says: the
// metrics that it refuses one by one, each on a fresh host object of the same
// chip and image (counters another client such as DCGM holds, a metric the
// chip lacks), named before `error`; `error` alone when every metric
// configures by itself.  Only for that failure: a host object per metric.
std::string unconfigurable_metrics(std::string_view chip,
                                   std::span<const std::uint8_t> counter_availability,
                                   std::span<const std::string> metrics, std::string_view error);

// Which devices a run does not count on, and why.  CUPTI's initialisation
// failing refuses every device; any other failure (a device's setup, a
// refusal during one of its collections) refuses only that device, so the
// others go on counting.  Each refusal is printed once, "counters
// unavailable: <why>", with " (device N)" after a device's.
class Refusals {
 public:
  void refuse_all(std::string why);
  void refuse(int device, std::string why);  // the first reason for a device stays
  // Why `device` does not count; null when it does.
  const std::string* of(int device) const;

 private:
  std::string all_;
  std::map<int, std::string> devices_;
};

}  // namespace rl::bench
