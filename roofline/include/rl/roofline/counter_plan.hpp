// The counter plan for one chip (issue 28 item 4): for each role of
// counter_metrics.hpp, the first of its metrics the chip has, and how many
// replay passes the chosen set takes.  Answered by CUPTI's Profiler Host API
// from the chip's name alone: no GPU, no driver.
//
// A metric exists on a chip when its base metric is among the chip's base
// metrics (counter, ratio or throughput) and its rollup/submetric suffix
// (".sum", ".avg.per_second") is among the base metric's submetrics.
#pragma once

#include "rl/roofline/counter_metrics.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace rl::roofline {

// Bad input (a chip CUPTI does not know) or a CUPTI failure; one line.
struct CounterPlanError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

enum class CounterStatus {
  preferred,   // the role's first metric exists
  equivalent,  // the first is missing; a nearest equivalent is used
  missing,     // an every_chip role with no metric on this chip
  absent       // a where_present role with no metric on this chip
};
std::string_view counter_status_name(CounterStatus status);

struct RolePlan {
  const CounterRole* role = nullptr;
  CounterStatus status = CounterStatus::missing;
  const CounterMetric* metric = nullptr;  // the chosen one; nullptr: missing/absent
  // Why each metric before the chosen one (all of them, when none is) was not
  // used: "GB202 has no base metric dram__bytes_read".
  std::vector<std::string> rejected{};
};

struct CounterPlan {
  std::string chip{};  // CUPTI's spelling: "GH100"
  std::vector<RolePlan> roles{};
  // Replay passes of the range profiler for the chosen metrics (0: none chosen).
  std::size_t passes = 0;
  // CUPTI's upper bound on hardware metrics (names without "_sass_") per pass.
  std::size_t max_hardware_metrics_per_pass = 0;

  std::vector<std::string_view> metric_names() const;  // the chosen ones, in role order
};

// False when this build has no CUPTI: the functions below then throw.
bool counter_plan_available();
// One line for users when it is not ("built without CUPTI ...").
std::string_view counter_plan_unavailable_reason();

// The chips CUPTI's host API knows, in its spelling.
std::vector<std::string> counter_plan_chips();

// The plan for `chip` (case-insensitive: "gh100" or "GH100").  Throws
// CounterPlanError for an unknown chip, naming the known ones.
CounterPlan plan_counters(std::string_view chip,
                          std::span<const CounterRole> roles = counter_roles());

// CUPTI's profiler host object for one chip, as the range profiler on a
// device needs it (bench/cuda_only/counters_cupti.cpp): made with the
// device's counter availability image, it builds the configuration image of
// a plan's metrics and evaluates the counter data the profiler decoded.
// Bytes in and out, so this header stays free of CUPTI's types.  Throws
// CounterPlanError (a build without CUPTI, an unknown chip, a CUPTI failure).
class CounterHost {
 public:
  CounterHost(std::string_view chip, std::span<const std::uint8_t> counter_availability);
  ~CounterHost();
  CounterHost(const CounterHost&) = delete;
  CounterHost& operator=(const CounterHost&) = delete;

  struct Config {
    std::vector<std::uint8_t> image;  // for cuptiRangeProfilerSetConfig
    std::size_t passes = 0;           // replays the range profiler will ask for
  };
  // Once per host object: CUPTI adds each call's metrics to the ones before.
  Config configure(std::span<const std::string> metrics);
  // The values of `metrics` (in that order) in range `range` of a decoded
  // counter data image.
  std::vector<double> evaluate(std::span<const std::uint8_t> counter_data,
                               std::span<const std::string> metrics, std::size_t range = 0) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace rl::roofline
