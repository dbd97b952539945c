// The benchmark run: one Google Benchmark per (registry record x shape of the
// preset), ceilings first; validate, warm up, time with CUDA events; after
// each benchmark the partial results.json is flushed.  Compiled once per
// backend (same source, CUDA runtime or emulator underneath).
#pragma once

#include "rl/bench/nvml.hpp"
#include "rl/bench/options.hpp"
#include "rl/bench/policy.hpp"
#include "rl/bench/timing.hpp"
#include "rl/registry.hpp"
#include "rl/roofline/results.hpp"

#include <benchmark/benchmark.h>

#include <chrono>
#include <deque>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace rl::bench {

// One registered benchmark: a kernel record on one shape.
struct BenchEntry {
  const KernelRecord* record = nullptr;
  Shape shape;
  std::string name;  // "<kernel>/<shape>", the Google Benchmark name
  roofline::Cost cost;
  roofline::KernelResult result;  // filled as the benchmark goes
  bool prepared = false;          // validated and warmed up
  bool failed = false;            // failed validation or errored: never timed
  bool interrupted = false;       // SIGINT/SIGTERM came before it finished: not recorded
  SampleSet cold{SampleKind::cold, 1, {}, {}};
  SampleSet batch{SampleKind::batch, 1, {}, {}};
  int discarded_throttled = 0;  // samples retaken after a throttle reason
  bool kept_throttled = false;  // discards ran out: throttled samples were kept
  bool blocking = true;         // queue samples behind the blocking kernel (off after a timeout)
  std::chrono::steady_clock::time_point started;
};

// The (record, shape) pairs a run would benchmark: ceilings first, then the
// kernels (unless ceilings_only), each shape of the preset, as selected by a
// Google Benchmark filter ("" = all).  Records that cannot run here are
// included: they are reported as skipped.
struct Instance {
  const KernelRecord* record = nullptr;
  Shape shape;
  std::string name;  // "<kernel>/<shape>"
};
// What a run measures: the preset's shapes (or the user's, per family), the
// families asked for, with or without the ceilings, narrowed by a Google
// Benchmark filter.
struct Selection {
  SizePreset preset = SizePreset::small;
  bool ceilings_only = false;
  bool no_ceilings = false;
  std::vector<std::string> families;                 // empty: every family
  std::map<std::string, std::vector<Shape>> shapes;  // family -> replaces the preset's shapes
  std::string filter;                                // "" = everything
};
std::vector<Instance> selected_instances(const Selection& selection);

// The families --family names, checked against the registry, and the
// --shape overrides resolved into shapes in the order each family's records
// declare their dimensions.  Throws UsageError (one line) for an unknown
// family or dimension, a missing dimension, a value the family cannot take
// (0 only where the preset uses 0, as causal=0), or a shape a record refuses.
void resolve_selection(Selection& selection, const std::vector<std::string>& families,
                       const std::vector<ShapeOverride>& overrides);

// The skip reason of an instance whose declared device memory exceeds what
// is free: "needs 34.4 GB of device memory, 21.0 GB free" (decimal GB, as
// nvidia-smi's neighbours and datasheets count).
std::string memory_shortfall_text(std::size_t needed_bytes, std::size_t free_bytes);

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
};

class Harness {
 public:
  Harness(HarnessConfig config, roofline::Context context, std::unique_ptr<Nvml> nvml);
  ~Harness();

  // Registers the benchmarks with Google Benchmark (ceilings first).
  void register_benchmarks();
  // Runs what --benchmark_filter selects; returns the number of benchmarks run.
  std::size_t run();
  // roofline.svg, report.html, summary table.  Returns how many kernels
  // failed validation or errored (skipped ones do not count).
  std::size_t finish();

  const roofline::Results& results() const { return results_; }
  // The signal that interrupted run() (0: it ran to the end), and how many
  // benchmarks finished and were recorded.
  int interrupted_signal() const { return interrupted_signal_; }
  std::size_t finished_count() const { return reported_; }

 private:
  void body(benchmark::State& state, BenchEntry& entry);
  // Why this record cannot run on this backend/device (GPU-only on the
  // emulator, compute capability too low), or nullopt.
  std::optional<std::string> cannot_run_here(const KernelRecord& record) const;
  // The instance declares more device memory than is free now (after the
  // previous benchmark's buffers are released): the skip reason.
  std::optional<std::string> does_not_fit(const BenchEntry& entry);
  // --dump-tensors: the instance's tensors and manifest.json under
  // <dir>/<kernel>/<shape>/ (after it validated).
  void dump_tensors(const BenchEntry& entry, const Workload& workload) const;
  void describe(BenchEntry& entry);  // identity and cost fields of entry.result
  void prepare(BenchEntry& entry);
  Workload& workload_for(BenchEntry& entry);
  // Frees the workload when `entry` owns it (its benchmark is over).
  void release_workload_of(const BenchEntry& entry);
  // One sample of `kind`: seconds per launch.  Queued behind the blocking
  // kernel; a blocker that timed out turns blocking off for the entry and the
  // sample is retaken.
  double time_sample(BenchEntry& entry, Workload& workload, SampleKind kind);
  // One repetition of one kind: samples until the policy says stop (or an
  // interrupt); throttled samples are discarded and retaken after a pause.
  void sample_repetition(BenchEntry& entry, Workload& workload, SampleKind kind);
  // A clock-lowering throttle reason is set now (NVML, or the test hook).
  bool throttled_now();
  void on_runs(const std::vector<benchmark::BenchmarkReporter::Run>& runs);
  void flush() const;
  // "[17/52] name shape ... ok 0.41 ms (1m23s)" on stderr.
  void print_progress(const roofline::KernelResult& result) const;
  // benchmarks.json after an interrupt: Google Benchmark's file without the
  // entries of the skipped benchmarks, marked incomplete, written atomically.
  void mark_benchmarks_json_incomplete() const;

  HarnessConfig config_;
  roofline::Results results_;
  std::unique_ptr<Nvml> nvml_;
  std::unique_ptr<ClockSampler> sampler_;
  std::deque<BenchEntry> entries_;  // stable addresses: the benchmark lambdas hold pointers
  std::map<std::string, BenchEntry*> by_name_;
  cudaStream_t stream_ = nullptr;
  std::unique_ptr<L2Flusher> flusher_;
  std::unique_ptr<LaunchBlocker> blocker_;
  std::unique_ptr<EventTimer> timer_;
  // One workload alive at a time, so large-preset buffers do not accumulate.
  std::unique_ptr<Workload> workload_;
  const BenchEntry* workload_owner_ = nullptr;
  std::size_t reported_ = 0;
  std::size_t to_run_ = 0;
  int interrupted_signal_ = 0;  // registered benchmarks (the progress count's total)
  std::chrono::steady_clock::time_point run_started_ = std::chrono::steady_clock::now();
  std::optional<std::size_t> abort_after_;  // RL_BENCH_TEST_ABORT_AFTER (tests only)
  // RL_BENCH_TEST_THROTTLE_EVERY=N (tests only): every Nth throttle check
  // reports hw_thermal_slowdown, so the discard path runs without a GPU.
  std::optional<std::uint64_t> throttle_every_;
  std::uint64_t throttle_checks_ = 0;
};

}  // namespace rl::bench
