// The chip plan as one CUPTI collection reads it (bench/cuda_only/
// counter_readout.hpp): every metric the plan chose is collected once and its
// value lands on its role's key, scaled into the role's unit; the host object
// configures that set in the passes the plan counted.  CUPTI's host API
// alone, no device.
#include "counter_readout.hpp"

#include "rl/roofline/counter_agreement.hpp"
#include "rl/roofline/counter_metrics.hpp"
#include "rl/roofline/counter_plan.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
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

// The tensor ops a kernel issuing `ops` FP4 (e2m1) MMAs with FP32
// accumulation is counted with on `plan`'s chip: every metric whose inputs
// include FP4 into FP32 reads `ops`, the others 0; the readout's values are
// summed by the comparison, against a model declaring exactly `ops`.
roofline::CounterComparison fp4_tensor_ops(const roofline::CounterPlan& plan, double ops) {
  const CounterReadout readout = readout_of(plan);
  std::vector<double> values;
  for (const std::string& name : readout.metrics) {
    const bool fp4_in = name.starts_with("sm__ops_path_tensor_src_fp4");
    values.push_back(fp4_in && name.ends_with("_dst_fp32.sum") ? ops : 0);
  }
  roofline::KernelResult k;
  k.family = "gemm";
  k.unit = roofline::ComputeUnit::tc_fp4;
  k.flops = k.tensor_ops.emplace(ops);
  k.counters.emplace();
  k.counters->chip = plan.chip;  // source: cupti
  k.counters->values = role_values(readout, values);
  roofline::compare_counters(k);
  for (const auto& c : k.counters->comparisons)
    if (c.quantity == roofline::CounterQuantity::tensor_ops) return c;
  ADD_FAILURE() << plan.chip << ": no tensor_ops comparison";
  return {};
}

TEST(CounterReadout, an_fp4_op_is_counted_once_where_a_folded_counter_also_holds_it) {
  RL_REQUIRE_CUPTI();
  // GB100: the FP4/FP6/FP8 counter and the FP4 one; GB202: the FP6/FP4
  // counter and the FP4 one.  Both plans choose both.
  for (const char* chip : {"GB100", "GB202"}) {
    const roofline::CounterPlan plan = roofline::plan_counters(chip);
    std::size_t fp4_metrics = 0;
    for (const auto& r : plan.roles)
      if (r.metric && r.metric->name.starts_with("sm__ops_path_tensor_src_fp4") &&
          r.metric->name.ends_with("_dst_fp32.sum"))
        ++fp4_metrics;
    EXPECT_EQ(fp4_metrics, 2u) << chip;
    const roofline::CounterComparison c = fp4_tensor_ops(plan, 1e9);
    EXPECT_EQ(c.counted, 1e9) << chip;
    EXPECT_TRUE(c.agrees) << chip << ": " << c.sentence;
  }
}

TEST(CounterReadout, a_role_a_chosen_counter_holds_reads_nothing_whichever_comes_first) {
  const auto& fold = role_named("tensor_fp8_f32");
  const auto& fp4 = role_named("tensor_fp4");
  const roofline::CounterMetric& folded = fold.metrics[2];
  ASSERT_EQ(folded.name, "sm__ops_path_tensor_src_fp4_fp6_fp8_dst_fp32.sum");
  const roofline::RolePlan fold_plan{
      .role = &fold, .status = roofline::CounterStatus::equivalent, .metric = &folded};
  const roofline::RolePlan fp4_plan{
      .role = &fp4, .status = roofline::CounterStatus::preferred, .metric = &fp4.metrics[0]};
  for (const bool fold_first : {true, false}) {
    roofline::CounterPlan plan{.chip = "TEST"};
    plan.roles = fold_first ? std::vector{fold_plan, fp4_plan} : std::vector{fp4_plan, fold_plan};
    const CounterReadout readout = readout_of(plan);
    ASSERT_EQ(readout.metrics, std::vector<std::string>{std::string(folded.name)}) << fold_first;
    const auto by_role = role_values(readout, std::vector<double>{5});
    EXPECT_EQ(by_role, (std::map<std::string, double>{{"tensor_fp8_f32", 5}})) << fold_first;
    EXPECT_EQ(fp4_tensor_ops(plan, 5).counted, 5) << fold_first;
  }
}

}  // namespace
}  // namespace rl::bench
