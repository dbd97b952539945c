#include "measurer.hpp"

#include "dump_instance.hpp"
#include "rl/bench/interrupt.hpp"
#include "rl/bench/test_hooks.hpp"
#include "rl/check.hpp"
#include "rl/cuda.hpp"
#include "rl/scoped_device.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace rl::bench {

namespace {

constexpr std::chrono::milliseconds kClockSamplePeriod{10};
// Warm-up launches before the launch time that picks the batch size is taken.
constexpr int kWarmupLaunches = 3;

double seconds_since(std::chrono::steady_clock::time_point begin) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
}

// The device whose stream times the entry's work (KernelRecord::device).
int device_of(const BenchEntry& entry) {
  return entry.record->device ? entry.record->device(entry.shape) : 0;
}

// The L2 a device's flusher must cover: that device's own (a node may mix
// GPUs), or the run context's (device 0's) where the query gives none.
std::size_t l2_bytes_of(int device, std::size_t fallback) {
  int bytes = 0;
  if (cudaDeviceGetAttribute(&bytes, cudaDevAttrL2CacheSize, device) != cudaSuccess || bytes <= 0) {
    (void)cudaGetLastError();
    return fallback;
  }
  return static_cast<std::size_t>(bytes);
}

}  // namespace

Measurer::DeviceTools::DeviceTools(int device_index, std::size_t l2_bytes) : device(device_index) {
  const ScopedDevice on(device);
  RL_CUDA_CHECK(cudaStreamCreate(&stream));
  timer = std::make_unique<EventTimer>();
  blocker = std::make_unique<LaunchBlocker>();
  flusher = std::make_unique<L2Flusher>(l2_bytes);
}

Measurer::DeviceTools::~DeviceTools() {
  try {
    const ScopedDevice on(device);
    flusher.reset();
    blocker.reset();
    timer.reset();
    if (stream != nullptr) cudaStreamDestroy(stream);
  } catch (const CudaError&) {
    // The device cannot be made current: its resources go with the process.
  }
}

Measurer::DeviceTools& Measurer::tools_for(int device) {
  std::unique_ptr<DeviceTools>& tools = tools_[device];
  if (!tools) tools = std::make_unique<DeviceTools>(device, l2_bytes_of(device, config_.l2_bytes));
  return *tools;
}

void Measurer::drop_workload() {
  if (workload_) {
    const ScopedDevice on(workload_device_);
    workload_.reset();
  }
  workload_owner_ = nullptr;
}

Measurer::Measurer(MeasurerConfig config, Nvml* nvml)
    : config_(std::move(config)),
      nvml_(nvml),
      throttle_every_(count_from_env("RL_BENCH_TEST_THROTTLE_EVERY")) {
  if (throttle_every_ && *throttle_every_ == 0) throttle_every_.reset();
  if (nvml_) sampler_ = std::make_unique<ClockSampler>(*nvml_, kClockSamplePeriod);
  tools_for(0);
}

Measurer::~Measurer() {
  try {
    drop_workload();
  } catch (const CudaError&) {
    workload_.reset();  // its device cannot be made current: freed from this one
  }
  tools_.clear();
}

void Measurer::set_sampling_clocks(bool active) {
  if (sampler_) sampler_->set_active(active);
}

ClockWindow Measurer::clock_window(const BenchEntry& entry) const {
  return sampler_ ? sampler_->window(entry.started, std::chrono::steady_clock::now())
                  : ClockWindow{};
}

std::string Measurer::notes_of(const BenchEntry& entry) const {
  return workload_owner_ == &entry && workload_ ? workload_->notes() : std::string();
}

Workload& Measurer::workload_for(BenchEntry& entry) {
  if (workload_owner_ != &entry) {
    drop_workload();  // free the previous benchmark's buffers first
    // Built on the current device, the entry's (prepare, sample_repetition).
    RL_CUDA_CHECK(cudaGetDevice(&workload_device_));
    workload_ = entry.record->make_workload(entry.shape, config_.seed);
    workload_owner_ = &entry;
  }
  return *workload_;
}

roofline::KernelCounters Measurer::count(BenchEntry& entry, CounterSession& session) {
  const ScopedDevice on(device_of(entry));
  DeviceTools& tools = tools_for(device_of(entry));
  Workload& workload = workload_for(entry);
  // No timed launch is still in flight when the counting starts.
  RL_CUDA_CHECK(cudaStreamSynchronize(tools.stream));
  return session.count([&] { workload.run(tools.stream); }, tools.stream);
}

void Measurer::release_workload_of(const BenchEntry& entry) {
  if (workload_owner_ != &entry) return;
  drop_workload();
}

std::optional<std::string> Measurer::does_not_fit(const BenchEntry& entry) {
  if (!entry.record->device_bytes) return std::nullopt;
  const std::size_t needed = entry.record->device_bytes(entry.shape);
  // The previous benchmark's buffers are freed first: they are not this
  // instance's competition.
  drop_workload();
  std::size_t free_bytes = 0, total_bytes = 0;
  RL_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  return memory_shortfall(needed, free_bytes);
}

void Measurer::prepare(BenchEntry& entry) {
  entry.prepared = true;
  entry.started = std::chrono::steady_clock::now();
  roofline::KernelResult& result = entry.result;
  if (entry.record->host_synchronous) entry.blocking = false;
  // Built, validated and timed on its device; device 0 is current again after.
  const ScopedDevice on(device_of(entry));
  DeviceTools& tools = tools_for(device_of(entry));
  if (const std::optional<std::string> too_big = does_not_fit(entry)) {
    // Data, not an error: where a variant runs out of memory is a result.
    entry.failed = true;
    result.status = roofline::Status::skipped;
    result.error = *too_big;
    return;
  }
  Workload& workload = workload_for(entry);
  const Validation validation = workload.validate(tools.stream);
  result.validated = validation.passed;
  result.max_rel_err = validation.max_rel_err;
  if (!validation.passed) {
    entry.failed = true;
    result.status = roofline::Status::failed_validation;
    result.error = validation.detail.empty() ? "validation failed" : validation.detail;
    return;
  }
  // Warm-up: cold single launches (through the blocker, so one that cannot
  // be held is found here); the fastest sets the batch size.
  double fastest = 0;
  for (int i = 0; i < kWarmupLaunches; ++i) {
    const double seconds = time_sample(tools, entry, workload, SampleKind::cold);
    fastest = i == 0 ? seconds : std::min(fastest, seconds);
  }
  entry.batch.launches_per_sample = launches_per_sample(fastest);
  if (config_.dump_tensors)
    dump_instance(*config_.dump_tensors, *entry.record, entry.shape, config_.seed,
                  workload.tensors());
}

double Measurer::time_sample(DeviceTools& tools, BenchEntry& entry, Workload& workload,
                             SampleKind kind) {
  const int launches = kind == SampleKind::cold ? 1 : entry.batch.launches_per_sample;
  while (true) {
    // The other devices' L2s first (other_devices_to_flush), waited for, so
    // that no flush runs inside the timed window.
    if (kind == SampleKind::cold) {
      for (int d : other_devices_to_flush(entry.record->min_devices, tools.device,
                                          visible_device_count())) {
        DeviceTools& other = tools_for(d);
        const ScopedDevice on(d);
        other.flusher->flush(other.stream);
        RL_CUDA_CHECK(cudaStreamSynchronize(other.stream));
      }
    }
    if (entry.blocking) tools.blocker->block(tools.stream);
    if (kind == SampleKind::cold) tools.flusher->flush(tools.stream);
    tools.timer->start(tools.stream);
    for (int i = 0; i < launches; ++i) workload.run(tools.stream);
    tools.timer->stop(tools.stream);
    if (entry.blocking) tools.blocker->release();
    const double seconds = tools.timer->seconds();
    RL_CUDA_CHECK(cudaGetLastError());
    if (!entry.blocking || !tools.blocker->timed_out()) return seconds / launches;
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

bool Measurer::throttled_now() {
  if (throttle_every_) return ++throttle_checks_ % *throttle_every_ == 0;
  if (!nvml_) return false;
  return is_throttling(nvml_->clock_event_reasons().value_or(0));
}

bool Measurer::sample_repetition(BenchEntry& entry, SampleKind kind) {
  const ScopedDevice on(device_of(entry));
  DeviceTools& tools = tools_for(device_of(entry));
  Workload& workload = workload_for(entry);
  SampleSet& set = kind == SampleKind::cold ? entry.cold : entry.batch;
  const double budget = repetition_budget_s(config_.sampling, config_.repetitions, 2);
  std::vector<double> samples;
  const auto begin = std::chrono::steady_clock::now();
  std::optional<StopReason> stop;
  while (!stop) {
    if (interrupt_signal() != 0) {
      entry.interrupted = true;
      return false;
    }
    const double seconds = time_sample(tools, entry, workload, kind);
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
    test_interrupt_point("sample");
    stop = should_stop(samples, seconds_since(begin), budget, config_.sampling);
  }
  set.repetitions.push_back(std::move(samples));
  set.stopped_by.push_back(*stop);
  return true;
}

}  // namespace rl::bench
