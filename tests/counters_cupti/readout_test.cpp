// The chip plan as one CUPTI collection reads it (bench/cuda_only/
// counter_readout.hpp): every metric the plan chose is collected once and its
// value lands on its role's key, scaled into the role's unit; the host object
// configures that set in the passes the plan counted.  CUPTI's host API
// alone, no device.
#include "counter_readout.hpp"

#include "rl/roofline/counter_metrics.hpp"
#include "rl/roofline/counter_plan.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace rl::bench {
namespace {

#define RL_REQUIRE_CUPTI()                 \
  if (!roofline::counter_plan_available()) \
  GTEST_SKIP() << roofline::counter_plan_unavailable_reason()

const roofline::CounterRole& role_named(std::string_view key) {
  for (const auto& r : roofline::counter_roles())
    if (r.key == key) return r;
  throw std::runtime_error("no role " + std::string(key));
}

TEST(CounterReadout, gh100_plan_maps_every_chosen_metric_to_a_role_key) {
  RL_REQUIRE_CUPTI();
  const roofline::CounterPlan plan = roofline::plan_counters("GH100");
  const CounterReadout readout = readout_of(plan);

  std::set<std::string_view> keys;
  for (const auto& r : roofline::counter_roles()) keys.insert(r.key);
  std::set<std::string_view> chosen;
  for (const auto& r : plan.roles)
    if (r.metric) chosen.insert(r.metric->name);
  ASSERT_EQ(readout.metrics.size(), chosen.size());
  ASSERT_EQ(readout.roles.size(), chosen.size());  // GH100's plan chose no metric twice
  std::vector<int> roles_of_metric(readout.metrics.size(), 0);
  for (const auto& r : readout.roles) {
    EXPECT_TRUE(keys.contains(r.key)) << r.key;
    ASSERT_LT(r.metric, readout.metrics.size()) << r.key;
    ++roles_of_metric[r.metric];
  }
  for (std::size_t i = 0; i < readout.metrics.size(); ++i) {
    EXPECT_EQ(roles_of_metric[i], 1) << readout.metrics[i] << " maps to no role, or to several";
    EXPECT_TRUE(chosen.contains(readout.metrics[i])) << readout.metrics[i];
  }
  EXPECT_EQ(std::set<std::string>(readout.metrics.begin(), readout.metrics.end()).size(),
            readout.metrics.size());

  // Each metric's value lands on its role, times the role's scale.
  std::vector<double> values;
  auto value_of = [](std::size_t metric) { return 1000.0 + static_cast<double>(metric); };
  for (std::size_t i = 0; i < readout.metrics.size(); ++i) values.push_back(value_of(i));
  const auto by_role = role_values(readout, values);
  for (const auto& r : readout.roles)
    EXPECT_EQ(by_role.at(std::string(r.key)), value_of(r.metric) * r.scale) << r.key;
  // What the comparisons read on a Hopper: DRAM, L2, tensor ops, duration.
  for (std::string_view key : {"dram_bytes_read", "dram_bytes_write", "l2_bytes", "tensor_fp16_f32",
                               "tensor_bf16", "duration", "sm_clock"})
    EXPECT_TRUE(by_role.contains(std::string(key))) << key;
  EXPECT_FALSE(by_role.contains("ffma2"));  // absent on GH100: no value, not 0
  const auto dram_read = std::ranges::find(readout.metrics, "dram__bytes_read.sum");
  ASSERT_NE(dram_read, readout.metrics.end());
  EXPECT_EQ(by_role.at("dram_bytes_read"),
            value_of(static_cast<std::size_t>(dram_read - readout.metrics.begin())));
}

TEST(CounterReadout, gh100_readout_configures_in_the_passes_the_plan_counted) {
  RL_REQUIRE_CUPTI();
  const roofline::CounterPlan plan = roofline::plan_counters("gh100");
  const CounterReadout readout = readout_of(plan);
  roofline::CounterHost host(plan.chip, {});  // no device: no availability image
  const auto config = host.configure(readout.metrics);
  EXPECT_FALSE(config.image.empty());
  EXPECT_EQ(config.passes, plan.passes);
}

TEST(CounterReadout, a_sector_count_is_scaled_to_bytes_and_a_folded_counter_read_once) {
  const auto& l2 = role_named("l2_bytes");
  ASSERT_EQ(l2.metrics[1].name, "lts__t_sectors.sum");
  // Two roles that one folded counter answers (a plan takes it once; were
  // it twice, the tensor ops summed over roles would count it twice).
  const roofline::CounterMetric folded{"sm__ops_path_tensor_src_fp16.sum"};
  roofline::CounterPlan plan{.chip = "TEST"};
  plan.roles.push_back(
      {.role = &l2, .status = roofline::CounterStatus::equivalent, .metric = &l2.metrics[1]});
  plan.roles.push_back({.role = &role_named("tensor_fp16_f32"),
                        .status = roofline::CounterStatus::equivalent,
                        .metric = &folded});
  plan.roles.push_back({.role = &role_named("tensor_fp16_f16"),
                        .status = roofline::CounterStatus::equivalent,
                        .metric = &folded});
  plan.roles.push_back({.role = &role_named("ffma2"), .status = roofline::CounterStatus::absent});

  const CounterReadout readout = readout_of(plan);
  ASSERT_EQ(readout.metrics,
            (std::vector<std::string>{"lts__t_sectors.sum", "sm__ops_path_tensor_src_fp16.sum"}));
  const double values[] = {10, 7};
  const auto by_role = role_values(readout, values);
  EXPECT_EQ(by_role.at("l2_bytes"), 320);  // 10 sectors x 32 B
  EXPECT_EQ(by_role.at("tensor_fp16_f32"), 7);
  EXPECT_FALSE(by_role.contains("tensor_fp16_f16"));
  EXPECT_EQ(by_role.size(), 2u);  // nothing for the absent role
  EXPECT_THROW(role_values(readout, std::vector<double>{1}), std::invalid_argument);
}

}  // namespace
}  // namespace rl::bench
