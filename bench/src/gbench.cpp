#include "rl/bench/gbench.hpp"

#include <algorithm>
#include <regex>

namespace rl::bench {

void set_counters(benchmark::UserCounters& counters, const roofline::Cost& cost,
                  std::optional<double> pct_of_roof_at_one_second) {
  using benchmark::Counter;
  counters["FLOP/s"] = Counter(cost.flops, Counter::kIsIterationInvariantRate);
  counters["bytes/s"] = Counter(cost.bytes_model, Counter::kIsIterationInvariantRate);
  counters["intensity"] = Counter(cost.bytes_model > 0 ? cost.flops / cost.bytes_model : 0.0);
  if (pct_of_roof_at_one_second)
    counters["pct_of_roof"] =
        Counter(*pct_of_roof_at_one_second, Counter::kIsIterationInvariantRate);
}

std::vector<double> repetition_seconds(const std::vector<benchmark::BenchmarkReporter::Run>& runs) {
  std::vector<double> seconds;
  for (const auto& run : runs) {
    if (run.run_type != benchmark::BenchmarkReporter::Run::RT_Iteration) continue;
    if (run.error_occurred || run.iterations <= 0) continue;
    // With UseManualTime, real_accumulated_time is the sum of SetIterationTime.
    seconds.push_back(run.real_accumulated_time / static_cast<double>(run.iterations));
  }
  return seconds;
}

bool matches_benchmark_filter(const std::string& name, const std::string& filter) {
  if (filter.empty() || filter == "all") return true;
  const bool negative = filter.front() == '-';
  const std::regex pattern(negative ? filter.substr(1) : filter, std::regex::extended);
  return std::regex_search(name, pattern) != negative;
}

void CollectingReporter::ReportRuns(const std::vector<Run>& runs) {
  // Google Benchmark reports a benchmark's repetitions, then its aggregates in
  // a second call; hiding the first call hides the repetitions.
  const bool only_repetitions = std::none_of(
      runs.begin(), runs.end(), [](const Run& run) { return run.run_type == Run::RT_Aggregate; });
  const auto timed =
      std::count_if(runs.begin(), runs.end(), [](const Run& run) { return !run.error_occurred; });
  const bool has_aggregates_to_come = only_repetitions && timed > 1;
  if (!(aggregates_only_ && has_aggregates_to_come)) display_->ReportRuns(runs);
  on_runs_(runs);
}

}  // namespace rl::bench
