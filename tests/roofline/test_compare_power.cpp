// The gate's false-alarm rate on identical distributions and its power on a
// known slowdown, measured on synthetic results files: each trial is one
// kernel of a BASE/NEW pair of files (written and read back through the
// results.json text), so 200 trials are one compare of two 200-kernel files.
// The rates are properties of the statistic on synthetic data, not GPU
// measurements; docs/roofline.md quotes what these tests print.
#include "fixtures.hpp"
#include "rl/roofline/compare.hpp"
#include "rl/roofline/results_io.hpp"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <map>
#include <numbers>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace rl::roofline {
namespace {

constexpr int kTrials = 200;

// Normal deviates from mt19937_64 (whose output the standard fixes) by
// Box-Muller: std::normal_distribution differs between standard libraries, and
// the documented rates must be the same everywhere.
class Noise {
 public:
  explicit Noise(std::uint64_t seed) : engine_(seed) {}
  double normal() {
    const double u1 = uniform(), u2 = uniform();
    return std::sqrt(-2 * std::log(u1)) * std::cos(2 * std::numbers::pi * u2);
  }
  double uniform() {  // in (0, 1]
    return (static_cast<double>(engine_() >> 11) + 1) * 0x1.0p-53;
  }

 private:
  std::mt19937_64 engine_;
};

struct Scenario {
  int repetitions;
  double noise;             // relative standard deviation of a sample
  double slowdown;          // NEW / BASE true ratio
  double outlier_rate = 0;  // share of samples 1.5x slower (a preempted launch)
  double threshold_pct = 5;
};

Results synthetic_file(const Scenario& s, double scale, Noise& noise) {
  Results r = testing::emulator_fixture();
  r.kernels.clear();
  for (int trial = 0; trial < kTrials; ++trial) {
    std::vector<double> samples;
    for (int i = 0; i < s.repetitions; ++i) {
      double t = 1e-3 * scale * (1 + s.noise * noise.normal());
      if (s.outlier_rate > 0 && noise.uniform() <= s.outlier_rate) t *= 1.5;
      samples.push_back(t);
    }
    r.kernels.push_back(
        testing::kernel_with_samples("trial_" + std::to_string(trial), std::move(samples)));
  }
  return parse_results(results_to_text(r), "synthetic");
}

std::map<Verdict, double> verdict_rates(const Scenario& s, std::uint64_t seed) {
  Noise noise(seed);
  Results base = synthetic_file(s, 1.0, noise);
  Results next = synthetic_file(s, s.slowdown, noise);
  CompareOptions options;
  options.threshold_pct = s.threshold_pct;
  Comparison c = compare_results(base, next, options);
  EXPECT_EQ(c.kernels.size(), static_cast<std::size_t>(kTrials));
  std::map<Verdict, double> rates;
  for (Verdict v :
       {Verdict::same, Verdict::slow, Verdict::fast, Verdict::unsure, Verdict::inconclusive})
    rates[v] = static_cast<double>(c.count(v)) / kTrials;
  std::printf(
      "n=%-2d noise=%.0f%% slowdown=%+.0f%% outliers=%.0f%% threshold=%g%%: SAME %5.1f%%  SLOW "
      "%5.1f%%  FAST %5.1f%%  UNSURE %5.1f%%  INCONCLUSIVE %5.1f%%\n",
      s.repetitions, s.noise * 100, (s.slowdown - 1) * 100, s.outlier_rate * 100, s.threshold_pct,
      rates[Verdict::same] * 100, rates[Verdict::slow] * 100, rates[Verdict::fast] * 100,
      rates[Verdict::unsure] * 100, rates[Verdict::inconclusive] * 100);
  return rates;
}

constexpr double kAlpha = 0.05;

TEST(ComparePower, identical_distributions_are_rarely_called_slow) {
  for (int n : {5, 10})
    for (double noise : {0.01, 0.02}) {
      auto rates = verdict_rates({n, noise, 1.0}, 1000 + n);
      EXPECT_LE(rates[Verdict::slow], kAlpha) << n << " " << noise;
      EXPECT_LE(rates[Verdict::slow] + rates[Verdict::fast], kAlpha);
      // 1-2% noise, 5% threshold: equivalence is shown almost always.
      EXPECT_GE(rates[Verdict::same], 0.9) << n << " " << noise;
    }
}

TEST(ComparePower, the_u_test_alone_keeps_its_level) {
  // Threshold 0: every significant difference counts, so the SLOW + FAST rate
  // is the test's own false-positive rate, which must not exceed alpha.
  for (int n : {5, 10}) {
    auto rates = verdict_rates({n, 0.02, 1.0, 0, 0.0}, 2000 + n);
    EXPECT_LE(rates[Verdict::slow] + rates[Verdict::fast], kAlpha) << n;
    EXPECT_EQ(rates[Verdict::same], 0.0) << "equality can never be proven exactly";
  }
}

TEST(ComparePower, outliers_do_not_raise_the_false_alarm_rate) {
  for (int n : {5, 10}) {
    auto rates = verdict_rates({n, 0.01, 1.0, 0.1}, 3000 + n);
    EXPECT_LE(rates[Verdict::slow], kAlpha) << n;
  }
}

TEST(ComparePower, a_ten_percent_slowdown_is_found) {
  for (double noise : {0.01, 0.02}) {
    auto at_10 = verdict_rates({10, noise, 1.10}, 4000);
    EXPECT_GE(at_10[Verdict::slow], 0.95) << noise;
    EXPECT_EQ(at_10[Verdict::same], 0.0) << noise;
    auto at_5 = verdict_rates({5, noise, 1.10}, 4005);
    EXPECT_GE(at_5[Verdict::slow], 0.80) << noise;
    EXPECT_EQ(at_5[Verdict::same], 0.0) << noise;
  }
}

TEST(ComparePower, a_slowdown_at_or_beyond_the_threshold_is_rarely_called_same) {
  // SAME is an equivalence test at alpha: with a true change of t or more, the
  // (1 - 2 alpha) interval lies inside +-t at most alpha of the time.
  for (int n : {5, 10})
    for (double slowdown : {1.05, 1.07}) {
      auto rates = verdict_rates({n, 0.02, slowdown}, 6000 + n);
      EXPECT_LE(rates[Verdict::same], kAlpha) << n << " " << slowdown;
    }
}

TEST(ComparePower, three_repetitions_are_always_undecided) {
  for (double slowdown : {1.0, 1.10, 1.50}) {
    auto rates = verdict_rates({3, 0.01, slowdown}, 5000);
    EXPECT_EQ(rates[Verdict::inconclusive], 1.0) << slowdown;
  }
}

}  // namespace
}  // namespace rl::roofline
