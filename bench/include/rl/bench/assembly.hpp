// From measurements to results.json records: time statistics, achieved rates,
// measured ceilings, clocks seen during a benchmark.  Plain C++, shared by both
// backends and tested on its own (tests/bench).
#pragma once

#include "rl/bench/nvml.hpp"
#include "rl/bench/policy.hpp"
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

// time_s from one kind's samples: statistics over the repetitions' medians,
// plus kind, launches per sample, samples taken, the relative noise of all
// samples and why sampling stopped.
roofline::TimeStats sampled_time_stats(const SampleSet& set);
// time_s and the achieved rates from the kind the roofline judges by,
// other_time_s from the other kind, l2_flushed from the judged kind.
void set_sampled_timing(roofline::KernelResult& result, const SampleSet& judged,
                        const SampleSet& other);

// Seen by the clock sampler while the samples were timed: mean SM and memory
// clocks, power, temperature; throttling.
void set_clocks(roofline::KernelResult& result, const ClockWindow& window);

// Memory ceilings ("hbm.copy", "l2.read") are rated in B/s from bytes_model,
// every other ceiling in FLOP/s from flops.
bool is_memory_ceiling(std::string_view ceiling_name);

// A timed ceiling kernel as a measured ceiling: value = work / median time
// (the statistic every kernel is judged by), best = work / fastest repetition
// (what BabelStream would report; kept for the record).
// `shape_text` names the shape in the method, after the record's `instruction`
// when it has one ("kernel wgmma_loop_bf16 (wgmma.mma_async (HGMMA)), blocks=264,...").
roofline::Ceiling measured_ceiling(const roofline::KernelResult& timed,
                                   std::string_view ceiling_name, std::string_view shape_text,
                                   const ClockWindow& window, std::string_view instruction = {});

// --ceilings-from: the ceilings of an earlier run, for a run on `here`.
// Throws UsageError (one line naming `source`) when the earlier run is from
// another backend or device (UUID when both know it, else name and compute
// capability), or measured no ceiling.  Each ceiling's method says where it
// came from.
std::vector<roofline::Ceiling> reusable_ceilings(const roofline::Results& earlier,
                                                 const roofline::Context& here,
                                                 std::string_view source);

// Adds `ceiling`, or replaces the one of the same name when this one is higher
// (a ceiling measured on several shapes keeps its best).  Returns whether the
// ceilings changed.
bool merge_ceiling(std::vector<roofline::Ceiling>& ceilings, roofline::Ceiling ceiling);

}  // namespace rl::bench
