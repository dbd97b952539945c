#include "rl/bench/nvml.hpp"

#include <gtest/gtest.h>

#include <dlfcn.h>

namespace {

using rl::bench::ClockSampler;

TEST(ThrottleReasons, idle_and_application_clocks_are_not_throttling) {
  EXPECT_FALSE(rl::bench::is_throttling(0));
  EXPECT_FALSE(rl::bench::is_throttling(0x1 | 0x2));
  EXPECT_TRUE(rl::bench::is_throttling(0x4));         // sw power cap
  EXPECT_TRUE(rl::bench::is_throttling(0x1 | 0x40));  // idle + hw thermal
}

TEST(ThrottleReasons, names_follow_nvml_bits_and_keep_unknown_bits_visible) {
  EXPECT_EQ(rl::bench::throttle_reason_names(0x4 | 0x20),
            (std::vector<std::string>{"sw_power_cap", "sw_thermal_slowdown"}));
  EXPECT_EQ(rl::bench::throttle_reason_names(0x1000), std::vector<std::string>{"unknown_0x1000"});
  EXPECT_TRUE(rl::bench::throttle_reason_names(0).empty());
}

TEST(ClockSamplerSummary, mean_clocks_power_temperature_and_throttled_fraction_over_samples) {
  const auto now = ClockSampler::Clock::now();
  auto sample = [now](std::optional<double> sm, std::uint64_t reasons, std::optional<double> mem,
                      std::optional<double> watts, std::optional<double> celsius) {
    return ClockSampler::Sample{now, sm, reasons, mem, watts, celsius};
  };
  const std::vector<ClockSampler::Sample> samples{
      sample(1980.0, 0x1, 2619.0, 700.0, 60.0),                     // idle: not throttled
      sample(1500.0, 0x4, 2619.0, 690.0, 70.0),                     // power cap
      sample(std::nullopt, 0x0, std::nullopt, std::nullopt, 65.0),  // unreadable: not in means
      sample(1800.0, 0x4 | 0x2, 1593.0, std::nullopt,
             std::nullopt)};  // power cap (app clocks ignored)
  const auto window = ClockSampler::summarize(samples);
  EXPECT_EQ(window.samples, 4u);
  ASSERT_TRUE(window.mean_sm_mhz.has_value());
  EXPECT_DOUBLE_EQ(*window.mean_sm_mhz, (1980.0 + 1500.0 + 1800.0) / 3);
  EXPECT_DOUBLE_EQ(*window.mean_memory_mhz, (2619.0 + 2619.0 + 1593.0) / 3);
  EXPECT_DOUBLE_EQ(*window.mean_power_w, 695.0);
  EXPECT_DOUBLE_EQ(*window.mean_temperature_c, 65.0);
  EXPECT_DOUBLE_EQ(window.throttled_fraction, 0.5);
  EXPECT_EQ(window.throttle_reasons, std::vector<std::string>{"sw_power_cap"});
  EXPECT_TRUE(window.throttled());
}

TEST(ThrottleReasons, sync_boost_and_display_clock_are_not_throttling) {
  EXPECT_FALSE(rl::bench::is_throttling(rl::bench::kNvmlReasonSyncBoost));
  EXPECT_FALSE(rl::bench::is_throttling(rl::bench::kNvmlReasonDisplayClockSetting | 0x1));
  EXPECT_TRUE(rl::bench::is_throttling(rl::bench::kNvmlReasonSyncBoost | 0x20));  // + sw thermal
}

TEST(ClockSamplerSummary, no_samples_means_no_clock_and_not_throttled) {
  const auto window = ClockSampler::summarize({});
  EXPECT_FALSE(window.mean_sm_mhz.has_value());
  EXPECT_FALSE(window.throttled());
}

TEST(NvmlLoading, missing_library_is_reported_not_fatal) {
  if (void* handle = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL)) {
    dlclose(handle);
    GTEST_SKIP() << "libnvidia-ml.so.1 is present on this machine";
  }
  std::string why;
  const auto nvml = rl::bench::Nvml::open("GPU-00000000-0000-0000-0000-000000000000", 0, &why);
  EXPECT_EQ(nvml, nullptr);
  EXPECT_NE(why.find("libnvidia-ml.so.1"), std::string::npos) << why;
}

}  // namespace
