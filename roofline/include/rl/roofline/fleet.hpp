// Fleet acceptance and driver-upgrade gating: many GPUs' results.json files
// judged against their siblings (`roofline fleet`).
//
// A fleet folder holds one run per GPU at any depth: a results.json, or, for
// a task whose GPU failed before it could write one, a task-failed.txt marker
// (written by scripts/fleet-slurm; see kTaskFailedMarker).  A GPU is known by
// its host and uuid; a run without a uuid (the emulator, a GPU whose NVML was
// missing) is known by its host and its folder relative to the fleet root.
//
// Acceptance (analyse_fleet): runs are grouped by GPU model (device name,
// backend and size preset).  Per ceiling and per kernel+shape of a group with
// at least min_gpus values:
//   median  the group's median value
//   spread  relative_noise of the values (compare.hpp: 1.4826 x MAD / median,
//           a robust relative standard deviation, blind to the outliers it hunts)
//   limit   max(threshold_pct / 100, spread_k x spread)
// and a GPU is an outlier where value < median x (1 - limit).  The floor keeps a
// tight fleet from flagging ordinary card-to-card variation; the spread term
// keeps an inherently noisy metric from flagging its noise.  Only "below"
// counts: a faster GPU is not a defect.  Ceilings are judged on their value
// (the median rate over repetitions), kernels on the achieved rate (FLOP/s,
// or B/s for a kernel with no FLOPs); ceiling loops
// (family "ceilings") are judged through their ceiling, not twice.
// A GPU has failed when its task left a marker, its run is incomplete
// (interrupted or crashed), or a kernel failed validation or errored.
//
// Exit status (FleetReport::exit_status): 1 any outlier, failed GPU or
// expected GPU without a run; else 3 when no model has min_gpus GPUs (nothing
// could be judged); else 0.  Bad input (FleetInputError): 2.
//
// Upgrade gating (compare_fleets): BEFORE and AFTER runs matched by GPU; each
// pair goes through compare_results, the same gate as `roofline compare`; a
// kernel SLOW on more than half of the GPUs of a model that compared it is
// "fleet-wide" (driver, toolkit or software), otherwise "local" (those GPUs).
#pragma once

#include "rl/roofline/compare.hpp"
#include "rl/roofline/results.hpp"

#include <cstddef>
#include <filesystem>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace rl::roofline {

// Bad fleet input (exit 2); what() is one line naming the file or folder.
class FleetInputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// What a task leaves when its GPU failed: "key=value" lines, keys host, uuid,
// task, exit_status, reason (unknown keys are ignored; reason is free text).
inline constexpr std::string_view kTaskFailedMarker = "task-failed.txt";

struct FleetOptions {
  double threshold_pct = 5.0;  // relative floor of the limit
  double spread_k = 3.0;       // multiple of the robust spread
  int min_gpus = 3;            // GPUs of a model needed to judge it
  int expect = 0;              // GPUs expected in all (0: not known)
};

// One GPU's run as found under a fleet root.
struct FleetRun {
  std::string host;
  std::string uuid;                // "" when unknown
  std::string folder;              // relative to its root ("." for the root itself)
  std::string source;              // the results.json or the marker, as a path
  std::optional<Results> results;  // absent when only a marker was left
  // Why this GPU failed: the task's marker or an incomplete run, and kernels
  // that failed validation or errored.  Both empty: it did not.
  std::vector<std::string> task_failures, kernel_failures;
  std::vector<std::string> failures() const;  // task_failures, then kernel_failures
  // uuid, or host + folder where there is none: what matches BEFORE and AFTER.
  std::string key() const;
  // "host GPU-...", or "host (no uuid) folder".
  std::string label() const;
};

// Every run under the roots.  Throws FleetInputError for a missing root, a
// root with neither results.json nor marker under it, an unreadable or
// invalid file (any schema version but this build's), or two runs of one GPU.
std::vector<FleetRun> load_fleet(std::span<const std::filesystem::path> roots);

struct FleetValue {
  std::size_t run = 0;  // index into FleetReport::runs
  double value = 0;
  bool outlier = false;
};

struct FleetMetric {
  std::string name;  // "hbm.copy", or "gemm_bf16_wmma [M=256,N=256,K=256]"
  std::string unit;  // "B/s" | "FLOP/s"
  double median = 0;
  double spread = 0;  // relative
  double limit = 0;   // relative
  bool judged = false;
  std::vector<FleetValue> values;
  int outliers() const;
};

struct FleetDrift {
  std::string field;  // "driver", "ECC", ...
  // Each value with the runs that have it, most common first.
  std::vector<std::pair<std::string, std::vector<std::size_t>>> values;
};

struct FleetGroup {
  std::string model;
  Backend backend = Backend::cuda;
  std::string size_preset;
  std::vector<std::size_t> runs;  // with results
  bool judged = false;            // at least min_gpus runs
  std::vector<FleetMetric> ceilings, kernels;
  std::vector<FleetDrift> drift;
};

struct FleetOutlier {
  std::size_t run = 0;
  std::string kind;  // "ceiling" | "kernel"
  std::string metric, unit;
  double value = 0, median = 0, below_pct = 0, limit_pct = 0;
  std::string reason;  // "hbm.copy 2.71 TB/s, 9.8% below the fleet median 3 TB/s (limit 5%)"
};

struct FleetReport {
  FleetOptions options;
  std::vector<FleetRun> runs;
  std::vector<FleetGroup> groups;
  std::vector<FleetOutlier> outliers;
  int missing = 0;  // expected GPUs that left no run
  std::vector<std::size_t> failed() const;
  int exit_status() const;
  std::string exit_reason() const;
};

FleetReport analyse_fleet(std::vector<FleetRun> runs, const FleetOptions& options);
std::string fleet_text(const FleetReport& report);  // markdown, for the terminal
nlohmann::ordered_json fleet_json(const FleetReport& report);
// One self-contained HTML file: inline CSS and SVG, no script, nothing fetched.
std::string fleet_html(const FleetReport& report);

struct FleetGpuComparison {
  std::size_t before = 0, after = 0;     // indices into the report's runs
  std::optional<Comparison> comparison;  // absent when AFTER has no results
  std::vector<std::string> failures;     // AFTER's run failures (marker, incomplete)
  GateExit exit_status() const;
};

struct FleetRegression {
  std::string model, kernel, shape;
  std::vector<std::size_t> slow;  // indices into gpus
  int compared = 0;               // GPUs of the model that compared it
  double median_ratio = 0;        // over those GPUs
  bool fleet_wide() const { return 2 * static_cast<int>(slow.size()) > compared; }
};

struct FleetBaselineReport {
  CompareOptions options;
  std::string before_label, after_label;
  std::vector<FleetRun> before, after;
  std::vector<FleetGpuComparison> gpus;
  std::vector<std::size_t> only_before, only_after;  // unmatched runs
  std::vector<FleetRegression> regressions;
  GateExit exit_status() const;
  std::string exit_reason() const;
};

// Throws CompareInputError (naming the files) where a pair is refused.
FleetBaselineReport compare_fleets(std::vector<FleetRun> before, std::vector<FleetRun> after,
                                   const CompareOptions& options, std::string before_label,
                                   std::string after_label);
std::string fleet_baseline_text(const FleetBaselineReport& report);
nlohmann::ordered_json fleet_baseline_json(const FleetBaselineReport& report);

}  // namespace rl::roofline
