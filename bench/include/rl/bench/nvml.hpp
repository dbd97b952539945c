// NVML, loaded at run time with dlopen so the harness runs where the driver's
// libnvidia-ml.so.1 is missing (and says so in the context).  nvml.h is not
// included: the few entry points used are declared here with NVML's C ABI.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "rl/roofline/topology.hpp"

namespace rl::bench {

// nvmlClocksEventReasons bits (nvml.h, "ClocksEventReason"/"ClocksThrottleReason").
inline constexpr std::uint64_t kNvmlReasonGpuIdle = 0x1;
inline constexpr std::uint64_t kNvmlReasonApplicationsClocksSetting = 0x2;
inline constexpr std::uint64_t kNvmlReasonSyncBoost = 0x10;
inline constexpr std::uint64_t kNvmlReasonDisplayClockSetting = 0x100;
// Reasons that say where a clock was put, not that power or heat pulled it
// down: idle, application clocks, sync boost (clocks matched across GPUs),
// display clock setting.
inline constexpr std::uint64_t kNvmlReasonsNotThrottling =
    kNvmlReasonGpuIdle | kNvmlReasonApplicationsClocksSetting | kNvmlReasonSyncBoost |
    kNvmlReasonDisplayClockSetting;

// Names of the set bits ("sw_power_cap", "hw_thermal_slowdown", ...); unknown
// bits as "unknown_0x...".
std::vector<std::string> throttle_reason_names(std::uint64_t mask);
// True when a clock-lowering reason is set (power cap, thermal, hardware
// slowdown, power brake); kNvmlReasonsNotThrottling alone is not throttling.
bool is_throttling(std::uint64_t mask);

class Nvml {
 public:
  // nullptr, with the reason in *why, when the library or the device is not
  // usable.  `uuid` is the CUDA device UUID ("GPU-..."); when NVML does not
  // know it, the device with the same index is used.
  static std::unique_ptr<Nvml> open(const std::string& uuid, unsigned index, std::string* why);
  ~Nvml();
  Nvml(const Nvml&) = delete;
  Nvml& operator=(const Nvml&) = delete;

  std::string driver_version() const;  // "" when NVML cannot say
  std::optional<double> sm_clock_mhz() const;
  std::optional<double> sm_max_clock_mhz() const;
  std::optional<double> memory_clock_mhz() const;
  std::optional<double> memory_max_clock_mhz() const;
  std::optional<bool> ecc_enabled() const;
  std::optional<bool> persistence_mode() const;
  std::optional<double> power_limit_w() const;
  std::optional<std::uint64_t> clock_event_reasons() const;
  std::optional<double> power_w() const;        // board power draw now
  std::optional<double> temperature_c() const;  // GPU core temperature now

  // The node's topology for the CUDA devices named by `cuda_uuids` (index i =
  // CUDA device i, found in NVML by its UUID, else by index i; `names` the
  // CUDA names): PCI bus id, NUMA node, PCIe links, and per pair the path
  // (NV<n> or the PCIe common ancestor) with NVLink count and generation.
  // Source "unavailable" with the reason when NVML lacks the pair query;
  // other missing calls leave their fields unknown and are named in the note.
  roofline::Topology topology(const std::vector<std::string>& cuda_uuids,
                              const std::vector<std::string>& names) const;

  struct Api;  // the resolved function pointers (nvml.cpp)

 private:
  Nvml() = default;
  void* library_ = nullptr;
  void* device_ = nullptr;  // nvmlDevice_t
  std::unique_ptr<Api> api_;
};

// What the sampler saw in a time window.
struct ClockWindow {
  std::size_t samples = 0;
  std::optional<double> mean_sm_mhz;
  std::optional<double> mean_memory_mhz;
  std::optional<double> mean_power_w;
  std::optional<double> mean_temperature_c;
  std::vector<std::string> throttle_reasons;  // union over samples, throttling ones only
  double throttled_fraction = 0;              // samples with a throttling reason / samples
  bool throttled() const { return !throttle_reasons.empty(); }
};

// Samples the SM and memory clocks, power, temperature and the clock-event
// reasons every `period` on a background thread, only while the harness has
// it active (while samples are being timed); the harness asks for the window
// of each benchmark afterwards.
class ClockSampler {
 public:
  using Clock = std::chrono::steady_clock;
  ClockSampler(const Nvml& nvml, std::chrono::milliseconds period);
  ~ClockSampler();
  ClockSampler(const ClockSampler&) = delete;
  ClockSampler& operator=(const ClockSampler&) = delete;

  ClockWindow window(Clock::time_point begin, Clock::time_point end) const;
  // On while a kernel's samples are timed, off otherwise (starts off).
  void set_active(bool active);

  struct Sample {
    Clock::time_point when;
    std::optional<double> sm_mhz;
    std::uint64_t reasons = 0;
    std::optional<double> memory_mhz;
    std::optional<double> power_w;
    std::optional<double> temperature_c;
  };
  // The summary of a list of samples (exposed for tests).
  static ClockWindow summarize(const std::vector<Sample>& samples);

 private:
  void loop();
  const Nvml& nvml_;
  const std::chrono::milliseconds period_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::vector<Sample> samples_;
  bool active_ = false;
  std::atomic<bool> stop_{false};
  std::thread thread_;  // last: starts after every member above exists
};

}  // namespace rl::bench
