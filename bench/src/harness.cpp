#include "harness.hpp"

#include "rl/bench/assembly.hpp"
#include "rl/bench/gbench.hpp"
#include "rl/roofline/model.hpp"
#include "rl/roofline/report.hpp"
#include "rl/roofline/results_io.hpp"
#include "rl/roofline/sku.hpp"
#include "rl/roofline/svg.hpp"
#include "rl/roofline/verdict.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace rl::bench {

namespace {

constexpr std::chrono::milliseconds kClockSamplePeriod{10};
// Warm-up launches before the launch time that picks the batch size is taken.
constexpr int kWarmupLaunches = 3;

std::optional<std::size_t> abort_after_from_env() {
  const char* value = std::getenv("RL_BENCH_TEST_ABORT_AFTER");
  if (value == nullptr || *value == '\0') return std::nullopt;
  return static_cast<std::size_t>(std::strtoull(value, nullptr, 10));
}

}  // namespace

Harness::Harness(HarnessConfig config, roofline::Context context, std::unique_ptr<Nvml> nvml)
    : config_(std::move(config)), nvml_(std::move(nvml)), abort_after_(abort_after_from_env()) {
  results_.context = std::move(context);
  results_.context.size_preset = std::string(size_preset_name(config_.preset));
  results_.context.l2_flushed = config_.flush_l2;
  if (nvml_) sampler_ = std::make_unique<ClockSampler>(*nvml_, kClockSamplePeriod);
  RL_CUDA_CHECK(cudaStreamCreate(&stream_));
  timer_ = std::make_unique<EventTimer>();
  if (config_.flush_l2)
    flusher_ =
        std::make_unique<L2Flusher>(static_cast<std::size_t>(results_.context.device.l2_bytes));
}

Harness::~Harness() {
  workload_.reset();
  flusher_.reset();
  timer_.reset();
  if (stream_ != nullptr) cudaStreamDestroy(stream_);
}

void Harness::register_benchmarks() {
  // Ceilings first: every later kernel's roof is computed from them.
  std::vector<const KernelRecord*> records;
  for (const auto& record : kernel_registry())
    if (!record.ceiling.empty()) records.push_back(&record);
  if (!config_.ceilings_only)
    for (const auto& record : kernel_registry())
      if (record.ceiling.empty()) records.push_back(&record);

  const std::string filter = benchmark::GetBenchmarkFilter();
  for (const KernelRecord* record : records) {
    const std::optional<std::string> not_here = cannot_run_here(*record);
    for (const Shape& shape : record->shapes(config_.preset)) {
      BenchEntry& entry = entries_.emplace_back();
      entry.record = record;
      entry.shape = shape;
      entry.name = record->name + "/" + shape.to_string();
      entry.cost = record->cost(shape);
      describe(entry);
      if (not_here) {
        // Recorded as skipped (when the filter selects it), never registered.
        if (matches_benchmark_filter(entry.name + "/manual_time", filter)) {
          entry.result.status = "skipped";
          entry.result.error = *not_here;
          results_.kernels.push_back(entry.result);
        }
        continue;
      }
      by_name_[entry.name] = &entry;
      BenchEntry* ptr = &entry;
      benchmark::RegisterBenchmark(entry.name.c_str(),
                                   [this, ptr](benchmark::State& state) { body(state, *ptr); })
          ->UseManualTime()
          ->Unit(benchmark::kMicrosecond)
          ->ComputeStatistics(
              "min",
              [](const std::vector<double>& v) { return *std::min_element(v.begin(), v.end()); })
          ->ComputeStatistics("max", [](const std::vector<double>& v) {
            return *std::max_element(v.begin(), v.end());
          });
    }
  }
}

std::size_t Harness::run() {
  CollectingReporter reporter(
      std::unique_ptr<benchmark::BenchmarkReporter>(benchmark::CreateDefaultDisplayReporter()),
      config_.display_aggregates_only,
      [this](const std::vector<benchmark::BenchmarkReporter::Run>& runs) { on_runs(runs); });
  const std::size_t count = benchmark::RunSpecifiedBenchmarks(&reporter);
  flush();  // also when nothing matched the filter: an empty but valid results.json
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

double Harness::time_sample(Workload& workload, int launches) {
  if (flusher_) flusher_->flush(stream_);
  timer_->start(stream_);
  for (int i = 0; i < launches; ++i) workload.run(stream_);
  timer_->stop(stream_);
  const double seconds = timer_->seconds();
  RL_CUDA_CHECK(cudaGetLastError());
  return seconds / launches;
}

std::optional<std::string> Harness::cannot_run_here(const KernelRecord& record) const {
  const roofline::Context& context = results_.context;
  if (record.gpu_only && context.backend == "emulator")
    return "GPU-only kernel: the emulator cannot run it (covered by static checks)";
  if (record.min_cc > 0) {
    const std::string& cc = context.device.compute_capability;  // "9.0"
    const auto dot = cc.find('.');
    const int device_cc = dot == std::string::npos ? 0
                                                   : std::atoi(cc.substr(0, dot).c_str()) * 10 +
                                                         std::atoi(cc.substr(dot + 1).c_str());
    if (device_cc < record.min_cc)
      return "needs compute capability " + std::to_string(record.min_cc / 10) + "." +
             std::to_string(record.min_cc % 10) + ", the device has " + cc;
  }
  return std::nullopt;
}

void Harness::describe(BenchEntry& entry) {
  roofline::KernelResult& result = entry.result;
  const KernelRecord& record = *entry.record;
  result.name = record.name;
  result.family = record.family;
  result.variant = record.variant;
  result.precision = record.precision;
  result.baseline = record.baseline;
  result.shape = entry.shape.dims;
  set_cost(result, entry.cost);
}

void Harness::prepare(BenchEntry& entry) {
  entry.prepared = true;
  entry.started = std::chrono::steady_clock::now();
  roofline::KernelResult& result = entry.result;
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
  double fastest = 0;
  for (int i = 0; i < kWarmupLaunches; ++i) {
    const double seconds = time_sample(workload, 1);
    fastest = i == 0 ? seconds : std::min(fastest, seconds);
  }
  entry.launches_per_sample = launches_per_sample(fastest);
}

void Harness::body(benchmark::State& state, BenchEntry& entry) {
  try {
    if (!entry.prepared) prepare(entry);
    if (entry.failed) {
      state.SkipWithError(entry.result.error.c_str());
      return;
    }
    Workload& workload = workload_for(entry);
    for (auto _ : state) state.SetIterationTime(time_sample(workload, entry.launches_per_sample));
    set_counters(state.counters, entry.cost,
                 pct_of_roof_at_one_second(entry.result, results_.ceilings));
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
  roofline::KernelResult result = entry.result;
  const ClockWindow window =
      sampler_ ? sampler_->window(entry.started, std::chrono::steady_clock::now()) : ClockWindow{};
  if (!entry.failed) {
    std::vector<double> seconds = repetition_seconds(runs);
    if (seconds.empty()) {
      result.status = "error";
      result.error = runs.front().error_occurred ? runs.front().error_message
                                                 : "no timed repetition was reported";
    } else {
      set_timing(result, std::move(seconds));
      set_clocks(result, window);
      result.status = "ok";
      if (!entry.record->ceiling.empty()) {
        roofline::Ceiling ceiling =
            measured_ceiling(result, entry.record->ceiling, entry.shape.to_string(), window);
        // A library ceiling says which algorithm its heuristic picked.
        if (workload_owner_ == &entry && workload_)
          if (const std::string notes = workload_->notes(); !notes.empty())
            ceiling.method += "; " + notes;
        merge_ceiling(results_.ceilings, std::move(ceiling));
        // Datasheet figure and derived peak at the observed clock, from the
        // matched SKU row (nothing for an unknown device).
        roofline::attach_vendor_claims(results_);
      }
    }
  }
  results_.kernels.push_back(std::move(result));
  // Every kernel's roof from the ceilings measured so far (ceilings run first,
  // so normally all of them); without ceilings the roof fields stay absent.
  roofline::apply_roofline(results_);
  if (workload_owner_ == &entry) {
    workload_.reset();
    workload_owner_ = nullptr;
  }
  flush();
  ++reported_;
  if (abort_after_ && reported_ >= *abort_after_) {
    // Simulated crash for the partial-results test: no cleanup, no final write.
    std::fprintf(stderr, "RL_BENCH_TEST_ABORT_AFTER=%zu: exiting as if crashed\n", *abort_after_);
    std::_Exit(70);
  }
}

void Harness::flush() const {
  roofline::write_results_atomic(config_.out_dir / "results.json", results_);
}

std::size_t Harness::finish() {
  const roofline::SkuMatch sku = roofline::match_sku(results_.context.device);
  roofline::write_file_atomic(config_.out_dir / "roofline.svg",
                              roofline::render_roofline_svg(results_));
  roofline::write_file_atomic(
      config_.out_dir / "report.html",
      roofline::render_report_html(results_, {.sku = sku.sku, .sku_reason = sku.reason}));

  int name_width = 6;
  int shape_width = 5;
  for (const auto& k : results_.kernels) {
    name_width = std::max(name_width, static_cast<int>(k.name.size()));
    shape_width = std::max(shape_width, static_cast<int>(Shape{k.shape}.to_string().size()));
  }
  std::printf("\n%-*s  %-*s  %-17s %11s %10s %10s %7s  %s\n", name_width, "kernel", shape_width,
              "shape", "status", "median us", "GB/s", "GFLOP/s", "% roof", "bound");
  for (const auto& k : results_.kernels) {
    const std::string shape = Shape{k.shape}.to_string();
    if (!k.time_s) {
      std::printf("%-*s  %-*s  %-17s %s\n", name_width, k.name.c_str(), shape_width, shape.c_str(),
                  k.status.c_str(), k.error.c_str());
      continue;
    }
    char pct[16] = "-";
    if (k.pct_of_roof) std::snprintf(pct, sizeof pct, "%.1f", *k.pct_of_roof);
    std::printf("%-*s  %-*s  %-17s %11.3f %10.2f %10.2f %7s  %s\n", name_width, k.name.c_str(),
                shape_width, shape.c_str(), k.status.c_str(), k.time_s->median * 1e6,
                k.achieved_bytes_per_s * 1e-9, k.achieved_flops_per_s * 1e-9, pct,
                k.bound.empty() ? "-" : k.bound.c_str());
  }
  for (const auto& c : results_.ceilings)
    std::printf("ceiling %-12s %s%s (best; median %s) from %s\n", c.name.c_str(),
                roofline::si(c.value).c_str(), c.unit.c_str(),
                c.median ? roofline::si(*c.median).c_str() : "-", c.method.c_str());
  if (results_.ceilings.empty())
    std::printf("no ceiling was measured: %% of roof and bound are left empty\n");
  else if (sku.sku == nullptr)
    std::printf("no vendor-claim verdict: %s\n", sku.reason.c_str());
  else {
    std::printf("\nvendor-claim verdict (%s):\n", sku.reason.c_str());
    for (const std::string& line : roofline::verdict_lines(results_))
      std::printf("  %s\n", line.c_str());
  }
  if (results_.context.backend == "emulator")
    std::printf("emulator backend: times are CPU emulation, not GPU performance\n");
  std::printf("wrote results.json, benchmarks.json, roofline.svg, report.html to %s\n",
              config_.out_dir.string().c_str());
  return static_cast<std::size_t>(std::count_if(
      results_.kernels.begin(), results_.kernels.end(),
      [](const auto& k) { return k.status == "failed_validation" || k.status == "error"; }));
}

}  // namespace rl::bench
