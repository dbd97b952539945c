// Glue to Google Benchmark: the counters each benchmark reports, and the
// display reporter that also hands every finished benchmark's runs to the
// harness (which turns them into results.json records).
#pragma once

#include "rl/roofline/cost.hpp"

#include <benchmark/benchmark.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace rl::bench {

// Counters of one benchmark, rates over GPU time.  Each is declared as a value
// per iteration with Counter::kIsIterationInvariantRate, which Google Benchmark
// turns into value x iterations / total manual time (the sum of the
// SetIterationTime seconds), pinned by tests/bench/gbench_counter_test.cpp:
//   "FLOP/s"      flops / time
//   "bytes/s"     bytes_model / time
//   "intensity"   flops / bytes_model (FLOP/B), a plain value
//   "pct_of_roof" % of roof, only when ceilings are known: what the kernel
//                 would reach at 1 s per iteration (pct_of_roof_at_one_second),
//                 divided by the time like the rates
void set_counters(benchmark::UserCounters& counters, const roofline::Cost& cost,
                  std::optional<double> pct_of_roof_at_one_second);

// Seconds per iteration of each repetition of one benchmark (iteration runs
// without error, in repetition order); aggregates are skipped.
std::vector<double> repetition_seconds(const std::vector<benchmark::BenchmarkReporter::Run>& runs);

// Whether Google Benchmark's --benchmark_filter selects `name`, as it decides:
// "" and "all" select everything, a leading '-' negates, otherwise an
// extended regular expression searched in the name.
bool matches_benchmark_filter(const std::string& name, const std::string& filter);

// Forwards runs to `display` (the console, or whatever --benchmark_format
// chose; only aggregates, where there are any, with `aggregates_only`) and
// calls `on_runs` with every run of each finished benchmark.
class CollectingReporter : public benchmark::BenchmarkReporter {
 public:
  using Callback = std::function<void(const std::vector<Run>&)>;
  CollectingReporter(std::unique_ptr<benchmark::BenchmarkReporter> display, bool aggregates_only,
                     Callback on_runs)
      : display_(std::move(display)),
        aggregates_only_(aggregates_only),
        on_runs_(std::move(on_runs)) {}

  bool ReportContext(const Context& context) override { return display_->ReportContext(context); }
  void ReportRuns(const std::vector<Run>& runs) override;
  void Finalize() override { display_->Finalize(); }

 private:
  std::unique_ptr<benchmark::BenchmarkReporter> display_;
  bool aggregates_only_;
  Callback on_runs_;
};

}  // namespace rl::bench
