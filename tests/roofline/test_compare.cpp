#include "fixtures.hpp"
#include "rl/roofline/compare.hpp"

#include <gtest/gtest.h>

namespace rl::roofline {
namespace {

Results run_with(double median, double spread, double clock_mhz, int repetitions = 20) {
  Results r = testing::emulator_fixture();
  r.kernels = {testing::timed_kernel("copy_vec4", median, spread, repetitions)};
  r.context.clocks.sm_mhz = clock_mhz;
  return r;
}

TEST(MannWhitney, matches_scipy_asymptotic_two_sided) {
  // By hand: U = 25, mu = 12.5, sigma = sqrt(25/12 * 11) = 4.787,
  // z = (25 - 12.5 - 0.5) / 4.787 = 2.507, p = erfc(z / sqrt 2) = 0.01219
  // (scipy.stats.mannwhitneyu(..., method="asymptotic") gives the same).
  std::vector<double> a{1, 2, 3, 4, 5}, b{6, 7, 8, 9, 10};
  EXPECT_NEAR(*mann_whitney_p(a, b), 0.012186, 1e-5);
  // Interleaved samples: U = 15, z = (15 - 12.5 - 0.5) / 4.787 = 0.418, p = 0.676.
  std::vector<double> c{1, 3, 5, 7, 9}, d{2, 4, 6, 8, 10};
  EXPECT_NEAR(*mann_whitney_p(c, d), 0.6761, 1e-4);
  EXPECT_FALSE(mann_whitney_p(std::vector<double>{1}, b).has_value());
  EXPECT_DOUBLE_EQ(*mann_whitney_p(std::vector<double>{2, 2}, std::vector<double>{2, 2}), 1.0);
}

TEST(Compare, identical_runs_are_same_and_pass) {
  Comparison c = compare_results(run_with(1e-3, 0.002, 1000), run_with(1e-3, 0.002, 1000), {});
  ASSERT_EQ(c.kernels.size(), 1u);
  EXPECT_EQ(c.kernels[0].verdict, Verdict::same);
  EXPECT_EQ(c.exit_code(), 0);
}

TEST(Compare, ten_percent_slower_with_tight_spread_is_slow_and_fails) {
  Comparison c = compare_results(run_with(1e-3, 0.002, 1000), run_with(1.1e-3, 0.002, 1000), {});
  EXPECT_EQ(c.kernels[0].verdict, Verdict::slow);
  EXPECT_NEAR(c.kernels[0].change_pct, 10.0, 1e-6);
  EXPECT_LT(*c.kernels[0].p_value, 0.05);
  EXPECT_EQ(c.exit_code(), 1);
}

TEST(Compare, ten_percent_faster_is_fast_and_passes) {
  Comparison c = compare_results(run_with(1e-3, 0.002, 1000), run_with(0.9e-3, 0.002, 1000), {});
  EXPECT_EQ(c.kernels[0].verdict, Verdict::fast);
  EXPECT_EQ(c.exit_code(), 0);
}

TEST(Compare, lower_clock_with_equal_cycles_is_same) {
  Comparison c =
      compare_results(run_with(1e-3, 0.002, 1000), run_with(1e-3 * 1000 / 900, 0.002, 900), {});
  EXPECT_NEAR(c.kernels[0].ratio, 1.111, 1e-3);
  EXPECT_NEAR(*c.kernels[0].clock_ratio, 1.0, 1e-9);
  EXPECT_EQ(c.kernels[0].verdict, Verdict::same);
  EXPECT_EQ(c.exit_code(), 0);
  ASSERT_FALSE(c.context.empty());
  EXPECT_EQ(c.context[0].field, "SM clock");
}

TEST(Compare, large_change_with_overlapping_noise_is_unsure) {
  // Two samples per side cannot reach p < 0.05 whatever the change.
  Comparison c =
      compare_results(run_with(1e-3, 0.01, 1000, 2), run_with(1.2e-3, 0.01, 1000, 2), {});
  EXPECT_EQ(c.kernels[0].verdict, Verdict::unsure);
  EXPECT_EQ(c.exit_code(), 0);
}

TEST(Compare, threshold_decides_what_counts_as_a_change) {
  CompareOptions loose;
  loose.threshold_pct = 15;
  Comparison c = compare_results(run_with(1e-3, 0.002, 1000), run_with(1.1e-3, 0.002, 1000), loose);
  EXPECT_EQ(c.kernels[0].verdict, Verdict::same);
}

TEST(Compare, unmatched_and_untimed_kernels_are_listed_not_judged) {
  Results base = testing::emulator_fixture();
  Results next = testing::emulator_fixture();
  next.kernels.erase(next.kernels.begin());  // naive gone
  next.kernels[0].shape = {{"n", 42}};       // fused: different shape
  Comparison c = compare_results(base, next, {});
  EXPECT_EQ(c.only_in_base.size(), 2u);
  EXPECT_EQ(c.only_in_new.size(), 1u);
  ASSERT_EQ(c.not_comparable.size(), 1u);  // the failed-validation kernel
  EXPECT_NE(c.not_comparable[0].find("layernorm_f32_broken"), std::string::npos);
}

TEST(Compare, markdown_and_json_carry_verdicts_and_context) {
  Comparison c = compare_results(run_with(1e-3, 0.002, 1000), run_with(1.1e-3, 0.002, 900), {});
  std::string md = comparison_markdown(c);
  EXPECT_NE(md.find("| copy_vec4 |"), std::string::npos) << md;
  EXPECT_NE(md.find("SM clock"), std::string::npos);
  auto j = comparison_json(c);
  EXPECT_EQ(j["kernels"][0]["verdict"], "SAME");  // 1.1 x 0.9 = 0.99 in cycles
  EXPECT_EQ(j["exit_code"], 0);
}

}  // namespace
}  // namespace rl::roofline
