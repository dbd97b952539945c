// Validating, warming up and timing one instance at a time on the device, as
// the measurement policy (rl/bench/policy.hpp) says: cold and batch samples
// behind the blocking kernel, repetitions sampled until the noise target or
// the time budget, throttled samples discarded and retaken.  Owns the device
// side (per device: stream, L2 flusher, blocking kernel, event timer; the
// clock sampler) and the one workload alive at a time.  An instance runs on
// its record's device (KernelRecord::device, default 0), made current while
// it is built, validated and timed; device 0 is current again after.
#pragma once

#include "bench_entry.hpp"
#include "rl/bench/counters.hpp"
#include "rl/bench/nvml.hpp"
#include "rl/bench/options.hpp"
#include "rl/bench/policy.hpp"
#include "rl/bench/timing.hpp"
#include "rl/registry.hpp"

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>

namespace rl::bench {

struct MeasurerConfig {
  std::uint64_t seed = 1;
  SamplingPolicy sampling;
  int repetitions = kDefaultRepetitions;  // Google Benchmark's, for the per-repetition budget
  std::size_t l2_bytes = 0;  // device 0's L2; a device's flusher covers its own where it says
  std::optional<std::filesystem::path> dump_tensors;  // --dump-tensors DIR
};

class Measurer {
 public:
  Measurer(MeasurerConfig config, Nvml* nvml);
  ~Measurer();
  Measurer(const Measurer&) = delete;
  Measurer& operator=(const Measurer&) = delete;

  // Checks the entry fits in free device memory, validates it, warms it up
  // (the fastest warm-up launch sets the batch size) and dumps its tensors
  // when asked.  A shortfall or a failed validation marks it failed, with
  // its status and error in entry.result.
  void prepare(BenchEntry& entry);
  // One repetition of one kind: samples until the policy says stop.
  // Returns false when an interrupt came first (entry.interrupted is set).
  bool sample_repetition(BenchEntry& entry, SampleKind kind);
  // The clock sampler runs only while samples are timed.
  void set_sampling_clocks(bool active);
  // Clocks, power and temperature seen since the entry started.
  ClockWindow clock_window(const BenchEntry& entry) const;
  // How the entry's live workload did its work (a library's algorithm), "".
  std::string notes_of(const BenchEntry& entry) const;
  // --counters: one more call of the entry's workload's run() on its device
  // and stream, counted by `session`.  Called after its timed samples (the
  // harness does it when the benchmark reports), so the count is never part
  // of a sample.
  roofline::KernelCounters count(BenchEntry& entry, CounterSession& session);
  // Frees the workload when `entry` owns it (its benchmark is over).
  void release_workload_of(const BenchEntry& entry);

 private:
  Workload& workload_for(BenchEntry& entry);
  // The instance declares more device memory than is free now (after the
  // previous benchmark's buffers are released): the skip reason.
  std::optional<std::string> does_not_fit(const BenchEntry& entry);
  // One sample of `kind`: seconds per launch.  Queued behind the blocking
  // kernel; a blocker that timed out turns blocking off for the entry and the
  // sample is retaken.
  struct DeviceTools;
  double time_sample(DeviceTools& tools, BenchEntry& entry, Workload& workload, SampleKind kind);
  // A clock-lowering throttle reason is set now (NVML, or the test hook).
  bool throttled_now();

  // What times work on one device, made on that device.
  struct DeviceTools {
    DeviceTools(int device, std::size_t l2_bytes);
    ~DeviceTools();
    DeviceTools(const DeviceTools&) = delete;
    DeviceTools& operator=(const DeviceTools&) = delete;
    int device;
    cudaStream_t stream = nullptr;
    std::unique_ptr<EventTimer> timer;
    std::unique_ptr<LaunchBlocker> blocker;
    std::unique_ptr<L2Flusher> flusher;
  };
  // The tools of `device`, made on first use (device 0's in the constructor,
  // as before there were several).
  DeviceTools& tools_for(int device);
  // Frees the live workload on the device it was built on.
  void drop_workload();

  MeasurerConfig config_;
  Nvml* nvml_;
  std::unique_ptr<ClockSampler> sampler_;
  std::map<int, std::unique_ptr<DeviceTools>> tools_;
  // One workload alive at a time, so large-preset buffers do not accumulate.
  std::unique_ptr<Workload> workload_;
  const BenchEntry* workload_owner_ = nullptr;
  int workload_device_ = 0;
  // RL_BENCH_TEST_THROTTLE_EVERY=N (tests only): every Nth throttle check
  // reports hw_thermal_slowdown, so the discard path runs without a GPU.
  std::optional<std::uint64_t> throttle_every_;
  std::uint64_t throttle_checks_ = 0;
};

}  // namespace rl::bench
