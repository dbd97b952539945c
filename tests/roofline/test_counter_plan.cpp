// The counter plan (issue 28 item 4): the suite's metric set resolved per chip
// through CUPTI's host API, without a GPU.  Skipped, with the reason, only in
// a build without CUPTI.
#include "rl/roofline/counter_plan.hpp"
#include "rl/roofline/sku.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cctype>
#include <set>
#include <stdexcept>
#include <string>

namespace rl::roofline {
namespace {

#define RL_REQUIRE_CUPTI() \
  if (!counter_plan_available()) GTEST_SKIP() << counter_plan_unavailable_reason()

const RolePlan& role(const CounterPlan& plan, std::string_view key) {
  for (const auto& r : plan.roles)
    if (r.role->key == key) return r;
  throw std::runtime_error("no role " + std::string(key));
}

// What every role of every plan must say, whatever the chip.
void expect_consistent(const CounterPlan& plan) {
  ASSERT_EQ(plan.roles.size(), counter_roles().size()) << plan.chip;
  for (const auto& r : plan.roles) {
    const auto& metrics = r.role->metrics;
    switch (r.status) {
      case CounterStatus::preferred:
        EXPECT_EQ(r.metric, &metrics.front()) << plan.chip << " " << r.role->key;
        EXPECT_TRUE(r.rejected.empty()) << plan.chip << " " << r.role->key;
        break;
      case CounterStatus::equivalent:
        ASSERT_NE(r.metric, nullptr) << plan.chip << " " << r.role->key;
        EXPECT_NE(r.metric, &metrics.front()) << plan.chip << " " << r.role->key;
        EXPECT_FALSE(r.rejected.empty()) << plan.chip << " " << r.role->key;
        break;
      case CounterStatus::missing:
      case CounterStatus::absent:
        EXPECT_EQ(r.metric, nullptr) << plan.chip << " " << r.role->key;
        EXPECT_EQ(r.rejected.size(), metrics.size()) << plan.chip << " " << r.role->key;
        break;
    }
  }
  EXPECT_GE(plan.passes, 1u) << plan.chip;
  EXPECT_GT(plan.max_hardware_metrics_per_pass, 0u) << plan.chip;
}

TEST(CounterMetrics, every_role_has_a_unique_key_a_purpose_and_rolled_up_metrics) {
  std::set<std::string_view> keys;
  for (const auto& r : counter_roles()) {
    EXPECT_TRUE(keys.insert(r.key).second) << r.key;
    EXPECT_FALSE(r.purpose.empty()) << r.key;
    EXPECT_FALSE(r.unit.empty()) << r.key;
    ASSERT_FALSE(r.metrics.empty()) << r.key;
    EXPECT_EQ(r.need == CounterNeed::where_present, !r.when_absent.empty()) << r.key;
    for (const auto& m : r.metrics) {
      // base metric "unit__counter" and a rollup: "dram__bytes_read.sum"
      EXPECT_NE(m.name.find("__"), std::string_view::npos) << m.name;
      EXPECT_NE(m.name.find('.'), std::string_view::npos) << m.name;
      EXPECT_GT(m.scale, 0) << m.name;
      // A fallback in another unit says so.
      if (m.scale != 1) {
        EXPECT_FALSE(m.differs.empty()) << m.name;
      }
    }
    EXPECT_TRUE(r.metrics.front().differs.empty()) << r.key;
  }
  // A folded counter names the roles it holds: other tensor roles, each
  // known (a misspelt key would leave its ops counted twice).
  std::set<std::string_view> tensor_keys;
  for (const auto& r : counter_roles())
    if (r.unit == "ops") tensor_keys.insert(r.key);
  std::size_t folds = 0;
  for (const auto& r : counter_roles())
    for (const auto& m : r.metrics)
      for (std::string_view held : m.contains) {
        EXPECT_TRUE(tensor_keys.contains(r.key)) << m.name;
        EXPECT_TRUE(tensor_keys.contains(held)) << m.name << " holds " << held;
        EXPECT_NE(held, r.key) << m.name;
        ++folds;
      }
  EXPECT_GT(folds, 0u);
}

TEST(SkuTable, every_row_names_its_chip_as_cupti_spells_it) {
  for (const auto& s : sku_table()) {
    EXPECT_FALSE(s.chip.empty()) << s.key;
    for (unsigned char c : s.chip) EXPECT_TRUE(std::isupper(c) || std::isdigit(c)) << s.key;
  }
}

TEST(CounterPlan, the_five_chips_of_the_issue_resolve_every_role_or_say_why) {
  RL_REQUIRE_CUPTI();
  for (const char* chip : {"gh100", "gb100", "gb202", "ad102", "ga100"}) {
    const CounterPlan plan = plan_counters(chip);
    expect_consistent(plan);
    // Each of these chips has every quantity the suite needs everywhere.
    for (const auto& r : plan.roles)
      EXPECT_NE(r.status, CounterStatus::missing)
          << plan.chip << " " << r.role->key << ": " << r.rejected.front();
  }
}

TEST(CounterPlan, every_chip_the_sku_table_names_has_a_plan) {
  RL_REQUIRE_CUPTI();
  std::set<std::string_view> chips;
  for (const auto& s : sku_table()) chips.insert(s.chip);
  for (auto chip : chips) expect_consistent(plan_counters(chip));
}

TEST(CounterPlan, chip_names_are_case_insensitive_and_come_back_as_cupti_spells_them) {
  RL_REQUIRE_CUPTI();
  EXPECT_EQ(plan_counters("gh100").chip, "GH100");
  EXPECT_EQ(plan_counters("Gb202").chip, "GB202");
}

TEST(CounterPlan, a_chip_that_spells_a_metric_differently_gets_the_equivalent) {
  RL_REQUIRE_CUPTI();
  const auto gh100 = plan_counters("GH100");
  EXPECT_EQ(role(gh100, "dram_bytes_read").status, CounterStatus::preferred);
  EXPECT_EQ(role(gh100, "dram_bytes_read").metric->name, "dram__bytes_read.sum");
  EXPECT_EQ(role(gh100, "ffma2").status, CounterStatus::absent);  // no packed FP32 on Hopper

  const auto gb202 = plan_counters("GB202");
  const RolePlan& read = role(gb202, "dram_bytes_read");
  EXPECT_EQ(read.status, CounterStatus::equivalent);
  EXPECT_EQ(read.metric->name, "dram__bytes_op_read.sum");
  ASSERT_EQ(read.rejected.size(), 1u);
  EXPECT_EQ(read.rejected[0], "GB202 has no base metric dram__bytes_read");

  EXPECT_EQ(role(plan_counters("GB100"), "ffma2").status, CounterStatus::preferred);
}

// Test-only roles: an invented base metric, an invented rollup of a real one,
// and an invented first choice with a real fallback.
constexpr std::array kInventedBase{CounterMetric{"rl_invented__metric.sum"}};
constexpr std::array kInventedRollup{CounterMetric{"dram__bytes_read.rl_invented"}};
constexpr std::array kInventedThenReal{CounterMetric{"rl_invented__metric.sum"},
                                       CounterMetric{"lts__t_bytes.sum"}};
const std::array kInventedRoles{
    CounterRole{"invented", "invented", "bytes", CounterNeed::every_chip, kInventedBase},
    CounterRole{"invented_rollup", "invented rollup", "bytes", CounterNeed::every_chip,
                kInventedRollup},
    CounterRole{"fallback", "fallback", "bytes", CounterNeed::every_chip, kInventedThenReal},
    CounterRole{"optional", "optional", "bytes", CounterNeed::where_present, kInventedBase,
                "test-only"}};

TEST(CounterPlan, an_invented_metric_is_missing_with_the_reason) {
  RL_REQUIRE_CUPTI();
  const CounterPlan plan = plan_counters("GH100", kInventedRoles);
  ASSERT_EQ(plan.roles.size(), 4u);
  EXPECT_EQ(plan.roles[0].status, CounterStatus::missing);
  EXPECT_EQ(plan.roles[0].metric, nullptr);
  EXPECT_EQ(plan.roles[0].rejected.at(0), "GH100 has no base metric rl_invented__metric");
  EXPECT_EQ(plan.roles[1].status, CounterStatus::missing);
  EXPECT_EQ(plan.roles[1].rejected.at(0),
            "GH100 has dram__bytes_read but not its submetric .rl_invented");
  EXPECT_EQ(plan.roles[2].status, CounterStatus::equivalent);
  EXPECT_EQ(plan.roles[2].metric->name, "lts__t_bytes.sum");
  EXPECT_EQ(plan.roles[3].status, CounterStatus::absent);
  EXPECT_EQ(plan.metric_names(), std::vector<std::string_view>{"lts__t_bytes.sum"});
  EXPECT_EQ(plan.passes, 1u);
}

TEST(CounterPlan, nothing_chosen_takes_no_pass) {
  RL_REQUIRE_CUPTI();
  const CounterPlan plan = plan_counters("GA100", std::span(kInventedRoles).first(1));
  EXPECT_TRUE(plan.metric_names().empty());
  EXPECT_EQ(plan.passes, 0u);
}

TEST(CounterPlan, an_unknown_chip_is_refused_naming_the_known_ones) {
  RL_REQUIRE_CUPTI();
  try {
    plan_counters("XX999");
    FAIL() << "XX999 planned";
  } catch (const CounterPlanError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("unknown chip 'XX999'"), std::string::npos) << what;
    EXPECT_NE(what.find("GH100"), std::string::npos) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
  }
}

TEST(CounterPlan, without_cupti_every_question_is_refused_with_the_reason) {
  if (counter_plan_available()) GTEST_SKIP() << "built with CUPTI: nothing is refused";
  EXPECT_NE(counter_plan_unavailable_reason().find("built without CUPTI"), std::string::npos);
  EXPECT_THROW(plan_counters("GH100"), CounterPlanError);
  EXPECT_THROW(counter_plan_chips(), CounterPlanError);
}

}  // namespace
}  // namespace rl::roofline
