#include "fixtures.hpp"
#include "rl/roofline/compare.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <random>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

namespace rl::roofline {
namespace {

using testing::kernel_with_samples;
using testing::timed_kernel;

Results run_of(std::vector<KernelResult> kernels) {
  Results r = testing::emulator_fixture();
  r.kernels = std::move(kernels);
  return r;
}

Results run_with(double median, double spread, int repetitions = 20) {
  return run_of({timed_kernel("copy_vec4", median, spread, repetitions)});
}

KernelResult compute_bound(KernelResult k, double sm_clock_mhz) {
  k.bound = Bound::compute;
  k.sm_clock_mhz = sm_clock_mhz;
  return k;
}

// The two-sided exact p by enumerating every assignment of the pooled
// average ranks: the oracle for the rank-sum DP.
double brute_force_p(const std::vector<double>& a, const std::vector<double>& b) {
  std::vector<double> pooled(a);
  pooled.insert(pooled.end(), b.begin(), b.end());
  const std::size_t n = pooled.size();
  std::vector<double> rank(n);
  for (std::size_t i = 0; i < n; ++i) {
    double below = 0, equal = 0;
    for (double v : pooled) {
      below += v < pooled[i];
      equal += v == pooled[i];
    }
    rank[i] = below + (equal + 1) / 2;
  }
  double observed = 0;
  for (std::size_t i = 0; i < a.size(); ++i) observed += rank[i];
  const double mean = static_cast<double>(a.size()) * static_cast<double>(n + 1) / 2;
  int extreme = 0, total = 0;
  for (unsigned mask = 0; mask < (1u << n); ++mask) {
    if (static_cast<std::size_t>(std::popcount(mask)) != a.size()) continue;
    double sum = 0;
    for (std::size_t i = 0; i < n; ++i)
      if (mask & (1u << i)) sum += rank[i];
    ++total;
    extreme += std::abs(sum - mean) >= std::abs(observed - mean) - 1e-9;
  }
  return static_cast<double>(extreme) / total;
}

TEST(MannWhitney, exact_p_matches_enumeration_with_and_without_ties) {
  std::mt19937_64 engine(12);
  for (auto [na, nb] :
       std::vector<std::pair<int, int>>{{3, 3}, {3, 4}, {5, 5}, {2, 7}, {6, 8}, {1, 9}}) {
    for (int trial = 0; trial < 20; ++trial) {
      std::vector<double> a, b;
      // Small integers force ties; every third trial uses continuous values.
      auto draw = [&] {
        return trial % 3 == 0 ? static_cast<double>(engine() % 1000) / 7
                              : static_cast<double>(engine() % 4);
      };
      for (int i = 0; i < na; ++i) a.push_back(draw());
      for (int i = 0; i < nb; ++i) b.push_back(draw());
      MannWhitney exact = mann_whitney(a, b);
      ASSERT_TRUE(exact.exact);
      EXPECT_NEAR(exact.p, brute_force_p(a, b), 1e-12) << na << " vs " << nb << " trial " << trial;
      EXPECT_NEAR(mann_whitney(b, a).p, exact.p, 1e-12) << "the test is symmetric";
    }
  }
}

TEST(MannWhitney, exact_p_of_separated_samples_is_two_over_the_arrangements) {
  std::vector<double> a{1, 2, 3, 4, 5}, b{6, 7, 8, 9, 10};
  EXPECT_NEAR(mann_whitney(a, b).p, 2.0 / 252, 1e-15);  // C(10, 5) = 252
  EXPECT_NEAR(mann_whitney(std::vector<double>{1, 2, 3}, std::vector<double>{4, 5, 6}).p, 0.1,
              1e-15);
  EXPECT_DOUBLE_EQ(mann_whitney(std::vector<double>{2, 2}, std::vector<double>{2, 2}).p, 1.0);
}

TEST(MannWhitney, asymptotic_matches_scipy_and_is_used_above_the_exact_limit) {
  // By hand: U = 25, mu = 12.5, sigma = sqrt(25/12 * 11) = 4.787,
  // z = (25 - 12.5 - 0.5) / 4.787 = 2.507, p = erfc(z / sqrt 2) = 0.01219
  // (scipy.stats.mannwhitneyu(..., method="asymptotic") gives the same).
  std::vector<double> a{1, 2, 3, 4, 5}, b{6, 7, 8, 9, 10};
  auto asymptotic = mann_whitney(a, b, MannWhitneyMethod::asymptotic);
  EXPECT_FALSE(asymptotic.exact);
  EXPECT_NEAR(asymptotic.p, 0.012186, 1e-5);
  std::vector<double> c{1, 3, 5, 7, 9}, d{2, 4, 6, 8, 10};
  EXPECT_NEAR(mann_whitney(c, d, MannWhitneyMethod::asymptotic).p, 0.6761, 1e-4);

  std::vector<double> x, y;
  for (int i = 0; i < 25; ++i) {
    x.push_back(i * 1.0);
    y.push_back(i * 1.0 + 6.5);
  }
  ASSERT_EQ(static_cast<int>(x.size() + y.size()), kExactMannWhitneyMaxSamples);
  auto exact = mann_whitney(x, y);
  EXPECT_TRUE(exact.exact);
  // At the limit the approximation is already close to the exact p.
  EXPECT_NEAR(mann_whitney(x, y, MannWhitneyMethod::asymptotic).p, exact.p, 0.005);
  y.push_back(40);
  EXPECT_FALSE(mann_whitney(x, y).exact);
}

TEST(MannWhitney, smallest_p_and_repetitions_needed) {
  EXPECT_NEAR(smallest_two_sided_p(3, 3), 0.1, 1e-15);
  EXPECT_NEAR(smallest_two_sided_p(4, 4), 2.0 / 70, 1e-15);
  EXPECT_NEAR(smallest_two_sided_p(2, 2), 1.0 / 3, 1e-15);
  EXPECT_EQ(smallest_two_sided_p(1, 1), 1.0);
  EXPECT_EQ(repetitions_to_reach(0.05), 4);
  EXPECT_EQ(repetitions_to_reach(0.01), 5);  // 2/252 = 0.0079
  EXPECT_EQ(repetitions_to_reach(0.1), 4);   // 3 vs 3 gives exactly 0.1, not below
}

std::vector<double> sorted_differences(const std::vector<double>& a, const std::vector<double>& b) {
  std::vector<double> d;
  for (double x : a)
    for (double y : b) d.push_back(y - x);
  std::sort(d.begin(), d.end());
  return d;
}

TEST(ShiftInterval, picks_the_order_statistics_of_the_differences) {
  std::mt19937_64 engine(7);
  std::uniform_real_distribution<double> uniform(0, 1);
  std::vector<double> a, b;
  for (int i = 0; i < 5; ++i) a.push_back(uniform(engine));
  for (int i = 0; i < 5; ++i) b.push_back(uniform(engine) + 0.3);
  auto d = sorted_differences(a, b);
  // 5 vs 5: P(U <= 2) = 4/252 <= 0.025 < P(U <= 3) = 7/252, so [D(3), D(23)];
  // at 90%: P(U <= 4) = 12/252 <= 0.05 < P(U <= 5) = 19/252, so [D(5), D(21)].
  auto i95 = shift_interval(a, b, 0.05);
  ASSERT_TRUE(i95);
  EXPECT_NEAR(i95->low, d[2], 1e-12);
  EXPECT_NEAR(i95->high, d[22], 1e-12);
  auto i90 = shift_interval(a, b, 0.10);
  EXPECT_NEAR(i90->low, d[4], 1e-12);
  EXPECT_NEAR(i90->high, d[20], 1e-12);
  // 3 vs 3 cannot make a 95% interval: P(U = 0) = 1/20 > 0.025.
  EXPECT_FALSE(shift_interval(std::vector<double>{1, 2, 3}, std::vector<double>{1, 2, 3}, 0.05));

  // Above the exact limit: c = floor(m/2 - 1/2 - 1.96 sqrt(m (n+1) / 12)) = 316 at 30 vs 30.
  std::vector<double> x, y;
  for (int i = 0; i < 30; ++i) {
    x.push_back(uniform(engine));
    y.push_back(uniform(engine));
  }
  auto big = shift_interval(x, y, 0.05);
  auto dd = sorted_differences(x, y);
  EXPECT_NEAR(big->low, dd[316], 1e-12);
  EXPECT_NEAR(big->high, dd[900 - 317], 1e-12);
}

TEST(RelativeNoise, is_a_robust_spread_over_the_median) {
  // median 3, |deviations| {2, 1, 0, 1, 97}: MAD 1, whatever the outlier.
  EXPECT_NEAR(relative_noise(std::vector<double>{1, 2, 3, 4, 100}), 1.4826 / 3, 1e-12);
  EXPECT_EQ(relative_noise(std::vector<double>{5, 5, 5}), 0.0);
}

TEST(Compare, identical_runs_are_same_and_pass) {
  Comparison c = compare_results(run_with(1e-3, 0.002), run_with(1e-3, 0.002), {});
  ASSERT_EQ(c.kernels.size(), 1u);
  EXPECT_EQ(c.kernels[0].verdict, Verdict::same) << c.kernels[0].note;
  EXPECT_EQ(c.exit_status(), GateExit::pass);
}

TEST(Compare, ten_percent_slower_with_tight_spread_is_slow_and_fails) {
  Comparison c = compare_results(run_with(1e-3, 0.002), run_with(1.1e-3, 0.002), {});
  EXPECT_EQ(c.kernels[0].verdict, Verdict::slow);
  EXPECT_NEAR(c.kernels[0].change_pct, 10.0, 1e-6);
  EXPECT_LT(c.kernels[0].test.p, 0.05);
  EXPECT_TRUE(c.kernels[0].test.exact);
  EXPECT_EQ(c.exit_status(), GateExit::fail);
}

TEST(Compare, ten_percent_faster_is_fast_and_passes) {
  Comparison c = compare_results(run_with(1e-3, 0.002), run_with(0.9e-3, 0.002), {});
  EXPECT_EQ(c.kernels[0].verdict, Verdict::fast);
  EXPECT_EQ(c.exit_status(), GateExit::pass);
}

TEST(Compare, three_repetitions_are_inconclusive_never_same_or_slow) {
  for (double scale : {1.0, 1.5}) {
    Comparison c = compare_results(run_with(1e-3, 0.002, 3), run_with(1e-3 * scale, 0.002, 3), {});
    EXPECT_EQ(c.kernels[0].verdict, Verdict::inconclusive) << scale;
    EXPECT_EQ(c.exit_status(), GateExit::undecided);
    EXPECT_NEAR(c.kernels[0].smallest_p, 0.1, 1e-12);
    EXPECT_NE(c.kernels[0].note.find("smallest possible p is 0.1"), std::string::npos)
        << c.kernels[0].note;
    EXPECT_NE(c.kernels[0].note.find("at least 4 per side"), std::string::npos);
  }
  // 3 against 20 can reach significance: not inconclusive.
  Comparison c = compare_results(run_with(1e-3, 0.002, 3), run_with(1.5e-3, 0.002, 20), {});
  EXPECT_EQ(c.kernels[0].verdict, Verdict::slow);
}

TEST(Compare, a_noisy_kernel_is_neither_same_nor_slow_at_a_one_percent_gap) {
  CompareOptions tight;
  tight.threshold_pct = 1;
  for (int repetitions : {10, 20}) {
    // Spread 0.027 per step: noise 1.4826 x 0.027 = 4%.
    Results base = run_with(1e-3, 0.027, repetitions);
    for (double scale : {1.0, 1.01, 1.02}) {
      Comparison c = compare_results(base, run_with(1e-3 * scale, 0.027, repetitions), tight);
      EXPECT_EQ(c.kernels[0].verdict, Verdict::unsure) << repetitions << " x " << scale;
      EXPECT_NEAR(c.kernels[0].base.noise, 0.04, 0.001);
      EXPECT_NE(c.kernels[0].note.find("noise 4.0% / 4.0%"), std::string::npos)
          << c.kernels[0].note;
      EXPECT_EQ(c.exit_status(), GateExit::undecided);
    }
  }
  // The same kernels with 0.2% noise are SAME at 1%.
  EXPECT_EQ(
      compare_results(run_with(1e-3, 0.0013), run_with(1e-3, 0.0013), tight).kernels[0].verdict,
      Verdict::same);
}

TEST(Compare, a_change_beyond_the_threshold_that_is_not_significant_is_unsure) {
  // 2 vs 20 can reach p < 0.05 (2 / C(22, 2) = 0.009); these overlap: the base
  // ranks 5 and 7 of 22 give p = 0.26 for a median change of +8.9%.
  Results base = run_of({kernel_with_samples("copy_vec4", {1.0e-3, 1.02e-3})});
  std::vector<double> samples;
  for (int i = 0; i < 20; ++i) samples.push_back((0.95 + 0.3 * i / 19) * 1e-3);
  Comparison c = compare_results(base, run_of({kernel_with_samples("copy_vec4", samples)}), {});
  EXPECT_GT(c.kernels[0].change_pct, 5);
  EXPECT_GE(c.kernels[0].test.p, 0.05);
  EXPECT_EQ(c.kernels[0].verdict, Verdict::unsure);
  EXPECT_NE(c.kernels[0].note.find("not significant"), std::string::npos) << c.kernels[0].note;
  EXPECT_EQ(c.exit_status(), GateExit::undecided);
}

TEST(Compare, identical_times_are_same_whatever_the_clocks_read) {
  for (double new_clock : {900.0, 1100.0, 1500.0}) {
    Comparison c = compare_results(
        run_of({compute_bound(timed_kernel("gemm", 1e-3, 0.002, 20), 1000)}),
        run_of({compute_bound(timed_kernel("gemm", 1e-3, 0.002, 20), new_clock)}), {});
    EXPECT_EQ(c.kernels[0].verdict, Verdict::same) << new_clock;
    ASSERT_TRUE(c.kernels[0].clock_ratio);
    EXPECT_NEAR(*c.kernels[0].clock_ratio, new_clock / 1000, 1e-12);
    EXPECT_EQ(c.exit_status(), GateExit::pass);
    EXPECT_NE(c.kernels[0].note.find("the verdict rests on the times"), std::string::npos);
  }
}

TEST(Compare, a_slowdown_with_a_clock_drop_is_slow_and_the_clock_explains_it) {
  // 10% lower clock, same cycles: every time grows by 1000/900.
  Comparison c = compare_results(
      run_of({compute_bound(timed_kernel("gemm", 1e-3, 0.002, 20), 1000)}),
      run_of({compute_bound(timed_kernel("gemm", 1e-3 * 1000 / 900, 0.002, 20), 900)}), {});
  EXPECT_NEAR(c.kernels[0].ratio, 1.111, 1e-3);
  EXPECT_NEAR(*c.kernels[0].clock_ratio, 1.0, 1e-9);
  EXPECT_EQ(c.kernels[0].verdict, Verdict::slow);
  EXPECT_EQ(c.exit_status(), GateExit::fail);
  EXPECT_NE(c.kernels[0].note.find("the clock explains it"), std::string::npos)
      << c.kernels[0].note;
}

TEST(Compare, a_slowdown_at_the_same_clock_is_confirmed_in_cycles) {
  Comparison c =
      compare_results(run_of({compute_bound(timed_kernel("gemm", 1e-3, 0.002, 20), 1000)}),
                      run_of({compute_bound(timed_kernel("gemm", 1.1e-3, 0.002, 20), 1000)}), {});
  EXPECT_EQ(c.kernels[0].verdict, Verdict::slow);
  EXPECT_NE(c.kernels[0].note.find("confirmed in cycles"), std::string::npos);
}

TEST(Compare, clocks_normalise_only_compute_bound_kernels_with_their_own_clock) {
  KernelResult memory = compute_bound(timed_kernel("copy", 1e-3, 0.002, 20), 1000);
  memory.bound = Bound::memory;
  Comparison c = compare_results(run_of({memory}), run_of({memory}), {});
  EXPECT_FALSE(c.kernels[0].clock_ratio);
  // Only the context's clock (taken outside the kernel's samples): not used.
  Results base = run_with(1e-3, 0.002), next = run_with(1e-3, 0.002);
  base.kernels[0].bound = next.kernels[0].bound = Bound::compute;
  base.context.clocks.sm_mhz = 1000;
  next.context.clocks.sm_mhz = 900;
  EXPECT_FALSE(compare_results(base, next, {}).kernels[0].clock_ratio);
}

TEST(Compare, a_kernel_that_failed_or_errored_in_new_fails_the_gate) {
  Results base = run_of({timed_kernel("a", 1e-3, 0.002, 20), timed_kernel("b", 1e-3, 0.002, 20),
                         timed_kernel("c", 1e-3, 0.002, 20)});
  Results next = base;
  next.kernels[0].status = Status::failed_validation;
  next.kernels[0].validated = false;
  next.kernels[0].error = "element 3: got NaN";
  next.kernels[0].time_s.reset();
  next.kernels[1].status = Status::error;
  next.kernels[1].error = "launch failed";
  next.kernels[1].time_s.reset();
  next.kernels[2].validated = false;  // timed, but not validated
  CompareOptions allow_all;
  allow_all.allow_missing = {".*"};  // allows what was removed, never what failed
  Comparison c = compare_results(base, next, allow_all);
  ASSERT_EQ(c.failures.size(), 3u);
  EXPECT_NE(c.failures[0].reason.find("failed validation in NEW: element 3"), std::string::npos);
  EXPECT_NE(c.failures[1].reason.find("errored in NEW: launch failed"), std::string::npos);
  EXPECT_NE(c.failures[2].reason.find("failed validation"), std::string::npos);
  EXPECT_TRUE(c.kernels.empty());
  EXPECT_EQ(c.exit_status(), GateExit::fail);
}

TEST(Compare, a_kernel_missing_or_not_run_in_new_fails_unless_allowed) {
  Results base =
      run_of({timed_kernel("gelu_naive", 1e-3, 0.002, 20),
              timed_kernel("gelu_fused", 1e-3, 0.002, 20), timed_kernel("copy", 1e-3, 0.002, 20)});
  Results next = base;
  next.kernels.erase(next.kernels.begin());  // gelu_naive removed
  next.kernels[0].status = Status::skipped;  // gelu_fused did not fit this time
  next.kernels[0].error = "needs 9 GiB";
  next.kernels[0].time_s.reset();
  Comparison strict = compare_results(base, next, {});
  ASSERT_EQ(strict.failures.size(), 2u);
  EXPECT_EQ(strict.failures[0].reason, "missing from NEW");
  EXPECT_EQ(strict.failures[1].reason, "not run in NEW (skipped: needs 9 GiB)");
  EXPECT_EQ(strict.exit_status(), GateExit::fail);

  CompareOptions allow;
  allow.allow_missing = {"naive$", "^gelu_f"};
  Comparison allowed = compare_results(base, next, allow);
  EXPECT_TRUE(allowed.failures.empty());
  EXPECT_EQ(allowed.allowed.size(), 2u);
  EXPECT_EQ(allowed.exit_status(), GateExit::pass);

  allow.allow_missing = {"naive$"};
  EXPECT_EQ(compare_results(base, next, allow).failures.size(), 1u);

  allow.allow_missing = {"("};
  EXPECT_THROW(compare_results(base, next, allow), CompareInputError);
}

TEST(Compare, kernels_only_in_new_or_untimed_in_base_are_listed_not_judged) {
  Results base = testing::emulator_fixture();  // its layernorm_f32_broken failed validation
  Results next = base;
  next.kernels[3].status = Status::ok;
  next.kernels[3].validated = true;
  next.kernels[3].time_s = timed_kernel("x", 1e-3, 0.002, 10).time_s;
  next.kernels.push_back(timed_kernel("brand_new", 1e-3, 0.002, 10));
  Comparison c = compare_results(base, next, {});
  EXPECT_EQ(c.only_in_new, std::vector<std::string>{"brand_new [n=1048576]"});
  ASSERT_EQ(c.not_compared.size(), 1u);
  EXPECT_NE(c.not_compared[0].find("layernorm_f32_broken"), std::string::npos);
  EXPECT_TRUE(c.failures.empty());
  EXPECT_EQ(c.kernels.size(), 3u);
}

TEST(Compare, duplicate_name_and_shape_is_refused_in_one_line) {
  Results base = run_with(1e-3, 0.002);
  Results doubled = base;
  doubled.kernels.push_back(doubled.kernels[0]);
  try {
    compare_results(base, doubled, {}, "base.json", "new.json");
    FAIL() << "duplicates accepted";
  } catch (const CompareInputError& e) {
    std::string what = e.what();
    EXPECT_EQ(what.find('\n'), std::string::npos);
    EXPECT_NE(what.find("new.json: kernel copy_vec4 [n=1048576] appears twice (/kernels/0 and "
                        "/kernels/1)"),
              std::string::npos)
        << what;
  }
  // The same name at another shape is another kernel.
  doubled.kernels[1].shape = {{"n", 42}};
  EXPECT_NO_THROW(compare_results(base, doubled, {}));
}

TEST(Compare, samples_that_disagree_with_the_stated_median_or_count_are_refused) {
  Results good = run_with(1e-3, 0.002);
  auto refused = [&](Results bad, const std::string& fragment) {
    try {
      compare_results(good, bad, {}, "base.json", "new.json");
      ADD_FAILURE() << "accepted; expected " << fragment;
    } catch (const CompareInputError& e) {
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("new.json: /kernels/0/time_s"), std::string::npos);
    }
  };
  Results bad = good;
  bad.kernels[0].time_s->median *= 1.01;
  refused(bad, "states median");
  bad = good;
  bad.kernels[0].time_s->repetitions = 21;
  refused(bad, "states 21 repetitions but holds 20 samples");
  bad = good;
  bad.kernels[0].time_s->samples.clear();
  bad.kernels[0].time_s->repetitions = 0;
  refused(bad, "no samples");
  bad = good;
  bad.kernels[0].time_s->samples[3] = -1;
  refused(bad, "sample 3 is -1");
}

TEST(Compare, another_device_backend_preset_or_l2_policy_is_refused_unless_cross_device) {
  Results base = run_with(1e-3, 0.002);
  for (auto change : {+[](Results& r) { r.context.device.name = "NVIDIA H100 80GB HBM3"; },
                      +[](Results& r) { r.context.backend = Backend::cuda; },
                      +[](Results& r) { r.context.size_preset = "large"; },
                      +[](Results& r) { r.context.l2_flushed = false; }}) {
    Results next = base;
    change(next);
    EXPECT_THROW(compare_results(base, next, {}), CompareInputError);
    CompareOptions cross;
    cross.cross_device = true;
    Comparison c = compare_results(base, next, cross);
    EXPECT_FALSE(c.cross_device_note.empty());
    EXPECT_EQ(c.exit_status(), GateExit::pass);
  }
  // Another card of the same model is the same device.
  Results next = base;
  next.context.device.uuid = "GPU-other";
  EXPECT_NO_THROW(compare_results(base, next, {}));
}

TEST(Compare, summary_gives_the_geometric_mean_ratio_and_the_exit_precedence) {
  Results base = run_of({timed_kernel("a", 1e-3, 0.002, 20), timed_kernel("b", 1e-3, 0.002, 20)});
  Results next =
      run_of({timed_kernel("a", 1.21e-3, 0.002, 20), timed_kernel("b", 1e-3, 0.002, 20)});
  Comparison c = compare_results(base, next, {});
  EXPECT_NEAR(*c.geometric_mean_ratio(), 1.1, 1e-9);
  EXPECT_EQ(c.exit_status(), GateExit::fail);

  // SLOW beats UNSURE; UNSURE beats SAME.
  next.kernels[1] = timed_kernel("b", 1e-3, 0.1, 20);
  c = compare_results(base, next, {});
  EXPECT_EQ(c.kernels[1].verdict, Verdict::unsure);
  EXPECT_EQ(c.exit_status(), GateExit::fail);
  next.kernels[0] = timed_kernel("a", 1e-3, 0.002, 20);
  EXPECT_EQ(compare_results(base, next, {}).exit_status(), GateExit::undecided);

  // Nothing timed in both runs decides nothing.
  EXPECT_EQ(compare_results(run_of({}), run_of({}), {}).exit_status(), GateExit::undecided);
  EXPECT_FALSE(compare_results(run_of({}), run_of({}), {}).geometric_mean_ratio());
}

TEST(Compare, threshold_decides_what_counts_as_a_change) {
  CompareOptions loose;
  loose.threshold_pct = 15;
  Comparison c = compare_results(run_with(1e-3, 0.002), run_with(1.1e-3, 0.002), loose);
  EXPECT_EQ(c.kernels[0].verdict, Verdict::same);
}

TEST(Compare, markdown_and_json_carry_verdicts_summary_and_context) {
  Results base = run_with(1e-3, 0.002), next = run_with(1.1e-3, 0.002);
  base.context.clocks.sm_mhz = 1000;
  next.context.clocks.sm_mhz = 900;
  Comparison c = compare_results(base, next, {});
  std::string md = comparison_markdown(c);
  EXPECT_NE(md.find("| copy_vec4 |"), std::string::npos) << md;
  EXPECT_NE(md.find("**SLOW**"), std::string::npos);
  EXPECT_NE(md.find("Geometric-mean ratio over 1 kernel(s): 1.1000 (+10.00%)"), std::string::npos);
  EXPECT_NE(md.find("| SM clock | 1000 MHz | 900 MHz |"), std::string::npos);
  EXPECT_NE(md.find("→ exit 1."), std::string::npos);
  auto j = comparison_json(c);
  EXPECT_EQ(j["kernels"][0]["verdict"], "SLOW");
  EXPECT_EQ(j["kernels"][0]["p_exact"], true);
  EXPECT_EQ(j["exit_code"], 1);
  EXPECT_EQ(j["verdict_counts"]["SLOW"], 1);
  EXPECT_NEAR(j["geometric_mean_ratio"].get<double>(), 1.1, 1e-9);
}

}  // namespace
}  // namespace rl::roofline
