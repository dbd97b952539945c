#include "rl/bench/gbench.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <regex>

namespace rl::bench {

void set_counters(benchmark::UserCounters& counters, const roofline::KernelResult& timed,
                  std::optional<double> pct_of_roof) {
  using benchmark::Counter;
  counters["FLOP/s"] = Counter(timed.achieved_flops_per_s);
  counters["bytes/s"] = Counter(timed.achieved_bytes_per_s);
  counters["intensity"] = Counter(timed.bytes_model > 0 ? timed.flops / timed.bytes_model : 0.0);
  if (pct_of_roof && std::isfinite(*pct_of_roof)) counters["pct_of_roof"] = Counter(*pct_of_roof);
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

bool CollectingReporter::ReportContext(const Context& context) {
  const bool ok = display_->ReportContext(context);
#if defined(RL_BENCHMARK_LIB_IS_DEBUG)
  std::fprintf(stderr,
               "note: the '***WARNING*** Library was built as DEBUG' line comes from this "
               "system's Google Benchmark build; it concerns Google Benchmark's own CPU timer, "
               "while every time here is manual time from CUDA events (or the emulator's "
               "clock), so it does not affect the numbers\n");
#endif
  return ok;
}

void CollectingReporter::ReportRuns(const std::vector<Run>& runs) {
  // Google Benchmark reports a benchmark's repetitions, then its aggregates in
  // a second call; hiding the first call hides the repetitions.
  const bool only_repetitions = std::none_of(
      runs.begin(), runs.end(), [](const Run& run) { return run.run_type == Run::RT_Aggregate; });
  const auto timed =
      std::count_if(runs.begin(), runs.end(), [](const Run& run) { return !run.error_occurred; });
  const bool has_aggregates_to_come = only_repetitions && timed > 1;
  // A benchmark the run left out (interrupted, or not reached within the
  // budget) is not shown, nor are its aggregates (reported next when two
  // repetitions had finished before the interrupt): it is not recorded.
  const bool left_out = std::any_of(runs.begin(), runs.end(), [](const Run& run) {
    return run.error_occurred &&
           (run.error_message == kInterruptedMessage || run.error_message == kBudgetMessage);
  });
  const std::string function_name =
      runs.empty() ? std::string() : runs.front().run_name.function_name;
  if (left_out) hidden_ = function_name;
  const bool hidden =
      left_out || (!only_repetitions && !function_name.empty() && function_name == hidden_);
  if (!hidden && !(aggregates_only_ && has_aggregates_to_come)) display_->ReportRuns(runs);
  on_runs_(runs);
}

}  // namespace rl::bench
