// The counter plan through CUPTI's Profiler Host API (CUDA 13): a host
// object for the chip answers which base metrics and submetrics exist, and a
// config image of the chosen metrics says how many replay passes they take.
// Nothing here touches a device or the driver (libcupti does not link
// libcuda), so it runs on any machine with the toolkit's libcupti.
// Compiled only when CMake found CUPTI (roofline/CMakeLists.txt).
#include "counter_plan_choice.hpp"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <map>
#include <utility>

#include <cupti_profiler_host.h>
#include <cupti_result.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

namespace rl::roofline {

namespace {

void check(CUptiResult result, std::string_view call) {
  if (result == CUPTI_SUCCESS) return;
  const char* text = nullptr;
  cuptiGetResultString(result, &text);
  throw CounterPlanError(fmt::format("CUPTI {} failed: {}", call, text ? text : "unknown error"));
}

bool iequal(std::string_view a, std::string_view b) {
  return std::ranges::equal(a, b, [](char x, char y) {
    return std::tolower(static_cast<unsigned char>(x)) ==
           std::tolower(static_cast<unsigned char>(y));
  });
}

// One profiler host object (range profiler) for one chip.
class HostObject {
 public:
  // `counter_availability`: a device's image (cuptiProfilerGetCounterAvailability),
  // which leaves out counters that device cannot collect; empty for the plan.
  explicit HostObject(const std::string& chip,
                      std::span<const std::uint8_t> counter_availability = {}) {
    CUpti_Profiler_Host_Initialize_Params p{};
    p.structSize = CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE;
    p.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
    p.pChipName = chip.c_str();
    p.pCounterAvailabilityImage =
        counter_availability.empty() ? nullptr : counter_availability.data();
    check(cuptiProfilerHostInitialize(&p), "cuptiProfilerHostInitialize(" + chip + ")");
    object_ = p.pHostObject;
  }
  ~HostObject() {
    CUpti_Profiler_Host_Deinitialize_Params p{};
    p.structSize = CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE;
    p.pHostObject = object_;
    cuptiProfilerHostDeinitialize(&p);
  }
  HostObject(const HostObject&) = delete;
  HostObject& operator=(const HostObject&) = delete;
  CUpti_Profiler_Host_Object* get() const { return object_; }

 private:
  CUpti_Profiler_Host_Object* object_ = nullptr;
};

// The chip's base metrics by type, and each one's submetrics on demand.
class ChipMetrics {
 public:
  ChipMetrics(const HostObject& host, std::string chip) : host_(host), chip_(std::move(chip)) {
    for (CUpti_MetricType type :
         {CUPTI_METRIC_TYPE_COUNTER, CUPTI_METRIC_TYPE_RATIO, CUPTI_METRIC_TYPE_THROUGHPUT}) {
      CUpti_Profiler_Host_GetBaseMetrics_Params p{};
      p.structSize = CUpti_Profiler_Host_GetBaseMetrics_Params_STRUCT_SIZE;
      p.pHostObject = host_.get();
      p.metricType = type;
      check(cuptiProfilerHostGetBaseMetrics(&p), "cuptiProfilerHostGetBaseMetrics");
      for (std::size_t i = 0; i < p.numMetrics; ++i) base_.emplace(p.ppMetricNames[i], type);
    }
  }

  // "dram__bytes_read.sum" splits into the base metric "dram__bytes_read"
  // and the suffix ".sum", which must be one of the base's submetrics.
  std::optional<std::string> why_not(std::string_view name) {
    const auto dot = name.find('.');
    if (dot == std::string_view::npos)
      return fmt::format("{} names no rollup (.sum, .avg, ...)", name);
    const std::string base(name.substr(0, dot));
    const auto found = base_.find(base);
    if (found == base_.end()) return fmt::format("{} has no base metric {}", chip_, base);
    const std::string suffix(name.substr(dot));
    const auto& subs = submetrics(found->first, found->second);
    if (std::find(subs.begin(), subs.end(), suffix) == subs.end())
      return fmt::format("{} has {} but not its submetric {}", chip_, base, suffix);
    return std::nullopt;
  }

 private:
  const std::vector<std::string>& submetrics(const std::string& base, CUpti_MetricType type) {
    auto [it, added] = submetrics_.try_emplace(base);
    if (!added) return it->second;
    CUpti_Profiler_Host_GetSubMetrics_Params p{};
    p.structSize = CUpti_Profiler_Host_GetSubMetrics_Params_STRUCT_SIZE;
    p.pHostObject = host_.get();
    p.metricType = type;
    p.pMetricName = base.c_str();
    check(cuptiProfilerHostGetSubMetrics(&p), "cuptiProfilerHostGetSubMetrics(" + base + ")");
    it->second.assign(p.ppSubMetrics, p.ppSubMetrics + p.numOfSubmetrics);
    return it->second;
  }

  const HostObject& host_;
  std::string chip_;
  std::map<std::string, CUpti_MetricType, std::less<>> base_;
  std::map<std::string, std::vector<std::string>> submetrics_;
};

// The range profiler's configuration image of `names` on the host's chip.
std::vector<std::uint8_t> config_image(const HostObject& host, std::span<const std::string> names) {
  std::vector<const char*> c_names;
  for (const auto& n : names) c_names.push_back(n.c_str());
  CUpti_Profiler_Host_ConfigAddMetrics_Params add{};
  add.structSize = CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE;
  add.pHostObject = host.get();
  add.ppMetricNames = c_names.data();
  add.numMetrics = c_names.size();
  check(cuptiProfilerHostConfigAddMetrics(&add), "cuptiProfilerHostConfigAddMetrics");

  CUpti_Profiler_Host_GetConfigImageSize_Params size{};
  size.structSize = CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE;
  size.pHostObject = host.get();
  check(cuptiProfilerHostGetConfigImageSize(&size), "cuptiProfilerHostGetConfigImageSize");
  std::vector<std::uint8_t> image(size.configImageSize);

  CUpti_Profiler_Host_GetConfigImage_Params get{};
  get.structSize = CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE;
  get.pHostObject = host.get();
  get.configImageSize = image.size();
  get.pConfigImage = image.data();
  check(cuptiProfilerHostGetConfigImage(&get), "cuptiProfilerHostGetConfigImage");
  return image;
}

// Passes the range profiler replays a kernel to collect a configuration.
std::size_t passes_of(std::span<const std::uint8_t> image) {
  CUpti_Profiler_Host_GetNumOfPasses_Params passes{};
  passes.structSize = CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE;
  passes.configImageSize = image.size();
  passes.pConfigImage =
      const_cast<std::uint8_t*>(image.data());  // only read; the field is not const
  check(cuptiProfilerHostGetNumOfPasses(&passes), "cuptiProfilerHostGetNumOfPasses");
  return passes.numOfPasses;
}

std::size_t count_passes(const HostObject& host, const std::vector<std::string_view>& names) {
  if (names.empty()) return 0;
  const std::vector<std::string> owned(names.begin(), names.end());
  return passes_of(config_image(host, owned));
}

std::size_t max_hardware_metrics_per_pass(const std::string& chip) {
  CUpti_Profiler_Host_GetMaxNumHardwareMetricsPerPass_Params p{};
  p.structSize = CUpti_Profiler_Host_GetMaxNumHardwareMetricsPerPass_Params_STRUCT_SIZE;
  p.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
  p.pChipName = chip.c_str();
  check(cuptiProfilerHostGetMaxNumHardwareMetricsPerPass(&p),
        "cuptiProfilerHostGetMaxNumHardwareMetricsPerPass");
  return p.maxMetricsPerPass;
}

}  // namespace

bool counter_plan_available() {
  return true;
}

std::string_view counter_plan_unavailable_reason() {
  return {};
}

std::vector<std::string> counter_plan_chips() {
  CUpti_Profiler_Host_GetSupportedChips_Params p{};
  p.structSize = CUpti_Profiler_Host_GetSupportedChips_Params_STRUCT_SIZE;
  check(cuptiProfilerHostGetSupportedChips(&p), "cuptiProfilerHostGetSupportedChips");
  return std::vector<std::string>(p.ppChipNames, p.ppChipNames + p.numChips);
}

CounterPlan plan_counters(std::string_view chip, std::span<const CounterRole> roles) {
  const auto chips = counter_plan_chips();
  const auto known = std::ranges::find_if(chips, [&](const auto& c) { return iequal(c, chip); });
  if (known == chips.end())
    throw CounterPlanError(
        fmt::format("unknown chip '{}'; CUPTI knows {}", chip, fmt::join(chips, ", ")));

  CounterPlan plan{.chip = *known};
  const HostObject host(plan.chip);
  ChipMetrics metrics(host, plan.chip);
  for (const CounterRole& role : roles)
    plan.roles.push_back(
        choose_metric(role, [&](std::string_view name) { return metrics.why_not(name); }));
  plan.passes = count_passes(host, plan.metric_names());
  plan.max_hardware_metrics_per_pass = max_hardware_metrics_per_pass(plan.chip);
  return plan;
}

struct CounterHost::Impl {
  Impl(std::string_view chip_name, std::span<const std::uint8_t> counter_availability)
      : chip(chip_name), host(chip, counter_availability) {}
  std::string chip;
  HostObject host;
};

CounterHost::CounterHost(std::string_view chip, std::span<const std::uint8_t> counter_availability)
    : impl_(std::make_unique<Impl>(chip, counter_availability)) {}

CounterHost::~CounterHost() = default;

CounterHost::Config CounterHost::configure(std::span<const std::string> metrics) {
  Config config{.image = config_image(impl_->host, metrics)};
  config.passes = passes_of(config.image);
  return config;
}

std::vector<double> CounterHost::evaluate(std::span<const std::uint8_t> counter_data,
                                          std::span<const std::string> metrics,
                                          std::size_t range) const {
  std::vector<const char*> c_names;
  for (const auto& n : metrics) c_names.push_back(n.c_str());
  std::vector<double> values(metrics.size());
  CUpti_Profiler_Host_EvaluateToGpuValues_Params p{};
  p.structSize = CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE;
  p.pHostObject = impl_->host.get();
  p.pCounterDataImage = counter_data.data();
  p.counterDataImageSize = counter_data.size();
  p.rangeIndex = range;
  p.ppMetricNames = c_names.data();
  p.numMetrics = c_names.size();
  p.pMetricValues = values.data();
  check(cuptiProfilerHostEvaluateToGpuValues(&p),
        "cuptiProfilerHostEvaluateToGpuValues(" + impl_->chip + ")");
  return values;
}

}  // namespace rl::roofline
