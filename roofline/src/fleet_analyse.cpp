#include "rl/roofline/fleet.hpp"

#include "fleet_labels.hpp"
#include "fleet_node.hpp"

#include "rl/roofline/text.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

namespace rl::roofline {

int FleetMetric::outliers() const {
  return static_cast<int>(
      std::count_if(values.begin(), values.end(), [](const FleetValue& v) { return v.outlier; }));
}

namespace {

using fleet_detail::shape_label;

std::string on_off(std::optional<bool> v) {
  return v ? (*v ? "on" : "off") : "unknown";
}

std::string mhz(double v) {
  return v > 0 ? fmt::format("{:g} MHz", v) : "unknown";
}

// The configuration fields compared across a group, as text per run.
std::vector<std::pair<std::string, std::string>> config_of(const Results& r) {
  const Context& c = r.context;
  std::vector<std::pair<std::string, std::string>> out = {
      {"driver", c.driver_version.empty() ? "unknown" : c.driver_version},
      {"CUDA driver", c.cuda_driver_version.empty() ? "unknown" : c.cuda_driver_version},
      {"CUDA runtime", c.cuda_runtime_version.empty() ? "unknown" : c.cuda_runtime_version},
      {"ECC", on_off(c.ecc_enabled)},
      {"persistence mode", on_off(c.persistence_mode)},
      {"power limit", c.power_limit_w ? fmt::format("{:g} W", *c.power_limit_w) : "unknown"},
      {"max SM clock", mhz(c.clocks.sm_max_mhz)},
      {"max memory clock", mhz(c.clocks.memory_max_mhz)},
      {"L2 flushed", c.l2_flushed ? "yes" : "no (--warm-l2)"},
      {"commit", c.git_commit.empty() ? "unknown" : c.git_commit}};
  for (const auto& [lib, version] : c.library_versions) out.emplace_back(lib, version);
  return out;
}

void judge(FleetMetric& m, std::string_view kind, const FleetOptions& o,
           std::vector<FleetOutlier>& outliers) {
  if (static_cast<int>(m.values.size()) < o.min_gpus) return;
  std::vector<double> v;
  for (const auto& x : m.values) v.push_back(x.value);
  m.judged = true;
  m.median = median(v);
  m.spread = relative_noise(v);
  m.limit = std::max(o.threshold_pct / 100, o.spread_k * m.spread);
  for (auto& x : m.values) {
    if (!(x.value < m.median * (1 - m.limit))) continue;
    x.outlier = true;
    FleetOutlier f{.run = x.run,
                   .kind = std::string(kind),
                   .metric = m.name,
                   .unit = m.unit,
                   .value = x.value,
                   .median = m.median,
                   .below_pct = (1 - x.value / m.median) * 100,
                   .limit_pct = m.limit * 100,
                   .reason = {}};
    f.reason = fmt::format("{} {}{}, {:.1f}% below the fleet median {}{} (limit {:.3g}%)", m.name,
                           si(x.value), m.unit, f.below_pct, si(m.median), m.unit, f.limit_pct);
    outliers.push_back(std::move(f));
  }
}

// Adds `value` of run `run` to the metric named `name`, creating it in order.
void add_value(std::vector<FleetMetric>& metrics, std::map<std::string, std::size_t>& index,
               const std::string& name, const std::string& unit, std::size_t run, double value) {
  if (!std::isfinite(value) || value <= 0) return;
  auto [it, fresh] = index.emplace(name, metrics.size());
  if (fresh) {
    FleetMetric m;
    m.name = name;
    m.unit = unit;
    metrics.push_back(std::move(m));
  }
  metrics[it->second].values.push_back({.run = run, .value = value, .outlier = false});
}

}  // namespace

FleetReport analyse_fleet(std::vector<FleetRun> runs, const FleetOptions& options) {
  FleetReport report;
  report.options = options;
  report.runs = std::move(runs);
  std::map<std::tuple<std::string, Backend, std::string>, std::size_t> group_of;
  for (std::size_t i = 0; i < report.runs.size(); ++i) {
    if (!report.runs[i].results) continue;
    const Context& c = report.runs[i].results->context;
    auto [it, fresh] =
        group_of.emplace(std::tuple(c.device.name, c.backend, c.size_preset), report.groups.size());
    if (fresh) {
      FleetGroup g;
      g.model = c.device.name;
      g.backend = c.backend;
      g.size_preset = c.size_preset;
      report.groups.push_back(std::move(g));
    }
    report.groups[it->second].runs.push_back(i);
  }
  for (auto& g : report.groups) {
    g.judged = static_cast<int>(g.runs.size()) >= options.min_gpus;
    std::map<std::string, std::size_t> ceiling_index, kernel_index;
    std::vector<std::string> field_order;
    std::map<std::string, std::map<std::string, std::vector<std::size_t>>> fields;
    for (std::size_t run : g.runs) {
      const Results& r = *report.runs[run].results;
      for (const auto& c : r.ceilings)
        add_value(g.ceilings, ceiling_index, c.name, c.unit, run, c.value);
      for (const auto& k : r.kernels) {
        if (k.family == "ceilings" || k.status != Status::ok || !k.validated || !k.time_s) continue;
        const bool flops = k.flops > 0;
        add_value(g.kernels, kernel_index, shape_label(k), flops ? "FLOP/s" : "B/s", run,
                  flops ? k.achieved_flops_per_s : k.achieved_bytes_per_s);
      }
      for (const auto& [field, value] : config_of(r)) {
        if (!fields.contains(field)) field_order.push_back(field);
        fields[field][value].push_back(run);
      }
    }
    for (auto& m : g.ceilings) judge(m, "ceiling", options, report.outliers);
    for (auto& m : g.kernels) judge(m, "kernel", options, report.outliers);
    for (const auto& field : field_order) {
      // A library missing from some runs is drift too: say "absent" for those.
      std::size_t with = 0;
      for (const auto& [value, which] : fields[field]) with += which.size();
      if (with < g.runs.size()) {
        std::set<std::size_t> have;
        for (const auto& [value, which] : fields[field]) have.insert(which.begin(), which.end());
        for (std::size_t run : g.runs)
          if (!have.contains(run)) fields[field]["absent"].push_back(run);
      }
      if (fields[field].size() < 2) continue;
      FleetDrift d{.field = field, .values = {}};
      for (auto& [value, which] : fields[field]) d.values.emplace_back(value, which);
      std::stable_sort(d.values.begin(), d.values.end(), [](const auto& a, const auto& b) {
        return a.second.size() > b.second.size();
      });
      g.drift.push_back(std::move(d));
    }
  }
  // A node run's slow link is judged inside the run, against its own pairs,
  // however many GPUs the fleet has.
  for (std::size_t i = 0; i < report.runs.size(); ++i)
    if (report.runs[i].results)
      fleet_detail::add_node_outliers(i, *report.runs[i].results, report.outliers);
  std::stable_sort(report.outliers.begin(), report.outliers.end(),
                   [](const FleetOutlier& a, const FleetOutlier& b) { return a.run < b.run; });
  if (options.expect > 0)
    report.missing = std::max(0, options.expect - static_cast<int>(report.runs.size()));
  return report;
}

std::vector<std::size_t> FleetReport::failed() const {
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < runs.size(); ++i)
    if (!runs[i].failures().empty()) out.push_back(i);
  return out;
}

int FleetReport::exit_status() const {
  if (!outliers.empty() || !failed().empty() || missing > 0) return 1;
  for (const auto& g : groups)
    if (g.judged) return 0;
  return 3;
}

std::string FleetReport::exit_reason() const {
  std::set<std::size_t> outlier_runs;
  for (const auto& o : outliers) outlier_runs.insert(o.run);
  std::vector<std::string> parts;
  if (!outlier_runs.empty()) parts.push_back(fmt::format("{} outlier GPU(s)", outlier_runs.size()));
  if (auto f = failed(); !f.empty()) parts.push_back(fmt::format("{} failed GPU(s)", f.size()));
  if (missing > 0)
    parts.push_back(fmt::format("{} expected GPU(s) left no run (see --expect)", missing));
  if (!parts.empty()) {
    std::string s = parts[0];
    for (std::size_t i = 1; i < parts.size(); ++i) s += ", " + parts[i];
    return s;
  }
  if (exit_status() == 3)
    return fmt::format("nothing judged: no GPU model has {} GPUs (--min-gpus)", options.min_gpus);
  return "no outlier, no failed GPU";
}

}  // namespace rl::roofline
