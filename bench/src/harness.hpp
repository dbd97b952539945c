// The benchmark run: one Google Benchmark per (registry record x shape of the
// preset), ceilings first; validate, warm up, time with CUDA events; after
// each benchmark the partial results.json is flushed.  This file is the glue
// to Google Benchmark: registration, the benchmark body, the reported runs
// turned into results.json records, and the end of the run.  What is
// selected: selection.hpp; how an instance is timed: measurer.hpp; what is
// written besides results.json: rl/bench/run_output.hpp.  Compiled once per
// backend (same source, CUDA runtime or emulator underneath).
#pragma once

#include "bench_entry.hpp"
#include "measurer.hpp"
#include "rl/bench/counters.hpp"
#include "rl/bench/nvml.hpp"
#include "rl/bench/options.hpp"
#include "rl/bench/policy.hpp"
#include "rl/bench/run_output.hpp"
#include "rl/roofline/results.hpp"
#include "selection.hpp"

#include <benchmark/benchmark.h>

#include <chrono>
#include <deque>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace rl::bench {

struct HarnessConfig {
  Selection selection;
  std::uint64_t seed = 1;
  SampleKind judged_by = SampleKind::cold;  // batch with --warm-l2
  SamplingPolicy sampling;
  int repetitions = kDefaultRepetitions;  // Google Benchmark's, for the per-repetition budget
  // --ceilings-from: roofs measured earlier on this device (the ceiling
  // kernels are then not selected).
  std::vector<roofline::Ceiling> given_ceilings;
  roofline::RunSettings settings;                     // recorded as run.settings
  std::optional<std::filesystem::path> dump_tensors;  // --dump-tensors DIR
  bool summary_to_stderr = false;        // stdout carries Google Benchmark's json or csv
  bool display_aggregates_only = false;  // console shows aggregates, not each repetition
  std::filesystem::path out_dir;
  std::vector<std::string> command_line;  // recorded in results.json (run.command_line)
  std::optional<std::filesystem::path> benchmarks_json;  // ours to mark after an interrupt
  // --budget: no kernel starts after this many seconds of the run (the
  // ceilings always run); what is not reached is listed as left out.
  std::optional<double> budget_s;
  // --counters: opens the backend's session (open_counter_session), once per
  // run, with the run's context (its L2 policy included); each finished
  // instance's one extra launch is counted through it.  Empty without
  // --counters: no session, nothing counted, no result has counters.
  std::function<std::shared_ptr<CounterSession>(const roofline::Context&)> open_counters;
};

class Harness {
 public:
  Harness(HarnessConfig config, roofline::Context context, std::unique_ptr<Nvml> nvml);
  ~Harness();

  // Registers the benchmarks with Google Benchmark (ceilings first).
  void register_benchmarks();
  // Runs what --benchmark_filter selects; returns the number of benchmarks run.
  std::size_t run();
  // results.json marked complete (or interrupted), roofline.svg, report.html,
  // the summary on the terminal.  Returns how many kernels failed validation
  // or errored (skipped ones do not count).
  std::size_t finish();

  const roofline::Results& results() const { return results_; }
  // The signal that interrupted the run before finish() wrote its files (0:
  // it ran to the end), and how many benchmarks finished and were recorded.
  int interrupted_signal() const { return interrupted_signal_; }
  std::size_t finished_count() const { return reported_; }
  // The benchmarks the run selected but did not measure (interrupted, or not
  // reached within --budget), in run order.
  std::vector<roofline::LeftOut> left_out() const;

 private:
  void body(benchmark::State& state, BenchEntry& entry);
  // Skips this repetition of the entry's benchmark with `message`.
  void skip(benchmark::State& state, BenchEntry& entry, const char* message);
  // This repetition's Google Benchmark counters, its time classified against
  // the kernel's roof (worked out at its first repetition).
  void set_repetition_counters(benchmark::State& state, BenchEntry& entry, double seconds);
  double l2_bytes() const;  // the device's, for the roofline's L2-residency test
  // The finished entry's verdict, from the roof worked out at its first
  // repetition while the ceilings are still those it used, else from theirs.
  void judge_recorded(const BenchEntry& entry, roofline::KernelResult& kernel) const;
  // The ceiling named `changed_ceiling` rose: every recorded kernel it bounds
  // is judged again (the others keep their verdicts).
  void rejudge_after(const std::string& changed_ceiling);
  void on_runs(const std::vector<benchmark::BenchmarkReporter::Run>& runs);
  // The finished entry as its results.json record.
  roofline::KernelResult record_of(BenchEntry& entry,
                                   const std::vector<benchmark::BenchmarkReporter::Run>& runs);
  // --counters: the counts of one more launch of the finished entry.
  roofline::KernelCounters counters_of(BenchEntry& entry);
  void flush();
  // results.json marked complete or interrupted, benchmarks.json marked
  // after an interrupt, roofline.svg and report.html.
  void write_final_outputs();

  HarnessConfig config_;
  roofline::Results results_;
  std::unique_ptr<Nvml> nvml_;
  std::unique_ptr<Measurer> measurer_;
  std::deque<BenchEntry> entries_;  // stable addresses: the benchmark lambdas hold pointers
  std::map<std::string, BenchEntry*> by_name_;
  std::size_t reported_ = 0;
  std::size_t to_run_ = 0;  // registered benchmarks (the progress count's total)
  // Bumped each time results_.ceilings changes: a roof worked out against an
  // older version is worked out again.
  std::size_t ceilings_version_ = 0;
  int interrupted_signal_ = 0;
  std::chrono::steady_clock::time_point run_started_ = std::chrono::steady_clock::now();
  std::optional<std::size_t> abort_after_;           // RL_BENCH_TEST_ABORT_AFTER (tests only)
  std::shared_ptr<CounterSession> counter_session_;  // --counters, else null
};

}  // namespace rl::bench
