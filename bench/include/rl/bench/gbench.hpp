// Glue to Google Benchmark: the counters each benchmark reports, and the
// display reporter that also hands every finished benchmark's runs to the
// harness (which turns them into results.json records).
#pragma once

#include "rl/roofline/results.hpp"

#include <benchmark/benchmark.h>

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace rl::bench {

// Counters of one repetition: plain values whose names carry their units,
// the same figures results.json gives (there for the median repetition):
//   "FLOP/s"      flops / time
//   "bytes/s"     bytes_model / time
//   "intensity"   flops / bytes_model (FLOP/B)
//   "pct_of_roof" % of roof (0..100), only when the ceilings it needs are known
// `timed` carries the cost and this repetition's time (set_timing).  Plain
// values, not Google Benchmark rates, so the console prints no "/s" after
// a figure that already is one.
void set_counters(benchmark::UserCounters& counters, const roofline::KernelResult& timed,
                  std::optional<double> pct_of_roof);

// Seconds per iteration of each repetition of one benchmark (iteration runs
// without error, in repetition order); aggregates are skipped.
std::vector<double> repetition_seconds(const std::vector<benchmark::BenchmarkReporter::Run>& runs);

// Whether Google Benchmark's --benchmark_filter selects `name`, as it decides:
// "" and "all" select everything, a leading '-' negates, otherwise an
// extended regular expression searched in the name.
bool matches_benchmark_filter(const std::string& name, const std::string& filter);

// The error messages of a benchmark the run left out: skipped because the
// run was interrupted, or because --budget was spent before it started.
inline constexpr const char* kInterruptedMessage = "interrupted";
inline constexpr const char* kBudgetMessage = "not reached: budget";

// Forwards runs to `display` (the console, or whatever --benchmark_format
// chose; only aggregates, where there are any, with `aggregates_only`) and
// calls `on_runs` with every run of each finished benchmark.  `display` is not
// owned: benchmark::CreateDefaultDisplayReporter() hands out one
// process-lifetime object (a function-local static), so deleting it would
// leave the next run in the same process with a dangling reporter.
class CollectingReporter : public benchmark::BenchmarkReporter {
 public:
  using Callback = std::function<void(const std::vector<Run>&)>;
  CollectingReporter(benchmark::BenchmarkReporter& display, bool aggregates_only, Callback on_runs)
      : display_(&display), aggregates_only_(aggregates_only), on_runs_(std::move(on_runs)) {}

  // Also explains Debian's "Library was built as DEBUG" warning, when this
  // Google Benchmark prints it.
  bool ReportContext(const Context& context) override;
  void ReportRuns(const std::vector<Run>& runs) override;
  void Finalize() override { display_->Finalize(); }

 private:
  benchmark::BenchmarkReporter* display_;
  bool aggregates_only_;
  Callback on_runs_;
  std::string hidden_;  // the benchmark an interrupt cut short: its aggregates are hidden too
};

}  // namespace rl::bench
