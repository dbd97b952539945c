// The vendor-claim verdict: for each measured ceiling, the measured value set
// against the datasheet figure and against the peak derived at the SM clock
// observed during the measurement, with the throttling seen, in one line:
//
//   tc.bf16: 731 TFLOP/s = 74% of the 989 TFLOP/s claim; derived at the
//   1755 MHz seen during the run: 878 (83%); power-limited for 62% of samples
//
// (printed as one line; numbers above are the format's illustration only).
// Works on a Ceiling whose datasheet / derived_peak are already filled in
// (the SKU table's job); a missing figure is said, never invented.
#pragma once

#include "rl/roofline/results.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rl::roofline {

// measured / reference * 100, or nullopt when the reference is missing, zero,
// negative or not finite (a verdict must never divide by zero).
std::optional<double> percent_of(double measured, std::optional<double> reference);

// "power-limited", "thermally limited", ... for NVML throttle-reason names
// ("sw_power_cap", "hw_thermal_slowdown", ...); unknown names are returned
// unchanged.
std::string describe_throttle_reason(std::string_view reason);

// The verdict line of one ceiling (no trailing newline).
std::string verdict_line(const Ceiling& ceiling);

// One line per ceiling of the run, in the order of results.ceilings.
std::vector<std::string> verdict_lines(const Results& results);

// Fills every ceiling's `datasheet` (the matched SKU row: memory bandwidth for
// hbm.*, the unit's dense peak for compute ceilings) and `derived_peak` (SMs x
// per-SM rate x the ceiling's observed_sm_mhz; compute ceilings only, and only
// when the clock was observed).  Figures that are unknown stay empty; an
// unknown device matches no row (never a guess).  Returns match_sku's reason.
std::string attach_vendor_claims(Results& results);

}  // namespace rl::roofline
