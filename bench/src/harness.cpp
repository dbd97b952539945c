#include "harness.hpp"

#include "rl/bench/assembly.hpp"
#include "rl/bench/gbench.hpp"
#include "rl/bench/interrupt.hpp"
#include "rl/bench/tensor_dump.hpp"
#include "rl/roofline/model.hpp"
#include "rl/roofline/report.hpp"
#include "rl/roofline/results_io.hpp"
#include "rl/roofline/sku.hpp"
#include "rl/roofline/svg.hpp"
#include "rl/roofline/verdict.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include <sys/ioctl.h>
#include <unistd.h>

namespace rl::bench {

namespace {

constexpr std::chrono::milliseconds kClockSamplePeriod{10};
// Warm-up launches before the launch time that picks the batch size is taken.
constexpr int kWarmupLaunches = 3;

std::optional<std::size_t> count_from_env(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr || *value == '\0') return std::nullopt;
  return static_cast<std::size_t>(std::strtoull(value, nullptr, 10));
}

double seconds_since(std::chrono::steady_clock::time_point begin) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
}

// "1m23s" / "45s".
std::string elapsed_text(std::chrono::steady_clock::duration elapsed) {
  const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(elapsed).count();
  char text[32];
  if (seconds >= 60)
    std::snprintf(text, sizeof text, "%lldm%02llds", static_cast<long long>(seconds / 60),
                  static_cast<long long>(seconds % 60));
  else
    std::snprintf(text, sizeof text, "%llds", static_cast<long long>(seconds));
  return text;
}

// The terminal's width for the end-of-run summary: $COLUMNS, else the
// window of `out` when it is a terminal, else 100.
int terminal_columns(FILE* out) {
  if (const char* columns = std::getenv("COLUMNS"); columns != nullptr && std::atoi(columns) > 0)
    return std::atoi(columns);
  winsize window{};
  if (isatty(fileno(out)) && ioctl(fileno(out), TIOCGWINSZ, &window) == 0 && window.ws_col > 0)
    return window.ws_col;
  return 100;
}

// "0.41 ms", "12.3 us", "1.20 s".
std::string time_text(double seconds) {
  char text[32];
  if (seconds >= 1)
    std::snprintf(text, sizeof text, "%.2f s", seconds);
  else if (seconds >= 1e-3)
    std::snprintf(text, sizeof text, "%.3g ms", seconds * 1e3);
  else
    std::snprintf(text, sizeof text, "%.3g us", seconds * 1e6);
  return text;
}

}  // namespace

std::vector<Instance> selected_instances(const Selection& selection) {
  auto wanted = [&](const KernelRecord& record) {
    return selection.families.empty() ||
           std::find(selection.families.begin(), selection.families.end(), record.family) !=
               selection.families.end();
  };
  // Ceilings first: every later kernel's roof is computed from them.  They
  // are the roofs, not a family the user picks: --family keeps them.
  std::vector<const KernelRecord*> records;
  if (!selection.no_ceilings)
    for (const auto& record : kernel_registry())
      if (!record.ceiling.empty()) records.push_back(&record);
  if (!selection.ceilings_only)
    for (const auto& record : kernel_registry())
      if (record.ceiling.empty() && wanted(record)) records.push_back(&record);
  std::vector<Instance> selected;
  for (const KernelRecord* record : records) {
    const auto user = selection.shapes.find(record->family);
    const std::vector<Shape> shapes =
        user != selection.shapes.end() ? user->second : record->shapes(selection.preset);
    for (const Shape& shape : shapes) {
      std::string name = record->name + "/" + shape.to_string();
      // Google Benchmark matches the filter against the name it reports,
      // which Iterations(1) and UseManualTime suffix.
      if (matches_benchmark_filter(name + "/iterations:1/manual_time", selection.filter))
        selected.push_back({record, shape, std::move(name)});
    }
  }
  return selected;
}

void resolve_selection(Selection& selection, const std::vector<std::string>& families,
                       const std::vector<ShapeOverride>& overrides) {
  std::vector<std::string> known;
  for (const auto& record : kernel_registry())
    if (std::find(known.begin(), known.end(), record.family) == known.end())
      known.push_back(record.family);
  auto known_list = [&] {
    std::string list;
    for (const auto& f : known) list += (list.empty() ? "" : ", ") + f;
    return list;
  };
  for (const std::string& family : families)
    if (std::find(known.begin(), known.end(), family) == known.end())
      throw UsageError("--family: unknown family '" + family + "' (families: " + known_list() +
                       ")");
  selection.families = families;
  for (const ShapeOverride& o : overrides) {
    const std::string quoted = "--shape " + o.family + ":";
    // The dimensions the family declares, in its records' order, and the
    // values its presets use (0 is accepted only where a preset uses it).
    std::vector<std::string> declared;
    std::vector<std::string> zero_allowed;
    const KernelRecord* first = nullptr;
    for (const auto& record : kernel_registry()) {
      if (record.family != o.family) continue;
      if (!first) first = &record;
      for (const SizePreset preset : {SizePreset::small, SizePreset::medium, SizePreset::large})
        for (const Shape& shape : record.shapes(preset))
          for (const auto& [dim, extent] : shape.dims) {
            if (std::find(declared.begin(), declared.end(), dim) == declared.end())
              declared.push_back(dim);
            if (extent == 0 &&
                std::find(zero_allowed.begin(), zero_allowed.end(), dim) == zero_allowed.end())
              zero_allowed.push_back(dim);
          }
    }
    if (!first)
      throw UsageError(quoted + " unknown family '" + o.family + "' (families: " + known_list() +
                       ")");
    std::string declared_list;
    for (const auto& d : declared) declared_list += (declared_list.empty() ? "" : ",") + d;
    Shape shape;
    for (const std::string& dim : declared) {
      const auto given = std::find_if(o.dims.begin(), o.dims.end(),
                                      [&](const auto& kv) { return kv.first == dim; });
      if (given == o.dims.end())
        throw UsageError(quoted + " missing " + dim + " (" + o.family + " shapes are " +
                         declared_list + ")");
      if (given->second == 0 &&
          std::find(zero_allowed.begin(), zero_allowed.end(), dim) == zero_allowed.end())
        throw UsageError(quoted + " " + dim + " must be positive");
      shape.dims.emplace_back(dim, given->second);
    }
    for (const auto& [dim, value] : o.dims)
      if (std::find(declared.begin(), declared.end(), dim) == declared.end())
        throw UsageError(quoted + " unknown dimension '" + dim + "' (" + o.family + " shapes are " +
                         declared_list + ")");
    // A record's cost model checks what its workload will: a value it cannot
    // take (causal=2) is refused now, not in the middle of the run.
    for (const auto& record : kernel_registry()) {
      if (record.family != o.family) continue;
      try {
        record.cost(shape);
      } catch (const std::exception& e) {
        throw UsageError(quoted + shape.to_string() + ": " + e.what());
      }
    }
    selection.shapes[o.family].push_back(std::move(shape));
  }
}

Harness::Harness(HarnessConfig config, roofline::Context context, std::unique_ptr<Nvml> nvml)
    : config_(std::move(config)),
      nvml_(std::move(nvml)),
      abort_after_(count_from_env("RL_BENCH_TEST_ABORT_AFTER")),
      throttle_every_(count_from_env("RL_BENCH_TEST_THROTTLE_EVERY")) {
  if (throttle_every_ && *throttle_every_ == 0) throttle_every_.reset();
  results_.context = std::move(context);
  results_.context.size_preset = std::string(size_preset_name(config_.selection.preset));
  results_.context.l2_flushed = config_.judged_by == SampleKind::cold;
  results_.run.complete = false;  // until finish() says otherwise
  results_.run.command_line = config_.command_line;
  results_.run.settings = config_.settings;
  results_.ceilings = config_.given_ceilings;
  if (nvml_) sampler_ = std::make_unique<ClockSampler>(*nvml_, kClockSamplePeriod);
  RL_CUDA_CHECK(cudaStreamCreate(&stream_));
  timer_ = std::make_unique<EventTimer>();
  blocker_ = std::make_unique<LaunchBlocker>();
  flusher_ =
      std::make_unique<L2Flusher>(static_cast<std::size_t>(results_.context.device.l2_bytes));
}

Harness::~Harness() {
  workload_.reset();
  flusher_.reset();
  blocker_.reset();
  timer_.reset();
  if (stream_ != nullptr) cudaStreamDestroy(stream_);
}

void Harness::register_benchmarks() {
  for (Instance& instance : selected_instances(config_.selection)) {
    BenchEntry& entry = entries_.emplace_back();
    entry.record = instance.record;
    entry.shape = std::move(instance.shape);
    entry.name = std::move(instance.name);
    entry.cost = entry.record->cost(entry.shape);
    describe(entry);
    if (const std::optional<std::string> not_here = cannot_run_here(*entry.record)) {
      // Recorded as skipped, never registered.
      entry.result.status = "skipped";
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
  const std::size_t count = benchmark::RunSpecifiedBenchmarks(&reporter);
  // Read once: a signal that arrives after the last benchmark finished
  // interrupts nothing, and results, benchmarks.json and exit code agree.
  interrupted_signal_ = interrupt_signal();
  if (interrupted_signal_ != 0) mark_benchmarks_json_incomplete();
  flush();
  return count;
}

Workload& Harness::workload_for(BenchEntry& entry) {
  if (workload_owner_ != &entry) {
    workload_.reset();  // free the previous benchmark's buffers first
    workload_owner_ = nullptr;
    workload_ = entry.record->make_workload(entry.shape, config_.seed);
    workload_owner_ = &entry;
  }
  return *workload_;
}

void Harness::release_workload_of(const BenchEntry& entry) {
  if (workload_owner_ != &entry) return;
  workload_.reset();
  workload_owner_ = nullptr;
}

double Harness::time_sample(BenchEntry& entry, Workload& workload, SampleKind kind) {
  const int launches = kind == SampleKind::cold ? 1 : entry.batch.launches_per_sample;
  while (true) {
    if (entry.blocking) blocker_->block(stream_);
    if (kind == SampleKind::cold) flusher_->flush(stream_);
    timer_->start(stream_);
    for (int i = 0; i < launches; ++i) workload.run(stream_);
    timer_->stop(stream_);
    if (entry.blocking) blocker_->release();
    const double seconds = timer_->seconds();
    RL_CUDA_CHECK(cudaGetLastError());
    if (!entry.blocking || !blocker_->timed_out()) return seconds / launches;
    // The work never reached the GPU while the blocker held it (a workload
    // that waits on the host inside run(), or a full launch queue): this
    // sample timed the wait.  Retaken unblocked, as is every later one.
    entry.blocking = false;
    std::fprintf(stderr,
                 "note: %s: the blocking kernel timed out; timing without it (launch "
                 "latency included)\n",
                 entry.name.c_str());
  }
}

bool Harness::throttled_now() {
  if (throttle_every_) return ++throttle_checks_ % *throttle_every_ == 0;
  if (!nvml_) return false;
  return is_throttling(nvml_->clock_event_reasons().value_or(0));
}

void Harness::sample_repetition(BenchEntry& entry, Workload& workload, SampleKind kind) {
  SampleSet& set = kind == SampleKind::cold ? entry.cold : entry.batch;
  const double budget = repetition_budget_s(config_.sampling, config_.repetitions, 2);
  std::vector<double> samples;
  const auto begin = std::chrono::steady_clock::now();
  std::optional<StopReason> stop;
  while (!stop) {
    if (interrupt_signal() != 0) {
      entry.interrupted = true;
      return;
    }
    const double seconds = time_sample(entry, workload, kind);
    if (throttled_now()) {
      if (entry.discarded_throttled < kMaxThrottleDiscards) {
        // Discarded, and retaken once the clocks had time to recover.
        ++entry.discarded_throttled;
        std::this_thread::sleep_for(std::chrono::duration<double>(kThrottleRecoveryPauseSeconds));
        continue;
      }
      entry.kept_throttled = true;
    }
    samples.push_back(seconds);
    stop = should_stop(samples, seconds_since(begin), budget, config_.sampling);
  }
  set.repetitions.push_back(std::move(samples));
  set.stopped_by.push_back(*stop);
}

std::string memory_shortfall_text(std::size_t needed_bytes, std::size_t free_bytes) {
  char text[96];
  std::snprintf(text, sizeof text, "needs %.1f GB of device memory, %.1f GB free",
                static_cast<double>(needed_bytes) / 1e9, static_cast<double>(free_bytes) / 1e9);
  return text;
}

std::optional<std::string> Harness::cannot_run_here(const KernelRecord& record) const {
  const roofline::Context& context = results_.context;
  const bool emulator = context.backend == "emulator";
  const std::string& cc = context.device.compute_capability;  // "9.0"
  const int cc_x10 = roofline::compute_capability_x10(cc);
  auto cc_text = [](int x10) { return std::to_string(x10 / 10) + "." + std::to_string(x10 % 10); };
  // Before gpu_only: the emulator runs the sm_90a records as a Hopper.
  if (record.min_cc > 0 && cc_x10 < record.min_cc)
    return "needs compute capability " + cc_text(record.min_cc) + ", the device has " + cc +
           (emulator && record.min_cc == 90
                ? " (the emulator runs it as a Hopper with RL_EMU_CC=90, as scripts/run does)"
                : "");
  if (record.gpu_only && emulator)
    return "GPU-only kernel: the emulator cannot run it (covered by static checks)";
  if (record.max_cc > 0 && cc_x10 > record.max_cc)
    return "built for compute capability up to " + cc_text(record.max_cc) + ", the device has " +
           cc;
  if (record.refuse_on)
    if (std::optional<std::string> why = record.refuse_on(cc_x10)) return why;
  return std::nullopt;
}

std::optional<std::string> Harness::does_not_fit(const BenchEntry& entry) {
  if (!entry.record->device_bytes) return std::nullopt;
  const std::size_t needed = entry.record->device_bytes(entry.shape);
  // The previous benchmark's buffers are freed first: they are not this
  // instance's competition.
  workload_.reset();
  workload_owner_ = nullptr;
  std::size_t free_bytes = 0, total_bytes = 0;
  RL_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  if (needed <= free_bytes) return std::nullopt;
  return memory_shortfall_text(needed, free_bytes);
}

void Harness::describe(BenchEntry& entry) {
  roofline::KernelResult& result = entry.result;
  const KernelRecord& record = *entry.record;
  result.name = record.name;
  result.family = record.family;
  result.variant = record.variant;
  result.precision = record.precision;
  result.baseline = record.baseline;
  result.idea = record.idea;
  result.library = record.library;
  result.ceiling = record.ceiling;
  result.fuses = record.fuses;
  result.shape = entry.shape.dims;
  if (record.device_bytes)
    result.device_bytes = static_cast<double>(record.device_bytes(entry.shape));
  set_cost(result, entry.cost);
}

void Harness::prepare(BenchEntry& entry) {
  entry.prepared = true;
  entry.started = std::chrono::steady_clock::now();
  roofline::KernelResult& result = entry.result;
  if (const std::optional<std::string> too_big = does_not_fit(entry)) {
    // Data, not an error: where a variant runs out of memory is a result.
    entry.failed = true;
    result.status = "skipped";
    result.error = *too_big;
    return;
  }
  Workload& workload = workload_for(entry);
  const Validation validation = workload.validate(stream_);
  result.validated = validation.passed;
  result.max_rel_err = validation.max_rel_err;
  if (!validation.passed) {
    entry.failed = true;
    result.status = "failed_validation";
    result.error = validation.detail.empty() ? "validation failed" : validation.detail;
    return;
  }
  // Warm-up: cold single launches (through the blocker, so one that cannot
  // be held is found here); the fastest sets the batch size.
  double fastest = 0;
  for (int i = 0; i < kWarmupLaunches; ++i) {
    const double seconds = time_sample(entry, workload, SampleKind::cold);
    fastest = i == 0 ? seconds : std::min(fastest, seconds);
  }
  entry.batch.launches_per_sample = launches_per_sample(fastest);
  if (config_.dump_tensors) dump_tensors(entry, workload);
}

void Harness::dump_tensors(const BenchEntry& entry, const Workload& workload) const {
  const std::vector<TensorDump> tensors = workload.tensors();
  const std::filesystem::path dir =
      *config_.dump_tensors / dump_directory_name(entry.record->name, entry.shape.to_string());
  std::filesystem::create_directories(dir);
  nlohmann::ordered_json shape = nlohmann::ordered_json::object();
  for (const auto& [dim, extent] : entry.shape.dims) shape[dim] = extent;
  nlohmann::ordered_json manifest = {{"kernel", entry.record->name},
                                     {"shape", std::move(shape)},
                                     {"seed", config_.seed},
                                     {"format",
                                      "NumPy .npy 1.0, float32 values whatever the "
                                      "storage precision, C order"},
                                     {"tensors", nlohmann::ordered_json::array()}};
  if (tensors.empty()) manifest["note"] = "this kernel's workload does not expose its tensors";
  for (const TensorDump& t : tensors) {
    const std::string file = t.name + ".npy";
    roofline::write_file_atomic(dir / file, npy_float32(t.values, t.dims));
    manifest["tensors"].push_back({{"name", t.name},
                                   {"file", file},
                                   {"role", t.role},
                                   {"dims", t.dims},
                                   {"precision", t.precision}});
  }
  roofline::write_file_atomic(dir / "manifest.json", manifest.dump(2) + "\n");
}

void Harness::body(benchmark::State& state, BenchEntry& entry) {
  try {
    if (interrupt_signal() != 0) {
      entry.interrupted = true;
      state.SkipWithError(kInterruptedMessage);
      return;
    }
    if (!entry.prepared) prepare(entry);
    if (entry.failed) {
      state.SkipWithError(entry.result.error.c_str());
      return;
    }
    Workload& workload = workload_for(entry);
    const SampleKind judged = config_.judged_by;
    const SampleKind other = judged == SampleKind::cold ? SampleKind::batch : SampleKind::cold;
    double repetition_median = 0;
    for (auto _ : state) {
      // The clock sampler runs only while samples are timed.
      if (sampler_) sampler_->set_active(true);
      sample_repetition(entry, workload, judged);
      if (!entry.interrupted) sample_repetition(entry, workload, other);
      if (sampler_) sampler_->set_active(false);
      if (entry.interrupted) {
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
    // This repetition's figures, as results.json computes them for the
    // median: a ceiling kernel is judged with its own measurement included.
    roofline::KernelResult repetition = entry.result;
    set_timing(repetition, {repetition_median});
    repetition.l2_flushed = judged == SampleKind::cold;
    std::vector<roofline::Ceiling> ceilings = results_.ceilings;
    if (!entry.record->ceiling.empty())
      merge_ceiling(ceilings, measured_ceiling(repetition, entry.record->ceiling, "", {}));
    set_counters(
        state.counters, repetition,
        roofline::judge(repetition, ceilings, static_cast<double>(results_.context.device.l2_bytes))
            .pct_of_roof);
  } catch (const std::exception& error) {
    entry.failed = true;
    entry.result.status = "error";
    entry.result.error = error.what();
    state.SkipWithError(entry.result.error.c_str());
  }
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
  if (entry.interrupted) {
    // Not finished: neither recorded nor counted (the run is marked incomplete).
    release_workload_of(entry);
    return;
  }
  roofline::KernelResult result = entry.result;
  const ClockWindow window =
      sampler_ ? sampler_->window(entry.started, std::chrono::steady_clock::now()) : ClockWindow{};
  if (!entry.failed) {
    const SampleSet& judged = config_.judged_by == SampleKind::cold ? entry.cold : entry.batch;
    const SampleSet& other = config_.judged_by == SampleKind::cold ? entry.batch : entry.cold;
    if (repetition_seconds(runs).empty() || judged.repetitions.empty()) {
      result.status = "error";
      result.error = runs.front().error_occurred ? runs.front().error_message
                                                 : "no timed repetition was reported";
    } else {
      set_sampled_timing(result, judged, other);
      result.discarded_throttled = entry.discarded_throttled;
      set_clocks(result, window);
      result.throttled = result.throttled || entry.kept_throttled;
      result.status = "ok";
      // A library says which algorithm its heuristic picked.
      if (workload_owner_ == &entry && workload_) result.method = workload_->notes();
      if (!entry.record->ceiling.empty()) {
        roofline::Ceiling ceiling =
            measured_ceiling(result, entry.record->ceiling, entry.shape.to_string(), window);
        if (!result.method.empty()) ceiling.method += "; " + result.method;
        merge_ceiling(results_.ceilings, std::move(ceiling));
        // Datasheet figure and derived peak at the observed clock, from the
        // matched SKU row (nothing for an unknown device).
        roofline::attach_vendor_claims(results_);
      }
    }
  }
  results_.kernels.push_back(std::move(result));
  ++reported_;
  // Every kernel's roof from the ceilings measured so far (ceilings run first,
  // so normally all of them); without ceilings the roof fields stay absent.
  roofline::apply_roofline(results_);
  release_workload_of(entry);
  flush();
  print_progress(results_.kernels.back());
  if (abort_after_ && reported_ >= *abort_after_) {
    // Simulated crash for the partial-results test: no cleanup, no final write.
    std::fprintf(stderr, "RL_BENCH_TEST_ABORT_AFTER=%zu: exiting as if crashed\n", *abort_after_);
    std::_Exit(70);
  }
}

void Harness::flush() const {
  roofline::write_results_atomic(config_.out_dir / "results.json", results_);
}

void Harness::print_progress(const roofline::KernelResult& k) const {
  std::string what = k.status;
  if (k.status == "ok" && k.time_s) {
    what += " " + time_text(k.time_s->median);
    if (k.pct_of_roof) {
      char pct[64];
      std::snprintf(pct, sizeof pct, ", %.1f%% of roof%s", *k.pct_of_roof,
                    k.bound == "above_roof" ? " (above its roof: not trusted)" : "");
      what += pct;
    }
  } else if (!k.error.empty())
    what += ": " + k.error;
  std::fprintf(stderr, "[%zu/%zu] %s %s ... %s (%s)\n", reported_, to_run_, k.name.c_str(),
               Shape{k.shape}.to_string().c_str(), what.c_str(),
               elapsed_text(std::chrono::steady_clock::now() - run_started_).c_str());
}

void Harness::mark_benchmarks_json_incomplete() const {
  if (!config_.benchmarks_json) return;
  std::ifstream in(*config_.benchmarks_json);
  if (!in) return;
  nlohmann::ordered_json json = nlohmann::ordered_json::parse(in, nullptr, false);
  if (json.is_discarded() || !json.contains("benchmarks")) return;
  nlohmann::ordered_json kept = nlohmann::ordered_json::array();
  for (auto& b : json["benchmarks"])
    if (!(b.value("error_occurred", false) && b.value("error_message", "") == kInterruptedMessage))
      kept.push_back(std::move(b));
  json["benchmarks"] = std::move(kept);
  json["context"]["bench_roofline_complete"] = false;
  json["context"]["bench_roofline_interrupted_by"] = std::string(signal_name(interrupted_signal_));
  roofline::write_file_atomic(*config_.benchmarks_json, json.dump(2) + "\n");
}

std::size_t Harness::finish() {
  if (interrupted_signal_ != 0)
    results_.run.interrupted_by = std::string(signal_name(interrupted_signal_));
  else
    results_.run.complete = true;
  flush();
  const roofline::SkuMatch sku = roofline::match_sku(results_.context.device);
  roofline::write_file_atomic(config_.out_dir / "roofline.svg",
                              roofline::render_roofline_svg(results_));
  roofline::write_file_atomic(
      config_.out_dir / "report.html",
      roofline::render_report_html(results_, {.sku = sku.sku, .sku_reason = sku.reason}));

  // Google Benchmark's --benchmark_format=json|csv owns stdout: our summary
  // goes to stderr then, so stdout stays one valid document.
  FILE* out = config_.summary_to_stderr ? stderr : stdout;
  // The report's headline and a line per kernel, sized to the terminal.
  std::fprintf(out, "\n%s\n",
               roofline::render_summary_text(results_, {.sku = sku.sku, .sku_reason = sku.reason},
                                             terminal_columns(out))
                   .c_str());
  for (const auto& c : results_.ceilings)
    std::fprintf(out, "ceiling %-12s %s%s (median; best %s) from %s\n", c.name.c_str(),
                 roofline::si(c.value).c_str(), c.unit.c_str(),
                 c.best ? roofline::si(*c.best).c_str() : "-", c.method.c_str());
  if (results_.ceilings.empty())
    std::fprintf(out, "no ceiling was measured: %% of roof and bound are left empty\n");
  else if (sku.sku != nullptr) {
    std::fprintf(out, "\nvendor-claim verdict (%s):\n", sku.reason.c_str());
    for (const std::string& line : roofline::verdict_lines(results_))
      std::fprintf(out, "  %s\n", line.c_str());
  }
  std::fprintf(out, "wrote results.json, benchmarks.json, roofline.svg, report.html to %s\n",
               config_.out_dir.string().c_str());
  return static_cast<std::size_t>(std::count_if(
      results_.kernels.begin(), results_.kernels.end(),
      [](const auto& k) { return k.status == "failed_validation" || k.status == "error"; }));
}

}  // namespace rl::bench
