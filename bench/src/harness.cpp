#include "harness.hpp"

#include "rl/bench/assembly.hpp"
#include "rl/bench/gbench.hpp"
#include "rl/bench/interrupt.hpp"
#include "rl/bench/run_output.hpp"
#include "rl/bench/test_hooks.hpp"
#include "rl/roofline/counter_agreement.hpp"
#include "rl/roofline/model.hpp"
#include "rl/roofline/report.hpp"
#include "rl/roofline/results_io.hpp"
#include "rl/roofline/sku.hpp"
#include "rl/roofline/verdict.hpp"
#include "rl/scoped_device.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>

namespace rl::bench {

Harness::Harness(HarnessConfig config, roofline::Context context, std::unique_ptr<Nvml> nvml)
    : config_(std::move(config)),
      nvml_(std::move(nvml)),
      abort_after_(count_from_env("RL_BENCH_TEST_ABORT_AFTER")) {
  results_.context = std::move(context);
  results_.context.size_preset = std::string(size_preset_name(config_.selection.preset));
  results_.context.l2_flushed = config_.judged_by == SampleKind::cold;
  results_.run.complete = false;  // until finish() says otherwise
  results_.run.command_line = config_.command_line;
  results_.run.settings = config_.settings;
  results_.ceilings = config_.given_ceilings;
  measurer_ = std::make_unique<Measurer>(
      MeasurerConfig{.seed = config_.seed,
                     .sampling = config_.sampling,
                     .repetitions = config_.repetitions,
                     .l2_bytes = static_cast<std::size_t>(results_.context.device.l2_bytes),
                     .dump_tensors = config_.dump_tensors},
      nvml_.get());
  // A session that cannot count at all prints why once, here (counters.hpp).
  if (config_.open_counters) counter_session_ = config_.open_counters(results_.context);
}

Harness::~Harness() = default;

void Harness::register_benchmarks() {
  const int device_count = visible_device_count();
  for (Instance& instance : selected_instances(config_.selection)) {
    BenchEntry& entry = entries_.emplace_back(make_entry(std::move(instance)));
    if (const std::optional<std::string> not_here =
            cannot_run_here(*entry.record, entry.shape, results_.context, device_count)) {
      // Recorded as skipped, never registered.
      entry.result.status = roofline::Status::skipped;
      entry.result.error = *not_here;
      results_.kernels.push_back(entry.result);
      std::fprintf(stderr, "[skip] %s: %s\n", entry.name.c_str(), not_here->c_str());
      continue;
    }
    by_name_[entry.name] = &entry;
    ++to_run_;
    BenchEntry* ptr = &entry;
    benchmark::RegisterBenchmark(entry.name.c_str(),
                                 [this, ptr](benchmark::State& state) { body(state, *ptr); })
        ->UseManualTime()
        // One iteration per repetition: the harness takes the repetition's
        // samples itself (policy.hpp) and reports their median, so Google
        // Benchmark's iteration growth cannot turn a 2 us kernel into minutes.
        ->Iterations(1)
        ->Unit(benchmark::kMicrosecond)
        ->ComputeStatistics(
            "min",
            [](const std::vector<double>& v) { return *std::min_element(v.begin(), v.end()); })
        ->ComputeStatistics("max", [](const std::vector<double>& v) {
          return *std::max_element(v.begin(), v.end());
        });
  }
  std::fprintf(stderr,
               "%zu benchmark(s) to run (ceilings first), each validated before it is "
               "timed\n",
               to_run_);
}

std::size_t Harness::run() {
  CollectingReporter reporter(
      *benchmark::CreateDefaultDisplayReporter(), config_.display_aggregates_only,
      [this](const std::vector<benchmark::BenchmarkReporter::Run>& runs) { on_runs(runs); });
  run_started_ = std::chrono::steady_clock::now();
  test_interrupt_point("start");
  const std::size_t count = benchmark::RunSpecifiedBenchmarks(&reporter);
  interrupted_signal_ = interrupt_signal();
  flush();
  return count;
}

void Harness::skip(benchmark::State& state, BenchEntry& entry, const char* message) {
  // Google Benchmark checks that every repetition of a benchmark reports the
  // same iteration count (its statistics abort the process otherwise): once
  // a repetition of this benchmark entered the timing loop and reported one
  // iteration, a skipped one enters it too.
  if (!entry.repetition_started) {
    state.SkipWithError(message);
    return;
  }
  for (auto _ : state) {
    state.SkipWithError(message);
    break;
  }
}

void Harness::body(benchmark::State& state, BenchEntry& entry) {
  try {
    if (interrupt_signal() != 0) {
      entry.interrupted = true;
      skip(state, entry, kInterruptedMessage);
      return;
    }
    // A kernel starts only within the budget; the ceilings always run (no
    // roof, no verdict without them).
    if (!entry.prepared && entry.record->ceiling.empty() && config_.budget_s &&
        std::chrono::steady_clock::now() - run_started_ >=
            std::chrono::duration<double>(*config_.budget_s))
      entry.over_budget = true;
    if (entry.over_budget) {
      skip(state, entry, kBudgetMessage);
      return;
    }
    if (!entry.prepared) measurer_->prepare(entry);
    if (entry.failed) {
      skip(state, entry, entry.result.error.c_str());
      return;
    }
    const SampleKind judged = config_.judged_by;
    const SampleKind other = judged == SampleKind::cold ? SampleKind::batch : SampleKind::cold;
    double repetition_median = 0;
    for (auto _ : state) {
      entry.repetition_started = true;
      // The clock sampler runs only while samples are timed.
      measurer_->set_sampling_clocks(true);
      const bool sampled =
          measurer_->sample_repetition(entry, judged) && measurer_->sample_repetition(entry, other);
      measurer_->set_sampling_clocks(false);
      if (!sampled) {
        state.SkipWithError(kInterruptedMessage);
        break;
      }
      const SampleSet& set = judged == SampleKind::cold ? entry.cold : entry.batch;
      repetition_median = time_stats(set.repetitions.back()).median;
      state.SetIterationTime(repetition_median);
    }
    if (entry.interrupted || state.iterations() == 0) return;
    state.counters["samples"] = static_cast<double>(
        (judged == SampleKind::cold ? entry.cold : entry.batch).repetitions.back().size());
    set_repetition_counters(state, entry, repetition_median);
    test_interrupt_point("repetition");
  } catch (const std::exception& error) {
    entry.failed = true;
    entry.result.status = roofline::Status::error;
    entry.result.error = error.what();
    state.SkipWithError(entry.result.error.c_str());
  }
}

void Harness::set_repetition_counters(benchmark::State& state, BenchEntry& entry, double seconds) {
  // This repetition's figures, as results.json computes them for the median.
  roofline::KernelResult repetition = entry.result;
  set_timing(repetition, {seconds});
  repetition.l2_flushed = config_.judged_by == SampleKind::cold;
  if (!entry.judged_roof) {
    // The kernel's roof does not depend on its time (the ceilings are
    // measured first).  A ceiling kernel is judged with its own first
    // repetition included: a provisional set of ceilings.
    if (entry.record->ceiling.empty()) {
      entry.judged_roof = BenchEntry::JudgedRoof{
          roofline::roof_of(repetition, results_.ceilings, l2_bytes()), ceilings_version_};
    } else {
      std::vector<roofline::Ceiling> ceilings = results_.ceilings;
      merge_ceiling(ceilings, measured_ceiling(repetition, entry.record->ceiling, "", {},
                                               entry.record->instruction));
      entry.judged_roof =
          BenchEntry::JudgedRoof{roofline::roof_of(repetition, ceilings, l2_bytes()), std::nullopt};
    }
  }
  set_counters(state.counters, repetition,
               roofline::classify(entry.judged_roof->roof, repetition).pct_of_roof);
}

double Harness::l2_bytes() const {
  return static_cast<double>(results_.context.device.l2_bytes);
}

void Harness::judge_recorded(const BenchEntry& entry, roofline::KernelResult& kernel) const {
  const bool roof_still_holds =
      entry.judged_roof && entry.judged_roof->ceilings_version == ceilings_version_;
  const std::optional<roofline::KernelRoof> roof =
      roof_still_holds ? entry.judged_roof->roof
                       : roofline::roof_of(kernel, results_.ceilings, l2_bytes());
  roofline::set_verdict(kernel, roofline::classify(roof, kernel));
}

void Harness::rejudge_after(const std::string& changed_ceiling) {
  ++ceilings_version_;
  const auto changed =
      std::find_if(results_.ceilings.begin(), results_.ceilings.end(),
                   [&](const roofline::Ceiling& c) { return c.name == changed_ceiling; });
  if (changed == results_.ceilings.end()) return;
  for (roofline::KernelResult& kernel : results_.kernels)
    if (roofline::depends_on(kernel, *changed))
      roofline::set_verdict(kernel, roofline::judge(kernel, results_.ceilings, l2_bytes()));
}

roofline::KernelResult Harness::record_of(
    BenchEntry& entry, const std::vector<benchmark::BenchmarkReporter::Run>& runs) {
  roofline::KernelResult result = entry.result;
  if (entry.failed) return result;
  const SampleSet& judged = config_.judged_by == SampleKind::cold ? entry.cold : entry.batch;
  const SampleSet& other = config_.judged_by == SampleKind::cold ? entry.batch : entry.cold;
  if (repetition_seconds(runs).empty() || judged.repetitions.empty()) {
    result.status = roofline::Status::error;
    result.error = runs.front().error_occurred ? runs.front().error_message
                                               : "no timed repetition was reported";
    return result;
  }
  const ClockWindow window = measurer_->clock_window(entry);
  set_sampled_timing(result, judged, other);
  result.discarded_throttled = entry.discarded_throttled;
  set_clocks(result, window);
  result.throttled = result.throttled || entry.kept_throttled;
  result.status = roofline::Status::ok;
  // A library says which algorithm its heuristic picked.
  result.method = measurer_->notes_of(entry);
  if (!entry.record->ceiling.empty()) {
    roofline::Ceiling ceiling = measured_ceiling(
        result, entry.record->ceiling, entry.shape.to_string(), window, entry.record->instruction);
    if (!result.method.empty()) ceiling.method += "; " + result.method;
    // The kernels recorded so far that this ceiling bounds are judged again.
    if (merge_ceiling(results_.ceilings, std::move(ceiling))) rejudge_after(entry.record->ceiling);
    // Datasheet figure and derived peak at the observed clock, from the
    // matched SKU row (nothing for an unknown device).
    roofline::attach_vendor_claims(results_);
  }
  // Counted after the timed samples and before on_runs releases the workload,
  // then set beside the cost model (roofline's one tolerance policy).
  if (counter_session_) {
    result.counters = counters_of(entry);
    roofline::compare_counters(result);
  }
  return result;
}

roofline::KernelCounters Harness::counters_of(BenchEntry& entry) {
  roofline::KernelCounters counters;
  try {
    counters = measurer_->count(entry, *counter_session_);
  } catch (const std::exception& error) {
    // The launch itself failed (the session reports its own refusals): the
    // timed result stands, its counts are missing, and the line says which.
    counters = {};
    counters.source = results_.context.backend == roofline::Backend::emulator
                          ? roofline::CounterSource::emulator
                          : roofline::CounterSource::cupti;
    counters.unavailable = std::string("the counted launch failed: ") + error.what();
    std::fprintf(stderr, "counters unavailable for %s: %s\n", entry.name.c_str(),
                 counters.unavailable.c_str());
  }
  return counters;
}

void Harness::on_runs(const std::vector<benchmark::BenchmarkReporter::Run>& runs) {
  // Google Benchmark reports a benchmark's repetitions and then, in a second
  // call, its aggregates; the repetitions carry everything results.json needs.
  const bool has_repetitions = std::any_of(runs.begin(), runs.end(), [](const auto& run) {
    return run.run_type == benchmark::BenchmarkReporter::Run::RT_Iteration;
  });
  if (!has_repetitions) return;
  const auto found = by_name_.find(runs.front().run_name.function_name);
  if (found == by_name_.end()) return;
  BenchEntry& entry = *found->second;
  if (entry.interrupted || entry.over_budget) {
    // Not finished: neither recorded nor counted (the run is marked incomplete).
    measurer_->release_workload_of(entry);
    return;
  }
  // Judged once, against the ceilings measured so far (ceilings run first,
  // so normally all of them); without ceilings the roof fields stay absent.
  judge_recorded(entry, results_.kernels.emplace_back(record_of(entry, runs)));
  ++reported_;
  measurer_->release_workload_of(entry);
  flush();
  std::fprintf(stderr, "%s\n",
               progress_line(reported_, to_run_, results_.kernels.back(),
                             std::chrono::steady_clock::now() - run_started_)
                   .c_str());
  test_interrupt_point("benchmark");
  if (abort_after_ && reported_ >= *abort_after_) {
    // Simulated crash for the partial-results test: no cleanup, no final write.
    std::fprintf(stderr, "RL_BENCH_TEST_ABORT_AFTER=%zu: exiting as if crashed\n", *abort_after_);
    std::_Exit(70);
  }
}

void Harness::flush() {
  results_.run.left_out = left_out();
  roofline::write_results_atomic(config_.out_dir / "results.json", results_);
}

std::vector<roofline::LeftOut> Harness::left_out() const {
  std::vector<roofline::LeftOut> left;
  for (const BenchEntry& entry : entries_)
    if (entry.interrupted || entry.over_budget)
      left.push_back({entry.record->name, entry.shape.dims,
                      entry.interrupted ? roofline::LeftOutReason::interrupted
                                        : roofline::LeftOutReason::budget});
  return left;
}

void Harness::write_final_outputs() {
  if (interrupted_signal_ != 0)
    results_.run.interrupted_by = std::string(signal_name(interrupted_signal_));
  std::set<std::string> unfinished;
  for (const BenchEntry& entry : entries_)
    if (entry.interrupted || entry.over_budget) unfinished.insert(entry.name);
  const bool cut_short = interrupted_signal_ != 0 || !unfinished.empty();
  results_.run.complete = !cut_short;
  if (cut_short && config_.benchmarks_json)
    mark_benchmarks_json_incomplete(*config_.benchmarks_json, results_.run.interrupted_by,
                                    unfinished);
  flush();
  test_interrupt_point("render");
  roofline::write_chart_and_report(config_.out_dir, results_);
}

std::size_t Harness::finish() {
  write_final_outputs();
  // A signal that came after the benchmarks, while the files were written:
  // they are written again, marked incomplete, so that the files and the exit
  // status agree (a second signal would stop the process at once).
  if (interrupted_signal_ == 0 && interrupt_signal() != 0) {
    interrupted_signal_ = interrupt_signal();
    write_final_outputs();
  }
  // Google Benchmark's --benchmark_format=json|csv owns stdout: our summary
  // goes to stderr then, so stdout stays one valid document.
  print_summary(config_.summary_to_stderr ? stderr : stdout, results_, config_.out_dir);
  return static_cast<std::size_t>(
      std::count_if(results_.kernels.begin(), results_.kernels.end(), [](const auto& k) {
        return k.status == roofline::Status::failed_validation ||
               k.status == roofline::Status::error;
      }));
}

}  // namespace rl::bench
