// Pins the Google Benchmark semantics the harness relies on: with manual time,
// a kIsIterationInvariantRate counter reports value x iterations / total
// manual time, kIsRate reports value / total manual time, and a run's
// real_accumulated_time is the sum of SetIterationTime.  If a Google Benchmark
// upgrade changes any of this, every FLOP/s and B/s we report would be wrong.
#include "rl/bench/gbench.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <optional>
#include <string>
#include <vector>

namespace {

using GbRun = benchmark::BenchmarkReporter::Run;

class CapturingReporter : public benchmark::BenchmarkReporter {
 public:
  bool ReportContext(const Context&) override { return true; }
  void ReportRuns(const std::vector<GbRun>& runs) override {
    all.insert(all.end(), runs.begin(), runs.end());
  }
  std::vector<GbRun> all;
};

// Registers `body` under `name`, runs only it, returns every reported run.
template <typename Body>
std::vector<GbRun> run_fake_benchmark(const std::string& name, Body body, int iterations,
                                      int repetitions) {
  benchmark::ClearRegisteredBenchmarks();
  benchmark::RegisterBenchmark(name.c_str(), body)
      ->UseManualTime()
      ->Iterations(iterations)
      ->Repetitions(repetitions);
  CapturingReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter, "^" + name + "/");  // "/iterations:N/..."
  benchmark::ClearRegisteredBenchmarks();
  return reporter.all;
}

TEST(GoogleBenchmarkCounters, iteration_invariant_rate_is_value_times_iterations_over_manual_time) {
  const auto runs = run_fake_benchmark(
      "fake_half_second_iterations",
      [](benchmark::State& state) {
        for (auto _ : state) state.SetIterationTime(0.5);
        state.counters["invariant_rate"] =
            benchmark::Counter(10.0, benchmark::Counter::kIsIterationInvariantRate);
        state.counters["rate"] = benchmark::Counter(10.0, benchmark::Counter::kIsRate);
      },
      4, 1);
  ASSERT_EQ(runs.size(), 1u);
  const GbRun& run = runs.front();
  EXPECT_EQ(run.iterations, 4);
  EXPECT_DOUBLE_EQ(run.real_accumulated_time, 2.0);  // 4 x 0.5 s of manual time
  // 10 per iteration x 4 iterations / 2 s, independent of the iteration count.
  EXPECT_DOUBLE_EQ(run.counters.at("invariant_rate").value, 20.0);
  // kIsRate alone divides the single value by the total time: 10 / 2 s.
  EXPECT_DOUBLE_EQ(run.counters.at("rate").value, 5.0);
}

// The console shows these values as they are: a figure named "FLOP/s" is a
// rate already, never suffixed with Google Benchmark's "/s" (kIsRate).
TEST(GoogleBenchmarkCounters, harness_counters_are_plain_values_equal_to_the_results_figures) {
  rl::roofline::KernelResult timed;
  timed.flops = 1e6;
  timed.bytes_model = 8e6;
  timed.achieved_flops_per_s = 1e9;  // 1e6 FLOP in 1 ms
  timed.achieved_bytes_per_s = 8e9;
  const auto runs = run_fake_benchmark(
      "fake_harness_counters",
      [&timed](benchmark::State& state) {
        for (auto _ : state) state.SetIterationTime(1e-3);
        rl::bench::set_counters(state.counters, timed, 25.0);
      },
      10, 1);
  ASSERT_EQ(runs.size(), 1u);
  const auto& counters = runs.front().counters;
  for (const char* name : {"FLOP/s", "bytes/s", "intensity", "pct_of_roof"})
    EXPECT_EQ(counters.at(name).flags, benchmark::Counter::kDefaults) << name;
  EXPECT_DOUBLE_EQ(counters.at("FLOP/s").value, 1e9);
  EXPECT_DOUBLE_EQ(counters.at("bytes/s").value, 8e9);
  EXPECT_DOUBLE_EQ(counters.at("intensity").value, 0.125);
  EXPECT_DOUBLE_EQ(counters.at("pct_of_roof").value, 25.0);
}

TEST(GoogleBenchmarkCounters, no_pct_of_roof_without_a_roof_or_when_not_finite) {
  for (const std::optional<double> pct : {std::optional<double>{}, std::optional<double>{NAN}}) {
    const auto runs = run_fake_benchmark(
        "fake_no_roof",
        [pct](benchmark::State& state) {
          for (auto _ : state) state.SetIterationTime(1e-3);
          rl::bench::set_counters(state.counters, rl::roofline::KernelResult{}, pct);
        },
        2, 1);
    ASSERT_EQ(runs.size(), 1u);
    EXPECT_EQ(runs.front().counters.count("pct_of_roof"), 0u);
  }
}

TEST(GoogleBenchmarkRuns, repetition_seconds_are_per_iteration_manual_times_without_aggregates) {
  int repetition = 0;
  const auto runs = run_fake_benchmark(
      "fake_three_repetitions",
      [&repetition](benchmark::State& state) {
        const double seconds = 1e-3 * (1 + repetition++);  // 1 ms, 2 ms, 3 ms
        for (auto _ : state) state.SetIterationTime(seconds);
      },
      5, 3);
  // Three iteration runs plus the mean/median/stddev/cv aggregates.
  ASSERT_GT(runs.size(), 3u);
  const std::vector<double> seconds = rl::bench::repetition_seconds(runs);
  ASSERT_EQ(seconds.size(), 3u);
  EXPECT_NEAR(seconds[0], 1e-3, 1e-12);
  EXPECT_NEAR(seconds[1], 2e-3, 1e-12);
  EXPECT_NEAR(seconds[2], 3e-3, 1e-12);
}

TEST(GoogleBenchmarkRuns, errored_benchmark_yields_no_repetition_seconds) {
  const auto runs = run_fake_benchmark(
      "fake_failed_validation",
      [](benchmark::State& state) { state.SkipWithError("validation failed"); }, 1, 1);
  ASSERT_FALSE(runs.empty());
  EXPECT_TRUE(runs.front().error_occurred);
  EXPECT_EQ(runs.front().error_message, "validation failed");
  EXPECT_TRUE(rl::bench::repetition_seconds(runs).empty());
}

TEST(BenchmarkFilter, selects_like_google_benchmark) {
  using rl::bench::matches_benchmark_filter;
  const std::string name = "tc_bf16_wgmma/M=8192/manual_time";
  EXPECT_TRUE(matches_benchmark_filter(name, ""));
  EXPECT_TRUE(matches_benchmark_filter(name, "all"));
  EXPECT_TRUE(matches_benchmark_filter(name, "^tc_"));
  EXPECT_TRUE(matches_benchmark_filter(name, "bf16|fp8"));
  EXPECT_FALSE(matches_benchmark_filter(name, "^scale_"));
  EXPECT_FALSE(matches_benchmark_filter(name, "-wgmma"));
  EXPECT_TRUE(matches_benchmark_filter(name, "-^scale"));
}

}  // namespace
