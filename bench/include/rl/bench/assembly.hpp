// From measurements to results.json records: time statistics, achieved rates,
// measured ceilings, clocks seen during a benchmark.  Plain C++, shared by both
// backends and tested on its own (tests/bench).
#pragma once

#include "rl/bench/nvml.hpp"
#include "rl/roofline/cost.hpp"
#include "rl/roofline/results.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rl::bench {

// Median, min, max and sample standard deviation (n - 1) of per-repetition
// times; the samples are kept for compare's rank test.  Throws
// std::invalid_argument on an empty list.
roofline::TimeStats time_stats(std::vector<double> samples);

// flops, bytes_min, bytes_model, intensity (flops / bytes_model) and unit.
void set_cost(roofline::KernelResult& result, const roofline::Cost& cost);

// time_s from the samples; achieved rates are work / median time.
void set_timing(roofline::KernelResult& result, std::vector<double> samples);

// Seen by the clock sampler during the benchmark: mean SM clock, throttling.
void set_clocks(roofline::KernelResult& result, const ClockWindow& window);

// Memory ceilings ("hbm.copy", "l2.read") are rated in B/s from bytes_model,
// every other ceiling in FLOP/s from flops.
bool is_memory_ceiling(std::string_view ceiling_name);

// A timed ceiling kernel as a measured ceiling: value = work / fastest
// repetition (the best, as BabelStream reports), median = work / median time.
// `shape_text` names the shape in the method ("kernel hbm_copy_vec16, n=268435456").
roofline::Ceiling measured_ceiling(const roofline::KernelResult& timed,
                                   std::string_view ceiling_name, std::string_view shape_text,
                                   const ClockWindow& window);

// Adds `ceiling`, or replaces the one of the same name when this one is higher
// (a ceiling measured on several shapes keeps its best).
void merge_ceiling(std::vector<roofline::Ceiling>& ceilings, roofline::Ceiling ceiling);

}  // namespace rl::bench
