#include "rl/bench/assembly.hpp"
#include "rl/bench/policy.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

namespace {

using rl::roofline::KernelResult;

TEST(TimeStats, median_of_odd_count_is_the_middle_sample) {
  const auto stats = rl::bench::time_stats({3.0, 1.0, 2.0});
  EXPECT_DOUBLE_EQ(stats.median, 2.0);
  EXPECT_DOUBLE_EQ(stats.min, 1.0);
  EXPECT_DOUBLE_EQ(stats.max, 3.0);
  EXPECT_EQ(stats.repetitions, 3);
  EXPECT_DOUBLE_EQ(stats.stddev, 1.0);  // sample stddev (n - 1) of 1, 2, 3
}

TEST(TimeStats, median_of_even_count_averages_the_middle_pair_and_keeps_sample_order) {
  const auto stats = rl::bench::time_stats({4.0, 1.0, 3.0, 2.0});
  EXPECT_DOUBLE_EQ(stats.median, 2.5);
  ASSERT_EQ(stats.samples.size(), 4u);
  EXPECT_DOUBLE_EQ(stats.samples[0], 4.0);  // repetition order, as compare reads them
}

TEST(TimeStats, single_sample_has_zero_spread_and_empty_list_throws) {
  EXPECT_DOUBLE_EQ(rl::bench::time_stats({2.0}).stddev, 0.0);
  EXPECT_THROW(rl::bench::time_stats({}), std::invalid_argument);
}

TEST(KernelResultAssembly, cost_sets_intensity_from_bytes_model_and_unit_name) {
  KernelResult r;
  rl::bench::set_cost(r, {.flops = 100,
                          .bytes_min = 400,
                          .bytes_model = 800,
                          .unit = rl::roofline::ComputeUnit::tc_bf16});
  EXPECT_DOUBLE_EQ(r.intensity, 0.125);
  EXPECT_DOUBLE_EQ(r.bytes_min, 400);
  EXPECT_EQ(r.unit, rl::roofline::ComputeUnit::tc_bf16);
}

TEST(KernelResultAssembly, achieved_rates_use_the_median_time) {
  KernelResult r;
  rl::bench::set_cost(r, {.flops = 1e9, .bytes_min = 8e9, .bytes_model = 8e9});
  rl::bench::set_timing(r, {1e-3, 4e-3, 2e-3});
  ASSERT_TRUE(r.time_s.has_value());
  EXPECT_DOUBLE_EQ(r.time_s->median, 2e-3);
  EXPECT_DOUBLE_EQ(r.achieved_flops_per_s, 5e11);
  EXPECT_DOUBLE_EQ(r.achieved_bytes_per_s, 4e12);
}

TEST(KernelResultAssembly, clock_window_sets_mean_clock_and_throttled_flag) {
  KernelResult r;
  rl::bench::ClockWindow window;
  window.samples = 3;
  window.mean_sm_mhz = 1755;
  window.throttle_reasons = {"sw_power_cap"};
  rl::bench::set_clocks(r, window);
  EXPECT_EQ(r.sm_clock_mhz, 1755);
  EXPECT_TRUE(r.throttled);
  rl::bench::set_clocks(r, {});
  EXPECT_FALSE(r.throttled);
  EXPECT_FALSE(r.sm_clock_mhz.has_value());
}

KernelResult timed_kernel(double flops, double bytes, std::vector<double> seconds) {
  KernelResult r;
  r.name = "hbm_copy_vec16";
  rl::bench::set_cost(r, {.flops = flops, .bytes_min = bytes, .bytes_model = bytes});
  rl::bench::set_timing(r, std::move(seconds));
  return r;
}

TEST(MeasuredCeilings, memory_ceiling_is_bytes_over_median_time_like_every_kernel) {
  const auto k = timed_kernel(0, 2e9, {2e-3, 1e-3, 4e-3});
  const auto c = rl::bench::measured_ceiling(k, "hbm.copy", "n=268435456", {});
  EXPECT_EQ(c.kind, "memory");
  EXPECT_EQ(c.unit, "B/s");
  EXPECT_DOUBLE_EQ(c.value, 1e12);  // median: 2e9 B / 2 ms
  EXPECT_DOUBLE_EQ(*c.best, 2e12);  // 2e9 B / 1 ms
  EXPECT_EQ(c.method, "kernel hbm_copy_vec16, n=268435456");
}

TEST(MeasuredCeilings, the_method_names_the_instruction_the_roof_is_made_of) {
  const auto k = timed_kernel(1e12, 1e3, {2e-2});
  const auto c = rl::bench::measured_ceiling(k, "tc.bf16", "blocks=1", {}, "mma.sync (HMMA)");
  EXPECT_EQ(c.method, "kernel hbm_copy_vec16 (mma.sync (HMMA)), blocks=1");
}

TEST(MeasuredCeilings, compute_ceiling_is_flops_over_median_time) {
  const auto k = timed_kernel(1e12, 1e3, {2e-2, 1e-2});
  rl::bench::ClockWindow window;
  window.samples = 4;
  window.mean_sm_mhz = 1980;
  window.throttle_reasons = {"hw_thermal_slowdown"};
  window.throttled_fraction = 0.25;
  const auto c = rl::bench::measured_ceiling(k, "fp32.fma", "n=1", window);
  EXPECT_EQ(c.kind, "compute");
  EXPECT_EQ(c.unit, "FLOP/s");
  EXPECT_DOUBLE_EQ(c.value, 1e12 / 1.5e-2);  // median of 20 ms and 10 ms
  EXPECT_DOUBLE_EQ(*c.best, 1e14);
  EXPECT_EQ(c.observed_sm_mhz, 1980);
  EXPECT_EQ(c.throttle_reasons, std::vector<std::string>{"hw_thermal_slowdown"});
  EXPECT_EQ(c.throttled_fraction, 0.25);
}

TEST(MeasuredCeilings, untimed_kernel_cannot_become_a_ceiling) {
  KernelResult untimed;
  EXPECT_THROW(rl::bench::measured_ceiling(untimed, "hbm.copy", "n=1", {}), std::invalid_argument);
}

TEST(MeasuredCeilings, merge_keeps_the_best_shape_per_ceiling) {
  std::vector<rl::roofline::Ceiling> ceilings;
  rl::roofline::Ceiling a;
  a.name = "hbm.copy";
  a.kind = "memory";
  a.value = 2e12;
  a.unit = "B/s";
  a.method = "small";
  rl::roofline::Ceiling b = a;
  b.value = 3e12;
  b.method = "large";
  rl::roofline::Ceiling c = a;
  c.value = 1e12;
  c.method = "tiny";
  rl::roofline::Ceiling other = a;
  other.name = "hbm.read";
  // Says whether the ceilings changed: the harness judges again only then.
  EXPECT_TRUE(rl::bench::merge_ceiling(ceilings, a));
  EXPECT_TRUE(rl::bench::merge_ceiling(ceilings, b));
  EXPECT_FALSE(rl::bench::merge_ceiling(ceilings, c));
  EXPECT_FALSE(rl::bench::merge_ceiling(ceilings, b));  // equal: kept as it was
  EXPECT_TRUE(rl::bench::merge_ceiling(ceilings, other));
  ASSERT_EQ(ceilings.size(), 2u);
  EXPECT_EQ(ceilings[0].method, "large");
  EXPECT_EQ(ceilings[1].name, "hbm.read");
}

TEST(MeasuredCeilings, memory_ceilings_are_hbm_l2_and_smem_names) {
  EXPECT_TRUE(rl::bench::is_memory_ceiling("hbm.triad"));
  EXPECT_TRUE(rl::bench::is_memory_ceiling("l2.read"));
  EXPECT_TRUE(rl::bench::is_memory_ceiling("smem.read"));
  EXPECT_FALSE(rl::bench::is_memory_ceiling("tc.bf16"));
  EXPECT_FALSE(rl::bench::is_memory_ceiling("fp32.fma"));
}

// A chase through a peer's memory timed on device 1 of 4: its cold samples
// must find the lines in the owner's memory, not in device 0's, 2's or 3's
// L2; a one-device record flushes only its own.
TEST(ColdSamples, a_record_across_devices_flushes_every_other_device_l2) {
  EXPECT_EQ(rl::bench::other_devices_to_flush(2, 1, 4), (std::vector<int>{0, 2, 3}));
  EXPECT_EQ(rl::bench::other_devices_to_flush(2, 0, 2), (std::vector<int>{1}));
  EXPECT_TRUE(rl::bench::other_devices_to_flush(1, 0, 8).empty());
}

TEST(Batching, kernels_of_20us_or_more_get_one_launch_per_sample) {
  EXPECT_EQ(rl::bench::launches_per_sample(20e-6), 1);
  EXPECT_EQ(rl::bench::launches_per_sample(1e-3), 1);
}

TEST(Batching, short_kernels_are_batched_to_fill_the_target_and_capped) {
  EXPECT_EQ(rl::bench::launches_per_sample(10e-6), 20);  // 200 us / 10 us
  EXPECT_EQ(rl::bench::launches_per_sample(3e-6), 67);   // ceil(66.7)
  EXPECT_EQ(rl::bench::launches_per_sample(1e-9), rl::bench::kMaxLaunchesPerSample);
  EXPECT_EQ(rl::bench::launches_per_sample(0.0), 1);  // a timer that saw nothing: no batch
}

}  // namespace
