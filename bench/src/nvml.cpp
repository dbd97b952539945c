#include "rl/bench/nvml.hpp"

#include "nvml_api.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <bit>
#include <cstdio>
#include <iterator>

namespace rl::bench {

using namespace nvml_abi;  // the names nvml.h would give (nvml_api.hpp)

namespace {

struct ReasonName {
  std::uint64_t bit;
  const char* name;
};
constexpr ReasonName kReasonNames[] = {
    {0x1, "gpu_idle"},
    {0x2, "applications_clocks_setting"},
    {0x4, "sw_power_cap"},
    {0x8, "hw_slowdown"},
    {0x10, "sync_boost"},
    {0x20, "sw_thermal_slowdown"},
    {0x40, "hw_thermal_slowdown"},
    {0x80, "hw_power_brake_slowdown"},
    {0x100, "display_clock_setting"},
};

template <typename Fn>
Fn symbol(void* library, const char* name) {
  return reinterpret_cast<Fn>(dlsym(library, name));
}

}  // namespace

std::vector<std::string> throttle_reason_names(std::uint64_t mask) {
  std::vector<std::string> names;
  std::uint64_t known = 0;
  for (const auto& [bit, name] : kReasonNames) {
    known |= bit;
    if ((mask & bit) != 0) names.emplace_back(name);
  }
  if (const std::uint64_t unknown = mask & ~known; unknown != 0) {
    char buffer[40];
    std::snprintf(buffer, sizeof buffer, "unknown_0x%llx",
                  static_cast<unsigned long long>(unknown));
    names.emplace_back(buffer);
  }
  return names;
}

bool is_throttling(std::uint64_t mask) {
  return (mask & ~kNvmlReasonsNotThrottling) != 0;
}

std::unique_ptr<Nvml> Nvml::open(const std::string& uuid, unsigned index, std::string* why) {
  void* library = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    const char* error = dlerror();
    *why = std::string("NVML not loaded: ") + (error != nullptr ? error : "dlopen failed");
    return nullptr;
  }
  std::unique_ptr<Nvml> nvml(new Nvml());
  nvml->library_ = library;
  nvml->api_ = std::make_unique<Api>();
  Api& api = *nvml->api_;
  api.init = symbol<InitFn>(library, "nvmlInit_v2");
  api.shutdown = symbol<ShutdownFn>(library, "nvmlShutdown");
  api.error_string = symbol<ErrorStringFn>(library, "nvmlErrorString");
  api.handle_by_uuid = symbol<GetHandleByUuidFn>(library, "nvmlDeviceGetHandleByUUID");
  api.handle_by_index = symbol<GetHandleByIndexFn>(library, "nvmlDeviceGetHandleByIndex_v2");
  api.driver_version = symbol<SystemGetDriverVersionFn>(library, "nvmlSystemGetDriverVersion");
  api.clock = symbol<GetClockInfoFn>(library, "nvmlDeviceGetClockInfo");
  api.max_clock = symbol<GetClockInfoFn>(library, "nvmlDeviceGetMaxClockInfo");
  api.ecc = symbol<GetEccModeFn>(library, "nvmlDeviceGetEccMode");
  api.persistence = symbol<GetPersistenceModeFn>(library, "nvmlDeviceGetPersistenceMode");
  api.power_limit = symbol<GetPowerLimitFn>(library, "nvmlDeviceGetPowerManagementLimit");
  // Renamed "clocks event reasons" in recent drivers; the old name stays exported.
  api.reasons = symbol<GetReasonsFn>(library, "nvmlDeviceGetCurrentClocksEventReasons");
  if (api.reasons == nullptr)
    api.reasons = symbol<GetReasonsFn>(library, "nvmlDeviceGetCurrentClocksThrottleReasons");
  api.power = symbol<GetPowerUsageFn>(library, "nvmlDeviceGetPowerUsage");
  api.temperature = symbol<GetTemperatureFn>(library, "nvmlDeviceGetTemperature");
  api.common_ancestor =
      symbol<GetTopologyAncestorFn>(library, "nvmlDeviceGetTopologyCommonAncestor");
  api.link_state = symbol<GetLinkStateFn>(library, "nvmlDeviceGetNvLinkState");
  api.link_version = symbol<GetLinkVersionFn>(library, "nvmlDeviceGetNvLinkVersion");
  api.link_remote_pci = symbol<GetLinkRemotePciFn>(library, "nvmlDeviceGetNvLinkRemotePciInfo_v2");
  api.link_remote_type =
      symbol<GetLinkRemoteTypeFn>(library, "nvmlDeviceGetNvLinkRemoteDeviceType");
  api.pci_info = symbol<GetPciInfoFn>(library, "nvmlDeviceGetPciInfo_v3");
  api.pcie_generation = symbol<GetUnsignedFn>(library, "nvmlDeviceGetCurrPcieLinkGeneration");
  api.pcie_width = symbol<GetUnsignedFn>(library, "nvmlDeviceGetCurrPcieLinkWidth");
  api.pcie_max_generation = symbol<GetUnsignedFn>(library, "nvmlDeviceGetMaxPcieLinkGeneration");
  api.pcie_max_width = symbol<GetUnsignedFn>(library, "nvmlDeviceGetMaxPcieLinkWidth");
  api.memory_affinity = symbol<GetMemoryAffinityFn>(library, "nvmlDeviceGetMemoryAffinity");
  if (api.init == nullptr || api.shutdown == nullptr || api.handle_by_index == nullptr) {
    *why = "NVML library lacks nvmlInit_v2/nvmlDeviceGetHandleByIndex_v2";
    api.shutdown = nullptr;  // nothing to shut down
    return nullptr;
  }
  if (const NvmlReturn rc = api.init(); rc != kNvmlSuccess) {
    *why = std::string("nvmlInit_v2 failed: ") +
           (api.error_string != nullptr ? api.error_string(rc) : std::to_string(rc));
    api.shutdown = nullptr;
    return nullptr;
  }
  NvmlDevice device = nullptr;
  bool found = api.handle_by_uuid != nullptr && !uuid.empty() &&
               api.handle_by_uuid(uuid.c_str(), &device) == kNvmlSuccess;
  if (!found) found = api.handle_by_index(index, &device) == kNvmlSuccess;
  if (!found) {
    *why = "NVML does not know CUDA device " + std::to_string(index) + " (" + uuid + ")";
    return nullptr;
  }
  nvml->device_ = device;
  return nvml;
}

Nvml::~Nvml() {
  if (api_ && api_->shutdown != nullptr) api_->shutdown();
  if (library_ != nullptr) dlclose(library_);
}

std::string Nvml::driver_version() const {
  char buffer[96] = {};
  if (api_->driver_version == nullptr ||
      api_->driver_version(buffer, sizeof buffer) != kNvmlSuccess)
    return "";
  return buffer;
}

namespace {
std::optional<double> read_clock(GetClockInfoFn fn, void* device, int type) {
  unsigned mhz = 0;
  if (fn == nullptr || fn(device, type, &mhz) != kNvmlSuccess) return std::nullopt;
  return static_cast<double>(mhz);
}
}  // namespace

std::optional<double> Nvml::sm_clock_mhz() const {
  return read_clock(api_->clock, device_, kNvmlClockSm);
}
std::optional<double> Nvml::sm_max_clock_mhz() const {
  return read_clock(api_->max_clock, device_, kNvmlClockSm);
}
std::optional<double> Nvml::memory_clock_mhz() const {
  return read_clock(api_->clock, device_, kNvmlClockMem);
}
std::optional<double> Nvml::memory_max_clock_mhz() const {
  return read_clock(api_->max_clock, device_, kNvmlClockMem);
}

std::optional<bool> Nvml::ecc_enabled() const {
  int current = 0;
  int pending = 0;
  if (api_->ecc == nullptr || api_->ecc(device_, &current, &pending) != kNvmlSuccess)
    return std::nullopt;
  return current != 0;
}

std::optional<bool> Nvml::persistence_mode() const {
  int mode = 0;
  if (api_->persistence == nullptr || api_->persistence(device_, &mode) != kNvmlSuccess)
    return std::nullopt;
  return mode != 0;
}

std::optional<double> Nvml::power_limit_w() const {
  unsigned milliwatts = 0;
  if (api_->power_limit == nullptr || api_->power_limit(device_, &milliwatts) != kNvmlSuccess)
    return std::nullopt;
  return milliwatts / 1000.0;
}

std::optional<double> Nvml::power_w() const {
  unsigned milliwatts = 0;
  if (api_->power == nullptr || api_->power(device_, &milliwatts) != kNvmlSuccess)
    return std::nullopt;
  return milliwatts / 1000.0;
}

std::optional<double> Nvml::temperature_c() const {
  unsigned celsius = 0;
  if (api_->temperature == nullptr ||
      api_->temperature(device_, kNvmlTemperatureGpu, &celsius) != kNvmlSuccess)
    return std::nullopt;
  return static_cast<double>(celsius);
}

std::optional<std::uint64_t> Nvml::clock_event_reasons() const {
  unsigned long long mask = 0;
  if (api_->reasons == nullptr || api_->reasons(device_, &mask) != kNvmlSuccess)
    return std::nullopt;
  return static_cast<std::uint64_t>(mask);
}

ClockSampler::ClockSampler(const Nvml& nvml, std::chrono::milliseconds period)
    : nvml_(nvml), period_(period), thread_([this] { loop(); }) {}

void ClockSampler::set_active(bool active) {
  {
    const std::lock_guard lock(mutex_);
    active_ = active;
  }
  wake_.notify_all();
}

ClockSampler::~ClockSampler() {
  {
    const std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void ClockSampler::loop() {
  std::unique_lock lock(mutex_);
  while (!stop_) {
    // Asleep while nothing is timed: validation and host-side preparation,
    // when the GPU idles, would pull the mean clock down.
    if (!active_) {
      wake_.wait(lock, [this] { return active_ || stop_; });
      continue;
    }
    lock.unlock();
    Sample sample{Clock::now(),
                  nvml_.sm_clock_mhz(),
                  nvml_.clock_event_reasons().value_or(0),
                  nvml_.memory_clock_mhz(),
                  nvml_.power_w(),
                  nvml_.temperature_c()};
    lock.lock();
    // Switched off while the readings were taken: they belong to host work.
    if (active_) samples_.push_back(sample);
    wake_.wait_for(lock, period_, [this] { return stop_.load(); });
  }
}

ClockWindow ClockSampler::window(Clock::time_point begin, Clock::time_point end) const {
  std::vector<Sample> inside;
  {
    const std::lock_guard lock(mutex_);
    for (const auto& sample : samples_)
      if (sample.when >= begin && sample.when <= end) inside.push_back(sample);
    // A benchmark shorter than the sampling period: the last sample before its end.
    if (inside.empty())
      for (auto it = samples_.rbegin(); it != samples_.rend(); ++it)
        if (it->when <= end) {
          inside.push_back(*it);
          break;
        }
  }
  return summarize(inside);
}

ClockWindow ClockSampler::summarize(const std::vector<Sample>& samples) {
  ClockWindow window;
  window.samples = samples.size();
  auto mean = [&](std::optional<double> Sample::*field) -> std::optional<double> {
    double sum = 0;
    std::size_t count = 0;
    for (const auto& sample : samples)
      if (const std::optional<double>& value = sample.*field) {
        sum += *value;
        ++count;
      }
    if (count == 0) return std::nullopt;
    return sum / static_cast<double>(count);
  };
  window.mean_sm_mhz = mean(&Sample::sm_mhz);
  window.mean_memory_mhz = mean(&Sample::memory_mhz);
  window.mean_power_w = mean(&Sample::power_w);
  window.mean_temperature_c = mean(&Sample::temperature_c);
  std::size_t throttled = 0;
  std::uint64_t reasons = 0;
  for (const auto& sample : samples) {
    if (is_throttling(sample.reasons)) {
      ++throttled;
      reasons |= sample.reasons;
    }
  }
  reasons &= ~kNvmlReasonsNotThrottling;
  window.throttle_reasons = throttle_reason_names(reasons);
  if (!samples.empty())
    window.throttled_fraction =
        static_cast<double>(throttled) / static_cast<double>(samples.size());
  return window;
}

}  // namespace rl::bench
