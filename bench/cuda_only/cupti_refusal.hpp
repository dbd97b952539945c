// When CUPTI will not count on this machine (no permission, a device or chip
// its profiler does not support, another profiler attached), the one line
// that says why and what to do about it.  Functions of CUPTI's answers alone,
// so a unit test checks every sentence without a device.
#pragma once

#include <cupti_profiler_target.h>
#include <cupti_result.h>

#include <optional>
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

}  // namespace rl::bench
