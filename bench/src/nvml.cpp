#include "rl/bench/nvml.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <bit>
#include <cstdio>
#include <iterator>

namespace rl::bench {

namespace {

// NVML's C ABI, as much of it as we call.  nvmlReturn_t is an int enum
// (0 = NVML_SUCCESS); nvmlDevice_t an opaque pointer; nvmlEnableState_t an int
// enum (1 = enabled); nvmlClockType_t: 1 = SM, 2 = memory.
using NvmlReturn = int;
using NvmlDevice = void*;
constexpr NvmlReturn kNvmlSuccess = 0;
constexpr int kNvmlClockSm = 1;
constexpr int kNvmlClockMem = 2;

using InitFn = NvmlReturn (*)();
using ShutdownFn = NvmlReturn (*)();
using ErrorStringFn = const char* (*)(NvmlReturn);
using GetHandleByUuidFn = NvmlReturn (*)(const char*, NvmlDevice*);
using GetHandleByIndexFn = NvmlReturn (*)(unsigned, NvmlDevice*);
using SystemGetDriverVersionFn = NvmlReturn (*)(char*, unsigned);
using GetClockInfoFn = NvmlReturn (*)(NvmlDevice, int, unsigned*);
using GetEccModeFn = NvmlReturn (*)(NvmlDevice, int*, int*);
using GetPersistenceModeFn = NvmlReturn (*)(NvmlDevice, int*);
using GetPowerLimitFn = NvmlReturn (*)(NvmlDevice, unsigned*);
using GetReasonsFn = NvmlReturn (*)(NvmlDevice, unsigned long long*);
using GetPowerUsageFn = NvmlReturn (*)(NvmlDevice, unsigned*);        // milliwatts
using GetTemperatureFn = NvmlReturn (*)(NvmlDevice, int, unsigned*);  // 0 = NVML_TEMPERATURE_GPU
constexpr int kNvmlTemperatureGpu = 0;

// Topology (issue 29).  nvmlPciInfo_t as nvml.h lays it out.
struct NvmlPciInfo {
  char bus_id_legacy[16];
  unsigned domain, bus, device, pci_device_id, pci_subsystem_id;
  char bus_id[32];
};
using GetTopologyAncestorFn = NvmlReturn (*)(NvmlDevice, NvmlDevice, int*);
using GetLinkStateFn = NvmlReturn (*)(NvmlDevice, unsigned, int*);         // nvmlEnableState_t
using GetLinkVersionFn = NvmlReturn (*)(NvmlDevice, unsigned, unsigned*);  // nvmlNvlinkVersion_t
using GetLinkRemotePciFn = NvmlReturn (*)(NvmlDevice, unsigned, NvmlPciInfo*);
using GetLinkRemoteTypeFn = NvmlReturn (*)(NvmlDevice, unsigned,
                                           int*);  // nvmlIntNvLinkDeviceType_t
using GetPciInfoFn = NvmlReturn (*)(NvmlDevice, NvmlPciInfo*);
using GetUnsignedFn = NvmlReturn (*)(NvmlDevice, unsigned*);
using GetMemoryAffinityFn = NvmlReturn (*)(NvmlDevice, unsigned, unsigned long*, int);
constexpr unsigned kNvmlNvlinkMaxLinks = 18;  // NVML_NVLINK_MAX_LINKS (nvml.h, R535 and later)
constexpr int kNvmlNvlinkDeviceTypeSwitch = 2;
constexpr int kNvmlAffinityScopeNode = 0;

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

struct Nvml::Api {
  InitFn init = nullptr;
  ShutdownFn shutdown = nullptr;
  ErrorStringFn error_string = nullptr;
  GetHandleByUuidFn handle_by_uuid = nullptr;
  GetHandleByIndexFn handle_by_index = nullptr;
  SystemGetDriverVersionFn driver_version = nullptr;
  GetClockInfoFn clock = nullptr;
  GetClockInfoFn max_clock = nullptr;
  GetEccModeFn ecc = nullptr;
  GetPersistenceModeFn persistence = nullptr;
  GetPowerLimitFn power_limit = nullptr;
  GetReasonsFn reasons = nullptr;
  GetPowerUsageFn power = nullptr;
  GetTemperatureFn temperature = nullptr;
  GetTopologyAncestorFn common_ancestor = nullptr;
  GetLinkStateFn link_state = nullptr;
  GetLinkVersionFn link_version = nullptr;
  GetLinkRemotePciFn link_remote_pci = nullptr;
  GetLinkRemoteTypeFn link_remote_type = nullptr;
  GetPciInfoFn pci_info = nullptr;
  GetUnsignedFn pcie_generation = nullptr, pcie_width = nullptr;
  GetUnsignedFn pcie_max_generation = nullptr, pcie_max_width = nullptr;
  GetMemoryAffinityFn memory_affinity = nullptr;
};

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

namespace {

// nvmlNvlinkVersion_t -> the NVLink generation (1.0 = 1, 2.0 = 2, 2.2 = 3,
// 3.0 = 4, 3.1 = 5, 4.0 = 6, 5.0 = 7 in nvml.h): A100 reports 4 or 5, which
// is NVLink 3, not 4 or 5.  0 for a value this table does not know.
int nvlink_generation(unsigned version) {
  constexpr int kGeneration[] = {0, 1, 2, 2, 3, 3, 4, 5};
  return version < std::size(kGeneration) ? kGeneration[version] : 0;
}

// nvmlGpuTopologyLevel_t -> nvidia-smi's word.  INTERNAL (two GPUs on one
// board, e.g. K80) sits behind the board's own PCIe switch: PIX.
std::optional<roofline::PeerPath> pcie_path(int level) {
  switch (level) {
    case 0:
    case 10:
      return roofline::PeerPath::pix;
    case 20:
      return roofline::PeerPath::pxb;
    case 30:
      return roofline::PeerPath::phb;
    case 40:
      return roofline::PeerPath::node;
    case 50:
      return roofline::PeerPath::sys;
    default:
      return std::nullopt;
  }
}

bool same_pci(const NvmlPciInfo& a, const NvmlPciInfo& b) {
  return a.domain == b.domain && a.bus == b.bus && a.device == b.device;
}

// What NVML says about one device's NVLinks: links per remote bus, links to
// NVSwitches, and the generation of the first active link.
struct DeviceLinks {
  std::vector<NvmlPciInfo> remote;  // one per active link to a GPU (or unknown remote)
  int switch_links = 0;
  int generation = 0;
};

}  // namespace

roofline::Topology Nvml::topology(const std::vector<std::string>& cuda_uuids,
                                  const std::vector<std::string>& names) const {
  const Api& api = *api_;
  roofline::Topology t;
  t.source = roofline::TopologySource::nvml;
  std::vector<std::string> missing;
  auto need = [&](const void* fn, const char* name) {
    if (fn == nullptr && std::find(missing.begin(), missing.end(), name) == missing.end())
      missing.emplace_back(name);
    return fn != nullptr;
  };
  std::vector<NvmlDevice> handles(cuda_uuids.size(), nullptr);
  std::vector<NvmlPciInfo> pci(cuda_uuids.size(), NvmlPciInfo{});
  std::vector<DeviceLinks> links(cuda_uuids.size());
  for (unsigned i = 0; i < cuda_uuids.size(); ++i) {
    roofline::TopologyDevice d;
    d.index = static_cast<int>(i);
    d.name = i < names.size() ? names[i] : "";
    bool found = api.handle_by_uuid != nullptr && !cuda_uuids[i].empty() &&
                 api.handle_by_uuid(cuda_uuids[i].c_str(), &handles[i]) == kNvmlSuccess;
    if (!found) found = api.handle_by_index(i, &handles[i]) == kNvmlSuccess;
    if (!found) {
      t.source = roofline::TopologySource::unavailable;
      t.note = "NVML does not know CUDA device " + std::to_string(i) + " (" + cuda_uuids[i] + ")";
      return t;
    }
    NvmlDevice h = handles[i];
    if (need(reinterpret_cast<const void*>(api.pci_info), "nvmlDeviceGetPciInfo_v3") &&
        api.pci_info(h, &pci[i]) == kNvmlSuccess)
      d.pci_bus_id = pci[i].bus_id;
    unsigned long nodes = 0;
    if (need(reinterpret_cast<const void*>(api.memory_affinity), "nvmlDeviceGetMemoryAffinity") &&
        api.memory_affinity(h, 1, &nodes, kNvmlAffinityScopeNode) == kNvmlSuccess && nodes != 0 &&
        (nodes & (nodes - 1)) == 0)  // exactly one node: the device's (several: none to name)
      d.numa_node = std::countr_zero(nodes);
    auto read = [&](GetUnsignedFn fn, const char* name) {
      unsigned value = 0;
      if (need(reinterpret_cast<const void*>(fn), name) && fn(h, &value) == kNvmlSuccess)
        return static_cast<int>(value);
      return 0;
    };
    d.pcie_current = {read(api.pcie_generation, "nvmlDeviceGetCurrPcieLinkGeneration"),
                      read(api.pcie_width, "nvmlDeviceGetCurrPcieLinkWidth")};
    d.pcie_max = {read(api.pcie_max_generation, "nvmlDeviceGetMaxPcieLinkGeneration"),
                  read(api.pcie_max_width, "nvmlDeviceGetMaxPcieLinkWidth")};
    // NVLinks: a device without them answers NOT_SUPPORTED for link 0.
    if (need(reinterpret_cast<const void*>(api.link_state), "nvmlDeviceGetNvLinkState") &&
        need(reinterpret_cast<const void*>(api.link_remote_pci),
             "nvmlDeviceGetNvLinkRemotePciInfo_v2")) {
      // Without these the generation stays unknown, and links into an
      // NVSwitch count as links to no GPU (no NV<n> on HGX): say so.
      need(reinterpret_cast<const void*>(api.link_version), "nvmlDeviceGetNvLinkVersion");
      need(reinterpret_cast<const void*>(api.link_remote_type),
           "nvmlDeviceGetNvLinkRemoteDeviceType");
      for (unsigned link = 0; link < kNvmlNvlinkMaxLinks; ++link) {
        int active = 0;
        if (api.link_state(h, link, &active) != kNvmlSuccess || active == 0) continue;
        unsigned version = 0;
        if (links[i].generation == 0 && api.link_version != nullptr &&
            api.link_version(h, link, &version) == kNvmlSuccess)
          links[i].generation = nvlink_generation(version);
        int type = -1;
        if (api.link_remote_type != nullptr &&
            api.link_remote_type(h, link, &type) == kNvmlSuccess &&
            type == kNvmlNvlinkDeviceTypeSwitch) {
          ++links[i].switch_links;
          continue;
        }
        NvmlPciInfo remote{};
        if (api.link_remote_pci(h, link, &remote) == kNvmlSuccess)
          links[i].remote.push_back(remote);
      }
    }
    t.devices.push_back(std::move(d));
  }
  if (!need(reinterpret_cast<const void*>(api.common_ancestor),
            "nvmlDeviceGetTopologyCommonAncestor")) {
    t.source = roofline::TopologySource::unavailable;
    t.note = "NVML lacks nvmlDeviceGetTopologyCommonAncestor: no path between devices";
    return t;
  }
  for (std::size_t a = 0; a < handles.size(); ++a)
    for (std::size_t b = a + 1; b < handles.size(); ++b) {
      roofline::TopologyPair p{.a = static_cast<int>(a), .b = static_cast<int>(b)};
      // Direct links from a to b, plus the links both have into the NVSwitch
      // fabric (HGX: every GPU reaches every other through all of its links,
      // which nvidia-smi shows as NV18 on H100).
      for (const auto& remote : links[a].remote) p.nvlink_count += same_pci(remote, pci[b]);
      p.nvlink_count += std::min(links[a].switch_links, links[b].switch_links);
      int level = -1;
      if (p.nvlink_count > 0) {
        p.path = roofline::PeerPath::nvlink;
        p.nvlink_generation = links[a].generation;
      } else if (api.common_ancestor(handles[a], handles[b], &level) == kNvmlSuccess &&
                 pcie_path(level)) {
        p.path = *pcie_path(level);
      } else {
        missing.push_back("path GPU" + std::to_string(a) + "-GPU" + std::to_string(b));
        continue;
      }
      t.pairs.push_back(p);
    }
  for (const auto& name : missing) t.note += (t.note.empty() ? "unknown: " : ", ") + name;
  return t;
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
