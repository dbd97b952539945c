#include "rl/roofline/fleet.hpp"

#include "rl/roofline/results_io.hpp"
#include "rl/roofline/svg.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <system_error>

#include <fmt/format.h>

namespace rl::roofline {

namespace fs = std::filesystem;

namespace {

std::string shape_label(const KernelResult& k) {
  return fmt::format("{} [{}]", k.name, shape_text(k.shape));
}

std::string rel_folder(const fs::path& folder, const fs::path& root) {
  std::string rel = folder.lexically_relative(root).generic_string();
  return rel.empty() ? "." : rel;
}

// The marker's "key=value" lines; a missing file reads as nothing.
std::map<std::string, std::string> read_marker(const fs::path& path) {
  std::ifstream in(path);
  if (!in) throw FleetInputError(fmt::format("{}: cannot read", path.string()));
  std::map<std::string, std::string> fields;
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const auto eq = line.find('=');
    if (eq != std::string::npos) fields[line.substr(0, eq)] = line.substr(eq + 1);
  }
  return fields;
}

// A run that never finished: interrupted, crashed or killed.
std::optional<std::string> incomplete(const Results& r) {
  if (!r.run.complete || *r.run.complete) return std::nullopt;
  return r.run.interrupted_by.empty()
             ? "run incomplete (crashed, killed, or still running)"
             : fmt::format("run incomplete (interrupted by {})", r.run.interrupted_by);
}

// Kernels that failed validation or errored.
std::vector<std::string> failed_kernels(const Results& r) {
  std::vector<std::string> out;
  for (const auto& k : r.kernels) {
    if (k.status == "failed_validation" || (k.status == "ok" && k.time_s && !k.validated))
      out.push_back(fmt::format("{} failed validation{}", shape_label(k),
                                k.error.empty() ? "" : ": " + k.error));
    else if (k.status == "error")
      out.push_back(
          fmt::format("{} errored{}", shape_label(k), k.error.empty() ? "" : ": " + k.error));
  }
  return out;
}

}  // namespace

std::vector<std::string> FleetRun::failures() const {
  std::vector<std::string> out = task_failures;
  out.insert(out.end(), kernel_failures.begin(), kernel_failures.end());
  return out;
}

std::string FleetRun::key() const {
  return uuid.empty() ? host + "\n" + folder : uuid;
}

std::string FleetRun::label() const {
  return uuid.empty() ? fmt::format("{} (no uuid) {}", host, folder)
                      : fmt::format("{} {}", host, uuid);
}

std::vector<FleetRun> load_fleet(std::span<const fs::path> roots) {
  std::vector<FleetRun> runs;
  std::map<std::string, std::string> seen;  // key -> source
  for (const auto& root : roots) {
    std::error_code ec;
    if (!fs::is_directory(root, ec))
      throw FleetInputError(fmt::format("{}: not a folder{}", root.string(),
                                        fs::exists(root, ec) ? "" : " (no such path)"));
    // Folders holding a results.json and/or a marker, in a stable order.
    std::map<fs::path, std::pair<bool, bool>> folders;
    fs::recursive_directory_iterator it(root, ec), end;
    for (; !ec && it != end; it.increment(ec)) {
      if (!it->is_regular_file(ec)) continue;
      const auto name = it->path().filename();
      if (name == "results.json") folders[it->path().parent_path()].first = true;
      if (name == kTaskFailedMarker) folders[it->path().parent_path()].second = true;
    }
    if (ec) throw FleetInputError(fmt::format("{}: cannot list: {}", root.string(), ec.message()));
    if (folders.empty())
      throw FleetInputError(
          fmt::format("{}: no results.json (nor {}) under it", root.string(), kTaskFailedMarker));
    for (const auto& [folder, found] : folders) {
      FleetRun run;
      run.folder = rel_folder(folder, root);
      if (found.first) {
        const fs::path path = folder / "results.json";
        run.source = path.string();
        try {
          run.results = load_results(path);
        } catch (const std::exception& e) {
          throw FleetInputError(e.what());
        }
        run.host = run.results->context.host;
        run.uuid = run.results->context.device.uuid;
        if (auto why = incomplete(*run.results)) run.task_failures.push_back(*why);
        run.kernel_failures = failed_kernels(*run.results);
      }
      if (found.second) {
        const fs::path path = folder / kTaskFailedMarker;
        auto marker = read_marker(path);
        if (!found.first) {
          run.source = path.string();
          run.host = marker["host"];
          run.uuid = marker["uuid"];
        }
        std::string why = marker["reason"].empty() ? "the task failed" : marker["reason"];
        if (!marker["exit_status"].empty()) why += fmt::format(" (exit {})", marker["exit_status"]);
        if (!marker["task"].empty()) why = fmt::format("task {}: {}", marker["task"], why);
        run.task_failures.insert(run.task_failures.begin(), why);
      }
      auto [prior, fresh] = seen.emplace(run.key(), run.source);
      if (!fresh)
        throw FleetInputError(fmt::format("two runs of GPU {}: {} and {} (one run per GPU)",
                                          run.label(), prior->second, run.source));
      runs.push_back(std::move(run));
    }
  }
  return runs;
}

int FleetMetric::outliers() const {
  return static_cast<int>(
      std::count_if(values.begin(), values.end(), [](const FleetValue& v) { return v.outlier; }));
}

namespace {

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
  std::map<std::tuple<std::string, std::string, std::string>, std::size_t> group_of;
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
        if (k.family == "ceilings" || k.status != "ok" || !k.validated || !k.time_s) continue;
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

namespace {

std::string group_title(const FleetGroup& g) {
  return fmt::format("{} ({}, {} preset)", g.model, g.backend, g.size_preset);
}

std::string run_list(const FleetReport& r, const std::vector<std::size_t>& which,
                     std::size_t cap = 8) {
  std::string s;
  for (std::size_t i = 0; i < which.size() && i < cap; ++i)
    s += (i ? ", " : "") + r.runs[which[i]].label();
  if (which.size() > cap) s += fmt::format(" and {} more", which.size() - cap);
  return s;
}

std::string pct(double relative) {
  return fmt::format("{:.3g}%", relative * 100);
}

// The lowest value of a metric, "label (-9.8%)".
std::string lowest(const FleetReport& r, const FleetMetric& m) {
  auto it = std::min_element(m.values.begin(), m.values.end(),
                             [](const auto& a, const auto& b) { return a.value < b.value; });
  if (it == m.values.end() || !m.judged) return "-";
  return fmt::format("{} ({:+.1f}%)", r.runs[it->run].label(), (it->value / m.median - 1) * 100);
}

}  // namespace

std::string fleet_text(const FleetReport& r) {
  std::string s = fmt::format("## roofline fleet: {} GPU run(s) in {} model group(s)\n\n",
                              r.runs.size(), r.groups.size());
  s += fmt::format(
      "Outlier: below the model's median by more than max({:g}%, {:g} × spread); spread = "
      "1.4826 × MAD / median over the model's GPUs.  Ceilings are judged on their value, "
      "kernels on their achieved rate; a model needs {} GPUs to be judged.\n",
      r.options.threshold_pct, r.options.spread_k, r.options.min_gpus);
  for (const auto& g : r.groups) {
    s += fmt::format(
        "\n### {}: {} GPU(s){}\n\n", group_title(g), g.runs.size(),
        g.judged ? "" : fmt::format(" — not judged (fewer than {})", r.options.min_gpus));
    if (g.backend == "emulator")
      s += "CPU emulator — not GPU performance: these values measure the emulator on a CPU.\n\n";
    s += "| ceiling | median | spread | limit | lowest | GPUs | outliers |\n"
         "|---|---:|---:|---:|---|---:|---:|\n";
    for (const auto& m : g.ceilings)
      s += fmt::format("| {} | {}{} | {} | {} | {} | {} | {} |\n", m.name,
                       m.judged ? si(m.median) : "-", m.judged ? m.unit : "",
                       m.judged ? pct(m.spread) : "-", m.judged ? pct(m.limit) : "-", lowest(r, m),
                       m.values.size(), m.outliers());
    if (g.ceilings.empty()) s += "| (no ceilings measured) | | | | | | |\n";
    int judged = 0, flagged = 0;
    for (const auto& m : g.kernels) {
      judged += m.judged;
      flagged += m.outliers() > 0;
    }
    s +=
        fmt::format("\nKernels: {} kernel+shape(s) judged, {} with an outlier.\n", judged, flagged);
    if (flagged) {
      s += "\n| kernel | median | spread | limit | lowest | GPUs | outliers |\n"
           "|---|---:|---:|---:|---|---:|---:|\n";
      for (const auto& m : g.kernels)
        if (m.outliers())
          s +=
              fmt::format("| {} | {}{} | {} | {} | {} | {} | {} |\n", m.name, si(m.median), m.unit,
                          pct(m.spread), pct(m.limit), lowest(r, m), m.values.size(), m.outliers());
    }
    s += "\nConfiguration drift: ";
    if (g.drift.empty()) s += "none.\n";
    for (std::size_t i = 0; i < g.drift.size(); ++i) {
      const auto& d = g.drift[i];
      if (i == 0) s += "\n\n";
      s += fmt::format("- {}: {} ({} GPUs)", d.field, d.values[0].first, d.values[0].second.size());
      for (std::size_t v = 1; v < d.values.size(); ++v)
        s += fmt::format("; {} on {}", d.values[v].first, run_list(r, d.values[v].second));
      s += "\n";
    }
  }
  if (auto failed = r.failed(); !failed.empty()) {
    s += "\n### Failed GPUs\n\n";
    for (std::size_t i : failed) {
      const auto why = r.runs[i].failures();
      s += fmt::format("- **{}** ({}): {}", r.runs[i].label(), r.runs[i].source, why[0]);
      if (why.size() > 1) s += fmt::format("; and {} more, first: {}", why.size() - 1, why[1]);
      s += "\n";
    }
  }
  if (r.missing > 0)
    s += fmt::format(
        "\n**{} of the {} expected GPU(s) left no results and no failure marker** (killed, timed "
        "out or never started: see the scheduler's logs).\n",
        r.missing, r.options.expect);
  if (!r.outliers.empty()) {
    s += "\n### Outliers\n\n";
    // Sorted by run: one line per GPU.
    for (std::size_t i = 0; i < r.outliers.size(); ++i) {
      const std::size_t run = r.outliers[i].run;
      const bool first = i == 0 || r.outliers[i - 1].run != run;
      if (first) s += fmt::format("- **{}**: ", r.runs[run].label());
      s += (first ? "" : "; ") + r.outliers[i].reason;
      if (i + 1 == r.outliers.size() || r.outliers[i + 1].run != run) s += "\n";
    }
  }
  std::set<std::size_t> outlier_runs;
  for (const auto& o : r.outliers) outlier_runs.insert(o.run);
  s += fmt::format("\nResult: {} GPU run(s), {} outlier(s), {} failed; {} → exit {}.\n",
                   r.runs.size(), outlier_runs.size(), r.failed().size(), r.exit_reason(),
                   r.exit_status());
  return s;
}

namespace {

nlohmann::ordered_json metric_json(const FleetReport& r, const FleetMetric& m) {
  nlohmann::ordered_json values = nlohmann::ordered_json::array();
  for (const auto& v : m.values)
    values.push_back({{"gpu", r.runs[v.run].label()}, {"value", v.value}, {"outlier", v.outlier}});
  nlohmann::ordered_json j = {{"name", m.name}, {"unit", m.unit}, {"judged", m.judged}};
  j["median"] = m.judged ? nlohmann::ordered_json(m.median) : nlohmann::ordered_json(nullptr);
  j["spread"] = m.judged ? nlohmann::ordered_json(m.spread) : nlohmann::ordered_json(nullptr);
  j["limit"] = m.judged ? nlohmann::ordered_json(m.limit) : nlohmann::ordered_json(nullptr);
  j["values"] = values;
  return j;
}

}  // namespace

nlohmann::ordered_json fleet_json(const FleetReport& r) {
  nlohmann::ordered_json j;
  j["exit_code"] = r.exit_status();
  j["exit_reason"] = r.exit_reason();
  j["options"] = {{"threshold_pct", r.options.threshold_pct},
                  {"spread_k", r.options.spread_k},
                  {"min_gpus", r.options.min_gpus},
                  {"expect", r.options.expect}};
  j["missing"] = r.missing;
  nlohmann::ordered_json gpus = nlohmann::ordered_json::array();
  for (std::size_t i = 0; i < r.runs.size(); ++i) {
    const auto& run = r.runs[i];
    nlohmann::ordered_json outliers = nlohmann::ordered_json::array();
    for (const auto& o : r.outliers)
      if (o.run == i)
        outliers.push_back({{"kind", o.kind},
                            {"metric", o.metric},
                            {"unit", o.unit},
                            {"value", o.value},
                            {"median", o.median},
                            {"below_pct", o.below_pct},
                            {"limit_pct", o.limit_pct},
                            {"reason", o.reason}});
    const auto failures = run.failures();
    const char* status = !failures.empty() ? "failed" : outliers.empty() ? "ok" : "outlier";
    gpus.push_back({{"label", run.label()},
                    {"host", run.host},
                    {"uuid", run.uuid},
                    {"folder", run.folder},
                    {"source", run.source},
                    {"model", run.results ? run.results->context.device.name : ""},
                    {"status", status},
                    {"failures", failures},
                    {"outliers", outliers}});
  }
  j["gpus"] = gpus;
  nlohmann::ordered_json groups = nlohmann::ordered_json::array();
  for (const auto& g : r.groups) {
    nlohmann::ordered_json members = nlohmann::ordered_json::array();
    for (std::size_t i : g.runs) members.push_back(r.runs[i].label());
    nlohmann::ordered_json ceilings = nlohmann::ordered_json::array(),
                           kernels = nlohmann::ordered_json::array(),
                           drift = nlohmann::ordered_json::array();
    for (const auto& m : g.ceilings) ceilings.push_back(metric_json(r, m));
    for (const auto& m : g.kernels) kernels.push_back(metric_json(r, m));
    for (const auto& d : g.drift) {
      nlohmann::ordered_json values = nlohmann::ordered_json::array();
      for (const auto& [value, which] : d.values) {
        nlohmann::ordered_json labels = nlohmann::ordered_json::array();
        for (std::size_t i : which) labels.push_back(r.runs[i].label());
        values.push_back({{"value", value}, {"gpus", labels}});
      }
      drift.push_back({{"field", d.field}, {"values", values}});
    }
    groups.push_back({{"model", g.model},
                      {"backend", g.backend},
                      {"size_preset", g.size_preset},
                      {"judged", g.judged},
                      {"gpus", members},
                      {"ceilings", ceilings},
                      {"kernels", kernels},
                      {"drift", drift}});
  }
  j["groups"] = groups;
  return j;
}

namespace {

// One ceiling as a strip: every GPU a point at its value relative to the
// median, the band median ± limit shaded; points left of it are outliers.
std::string strip_svg(const FleetReport& r, const FleetMetric& m) {
  constexpr double width = 860, height = 120, left = 20, right = 20, axis_y = 92;
  double lo = 1 - m.limit, hi = 1 + m.limit;
  for (const auto& v : m.values) {
    lo = std::min(lo, v.value / m.median);
    hi = std::max(hi, v.value / m.median);
  }
  const double pad = 0.05 * (hi - lo);
  lo -= pad;
  hi += pad;
  auto x = [&](double rel) { return left + (rel - lo) / (hi - lo) * (width - left - right); };
  std::string s = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" class=\"strip\" width=\"{0}\" "
      "height=\"{1}\" viewBox=\"0 0 {0} {1}\" role=\"img\">\n",
      width, height);
  s += fmt::format("<title>{}: every GPU against the median {}{}</title>\n", xml_escape(m.name),
                   xml_escape(si(m.median)), xml_escape(m.unit));
  s += fmt::format(
      "<rect class=\"band\" x=\"{:.1f}\" y=\"8\" width=\"{:.1f}\" height=\"{}\" "
      "fill=\"#dfe9f5\"/>\n",
      x(1 - m.limit), x(1 + m.limit) - x(1 - m.limit), axis_y - 8);
  s += fmt::format(
      "<line class=\"median\" x1=\"{0:.1f}\" y1=\"8\" x2=\"{0:.1f}\" y2=\"{1}\" stroke=\"#1f4e8c\" "
      "stroke-width=\"2\"/>\n",
      x(1), axis_y);
  s += fmt::format(
      "<line class=\"axis\" x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#444\"/>\n", left,
      axis_y, width - right, axis_y);
  // Ticks every 1, 2, 5, 10, ... percent: at most about eight.
  double step = 0.01;
  for (double candidate : {0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0}) {
    step = candidate;
    if ((hi - lo) / step <= 8) break;
  }
  for (double t = std::ceil((lo - 1) / step) * step; t <= hi - 1 + 1e-12; t += step) {
    const double tx = x(1 + t);
    s += fmt::format(
        "<line class=\"tick\" x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"#444\"/>"
        "<text class=\"tick-label\" x=\"{0:.1f}\" y=\"{3}\" font-size=\"11\" "
        "text-anchor=\"middle\">{4:+.0f}%</text>\n",
        tx, axis_y, axis_y + 4, axis_y + 17, std::abs(t) < 1e-9 ? 0.0 : t * 100);
  }
  std::size_t i = 0;
  for (const auto& v : m.values) {
    const double px = x(v.value / m.median), py = 22 + static_cast<double>(i++ % 5) * 13;
    const std::string label = r.runs[v.run].label();
    s += fmt::format(
        "<circle class=\"gpu-point{}\" cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"5\" fill=\"{}\" "
        "stroke=\"#222\"><title>{}: {}{}</title></circle>\n",
        v.outlier ? " outlier" : "", px, py, v.outlier ? "#d62728" : "#7f9fc8", xml_escape(label),
        xml_escape(si(v.value)), xml_escape(m.unit));
    if (v.outlier)
      s += fmt::format(
          "<text class=\"outlier-label\" x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"11\" "
          "fill=\"#a00\"{}>{}</text>\n",
          px + (px < width / 2 ? 8 : -8), py + 4, px < width / 2 ? "" : " text-anchor=\"end\"",
          xml_escape(label));
  }
  s += "</svg>\n";
  return s;
}

}  // namespace

std::string fleet_html(const FleetReport& r) {
  std::string h =
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
      "<title>roofline fleet</title>\n<style>\n"
      "body{font-family:sans-serif;margin:1.5em;max-width:72em;color:#222}"
      "table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #bbb;padding:.2em "
      ".5em;text-align:left}td.n{text-align:right}.banner{background:#fff3cd;border:1px solid "
      "#e0c060;padding:.5em}.bad{color:#a00;font-weight:bold}.ok{color:#176b2c}"
      "svg.strip{display:block;margin:.2em 0 1em}\n</style></head><body>\n";
  h += "<h1>roofline fleet</h1>\n";
  bool emulator = false;
  for (const auto& g : r.groups) emulator |= g.backend == "emulator";
  if (emulator)
    h += "<div class=\"banner\">CPU emulator — not GPU performance. Values from the emulator "
         "backend measure a CPU; they say nothing about any GPU.</div>\n";
  h += fmt::format("<p class=\"{}\">Exit {}: {}.</p>\n", r.exit_status() == 0 ? "ok" : "bad",
                   r.exit_status(), xml_escape(r.exit_reason()));
  h += fmt::format(
      "<p>A GPU is an outlier where a ceiling or kernel is below its model's median by more "
      "than max({:g}%, {:g} × spread), spread = 1.4826 × MAD / median over the model's GPUs. "
      "In each chart every GPU is a point at its value relative to the median (the dark line); "
      "the shaded band is median ± limit; red points, named, are outliers.</p>\n",
      r.options.threshold_pct, r.options.spread_k);
  if (!r.outliers.empty()) {
    h += "<h2>Outliers</h2>\n<table><tr><th>host</th><th>GPU</th><th>what</th><th>value</th>"
         "<th>fleet median</th><th>below</th><th>limit</th></tr>\n";
    for (const auto& o : r.outliers) {
      const auto& run = r.runs[o.run];
      h += fmt::format(
          "<tr><td>{}</td><td>{}</td><td>{}</td><td class=\"n\">{}{}</td><td "
          "class=\"n\">{}{}</td><td class=\"n\">{:.1f}%</td><td class=\"n\">{:.3g}%</td></tr>\n",
          xml_escape(run.host), xml_escape(run.uuid.empty() ? run.folder : run.uuid),
          xml_escape(o.metric), xml_escape(si(o.value)), xml_escape(o.unit),
          xml_escape(si(o.median)), xml_escape(o.unit), o.below_pct, o.limit_pct);
    }
    h += "</table>\n";
  }
  if (auto failed = r.failed(); !failed.empty()) {
    h += "<h2>Failed GPUs</h2>\n<ul>\n";
    for (std::size_t i : failed) {
      h += fmt::format("<li><b>{}</b> ({}):<ul>", xml_escape(r.runs[i].label()),
                       xml_escape(r.runs[i].source));
      for (const auto& f : r.runs[i].failures()) h += "<li>" + xml_escape(f) + "</li>";
      h += "</ul></li>\n";
    }
    h += "</ul>\n";
  }
  if (r.missing > 0)
    h += fmt::format(
        "<p class=\"bad\">{} of the {} expected GPUs left no results and no failure marker.</p>\n",
        r.missing, r.options.expect);
  for (const auto& g : r.groups) {
    h += fmt::format("<h2>{}: {} GPUs{}</h2>\n", xml_escape(group_title(g)), g.runs.size(),
                     g.judged ? "" : " (not judged: too few)");
    for (const auto& m : g.ceilings) {
      if (!m.judged) continue;
      h += fmt::format("<h3>{}: median {}{}, spread {}, limit {}, {} outlier(s)</h3>\n",
                       xml_escape(m.name), xml_escape(si(m.median)), xml_escape(m.unit),
                       pct(m.spread), pct(m.limit), m.outliers());
      h += strip_svg(r, m);
    }
    h += "<h3>Kernels</h3>\n<table><tr><th>kernel</th><th>median</th><th>spread</th>"
         "<th>limit</th><th>GPUs</th><th>outliers</th></tr>\n";
    for (const auto& m : g.kernels)
      h += fmt::format(
          "<tr><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td "
          "class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n{}\">{}</td></tr>\n",
          xml_escape(m.name), m.judged ? xml_escape(si(m.median)) + xml_escape(m.unit) : "-",
          m.judged ? pct(m.spread) : "-", m.judged ? pct(m.limit) : "-", m.values.size(),
          m.outliers() ? " bad" : "", m.outliers());
    h += "</table>\n<h3>Configuration drift</h3>\n";
    if (g.drift.empty()) h += "<p>None.</p>\n";
    for (const auto& d : g.drift) {
      h += fmt::format("<p><b>{}</b>: {} ({} GPUs)", xml_escape(d.field),
                       xml_escape(d.values[0].first), d.values[0].second.size());
      for (std::size_t v = 1; v < d.values.size(); ++v)
        h += fmt::format("; <span class=\"bad\">{}</span> on {}", xml_escape(d.values[v].first),
                         xml_escape(run_list(r, d.values[v].second, 50)));
      h += "</p>\n";
    }
  }
  h += "<h2>Runs</h2>\n<table><tr><th>host</th><th>GPU</th><th>model</th><th>status</th>"
       "<th>source</th></tr>\n";
  for (std::size_t i = 0; i < r.runs.size(); ++i) {
    const auto& run = r.runs[i];
    bool outlier = false;
    for (const auto& o : r.outliers) outlier |= o.run == i;
    h += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
                     xml_escape(run.host),
                     xml_escape(run.uuid.empty() ? "(no uuid) " + run.folder : run.uuid),
                     xml_escape(run.results ? run.results->context.device.name : "-"),
                     !run.failures().empty() ? "failed"
                     : outlier               ? "outlier"
                                             : "ok",
                     xml_escape(run.source));
  }
  h += "</table>\n</body></html>\n";
  return h;
}

// ------------------------------------------------------------- baseline ----

GateExit FleetGpuComparison::exit_status() const {
  if (!failures.empty() || !comparison) return GateExit::fail;
  return comparison->exit_status();
}

GateExit FleetBaselineReport::exit_status() const {
  bool undecided = false;
  if (!only_before.empty()) return GateExit::fail;
  for (const auto& g : gpus) {
    if (g.exit_status() == GateExit::fail) return GateExit::fail;
    undecided |= g.exit_status() == GateExit::undecided;
  }
  return undecided || gpus.empty() ? GateExit::undecided : GateExit::pass;
}

std::string FleetBaselineReport::exit_reason() const {
  int failed = 0, undecided = 0;
  for (const auto& g : gpus) {
    failed += g.exit_status() == GateExit::fail;
    undecided += g.exit_status() == GateExit::undecided;
  }
  std::vector<std::string> parts;
  if (failed) parts.push_back(fmt::format("{} GPU(s) failed the gate", failed));
  if (!only_before.empty())
    parts.push_back(fmt::format("{} GPU(s) of {} missing from {}", only_before.size(), before_label,
                                after_label));
  if (undecided) parts.push_back(fmt::format("{} GPU(s) undecided", undecided));
  if (gpus.empty()) parts.push_back("no GPU in both");
  if (parts.empty()) return "every GPU passed the gate";
  std::string s = parts[0];
  for (std::size_t i = 1; i < parts.size(); ++i) s += ", " + parts[i];
  return s;
}

FleetBaselineReport compare_fleets(std::vector<FleetRun> before, std::vector<FleetRun> after,
                                   const CompareOptions& options, std::string before_label,
                                   std::string after_label) {
  FleetBaselineReport rep;
  rep.options = options;
  rep.before_label = std::move(before_label);
  rep.after_label = std::move(after_label);
  rep.before = std::move(before);
  rep.after = std::move(after);
  std::map<std::string, std::size_t> after_by_key;
  for (std::size_t i = 0; i < rep.after.size(); ++i) after_by_key[rep.after[i].key()] = i;
  std::set<std::size_t> matched;
  for (std::size_t b = 0; b < rep.before.size(); ++b) {
    auto it = after_by_key.find(rep.before[b].key());
    if (it == after_by_key.end()) {
      rep.only_before.push_back(b);
      continue;
    }
    matched.insert(it->second);
    FleetGpuComparison g{.before = b, .after = it->second, .comparison = {}, .failures = {}};
    const FleetRun& a = rep.after[it->second];
    // Failed kernels are the gate's to judge; a marker or an incomplete run
    // fails the GPU here.
    g.failures = a.task_failures;
    if (!rep.before[b].results)
      g.failures.push_back(fmt::format("no results in {} ({})", rep.before_label,
                                       rep.before[b].task_failures.empty()
                                           ? rep.before[b].source
                                           : rep.before[b].task_failures[0]));
    else if (a.results)
      g.comparison = compare_results(*rep.before[b].results, *a.results, options,
                                     rep.before[b].source, a.source);
    rep.gpus.push_back(std::move(g));
  }
  for (std::size_t i = 0; i < rep.after.size(); ++i)
    if (!matched.contains(i)) rep.only_after.push_back(i);

  // Per model and kernel+shape: which GPUs are SLOW, the median ratio.
  std::map<std::tuple<std::string, std::string, std::string>, std::size_t> index;
  std::vector<std::vector<double>> ratios;
  for (std::size_t gi = 0; gi < rep.gpus.size(); ++gi) {
    const auto& g = rep.gpus[gi];
    if (!g.comparison) continue;
    const std::string model = rep.after[g.after].results->context.device.name;
    for (const auto& k : g.comparison->kernels) {
      auto [it, fresh] = index.emplace(std::tuple(model, k.name, k.shape), rep.regressions.size());
      if (fresh) {
        FleetRegression reg;
        reg.model = model;
        reg.kernel = k.name;
        reg.shape = k.shape;
        rep.regressions.push_back(std::move(reg));
        ratios.emplace_back();
      }
      auto& reg = rep.regressions[it->second];
      ++reg.compared;
      ratios[it->second].push_back(k.ratio);
      if (k.verdict == Verdict::slow) reg.slow.push_back(gi);
    }
  }
  for (std::size_t i = 0; i < rep.regressions.size(); ++i)
    rep.regressions[i].median_ratio = median(ratios[i]);
  std::erase_if(rep.regressions, [](const FleetRegression& reg) { return reg.slow.empty(); });
  return rep;
}

std::string fleet_baseline_text(const FleetBaselineReport& r) {
  std::string s =
      fmt::format("## roofline fleet --baseline: {} → {}\n\n", r.before_label, r.after_label);
  s += fmt::format(
      "GPUs matched by uuid (by host and folder where a run has none); each pair through the "
      "gate of `roofline compare` (threshold ±{:g}%, alpha {:g}).  A kernel SLOW on more than "
      "half of a model's GPUs is fleet-wide (driver, toolkit or software), otherwise local "
      "(those GPUs' hardware or configuration).\n\n",
      r.options.threshold_pct, r.options.alpha);
  s += "| GPU | gate | SAME | FAST | SLOW | UNSURE | INCONCLUSIVE | failures | geomean ratio |\n"
       "|---|---|---:|---:|---:|---:|---:|---:|---:|\n";
  for (const auto& g : r.gpus) {
    const auto& c = g.comparison;
    const GateExit e = g.exit_status();
    const char* gate = e == GateExit::pass   ? "pass"
                       : e == GateExit::fail ? "**FAIL**"
                                             : "undecided";
    auto geo = c ? c->geometric_mean_ratio() : std::nullopt;
    s += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} | {} |\n", r.after[g.after].label(),
                     gate, c ? c->count(Verdict::same) : 0, c ? c->count(Verdict::fast) : 0,
                     c ? c->count(Verdict::slow) : 0, c ? c->count(Verdict::unsure) : 0,
                     c ? c->count(Verdict::inconclusive) : 0,
                     g.failures.size() + (c ? c->failures.size() : 0),
                     geo ? fmt::format("{:.4f}", *geo) : "n/a");
  }
  if (r.gpus.empty()) s += "| (no GPU in both) | | | | | | | | |\n";
  if (!r.regressions.empty()) {
    s += "\n### Regressions (SLOW)\n\n| kernel | shape | model | slow on | median ratio | scope | "
         "GPUs |\n|---|---|---|---:|---:|---|---|\n";
    for (const auto& reg : r.regressions) {
      std::string gpus;
      for (std::size_t i = 0; i < reg.slow.size() && i < 8; ++i)
        gpus += (i ? ", " : "") + r.after[r.gpus[reg.slow[i]].after].label();
      if (reg.slow.size() > 8) gpus += fmt::format(" and {} more", reg.slow.size() - 8);
      s += fmt::format("| {} | {} | {} | {} of {} | {:.3f} | {} | {} |\n", reg.kernel, reg.shape,
                       reg.model, reg.slow.size(), reg.compared, reg.median_ratio,
                       reg.fleet_wide() ? "fleet-wide" : "local", gpus);
    }
  }
  bool any_failure = false;
  for (const auto& g : r.gpus) {
    std::vector<std::string> lines = g.failures;
    if (g.comparison)
      for (const auto& f : g.comparison->failures) lines.push_back(f.kernel + ": " + f.reason);
    if (lines.empty()) continue;
    if (!any_failure) s += "\n### Gate failures\n\n";
    any_failure = true;
    s += fmt::format("- **{}**: {}", r.after[g.after].label(), lines[0]);
    for (std::size_t i = 1; i < lines.size(); ++i) s += "; " + lines[i];
    s += "\n";
  }
  if (!r.only_before.empty() || !r.only_after.empty()) s += "\n### Unmatched GPUs\n\n";
  for (std::size_t i : r.only_before)
    s += fmt::format("- only in {} (fails the gate: its after-state is unknown): {} ({})\n",
                     r.before_label, r.before[i].label(), r.before[i].source);
  for (std::size_t i : r.only_after)
    s += fmt::format("- only in {} (not judged): {} ({})\n", r.after_label, r.after[i].label(),
                     r.after[i].source);
  s += fmt::format("\nResult: {} GPU(s) compared; {} → exit {}.\n", r.gpus.size(), r.exit_reason(),
                   static_cast<int>(r.exit_status()));
  return s;
}

nlohmann::ordered_json fleet_baseline_json(const FleetBaselineReport& r) {
  nlohmann::ordered_json j;
  j["exit_code"] = static_cast<int>(r.exit_status());
  j["exit_reason"] = r.exit_reason();
  j["before"] = r.before_label;
  j["after"] = r.after_label;
  j["threshold_pct"] = r.options.threshold_pct;
  j["alpha"] = r.options.alpha;
  nlohmann::ordered_json gpus = nlohmann::ordered_json::array();
  for (const auto& g : r.gpus) {
    nlohmann::ordered_json e = {{"gpu", r.after[g.after].label()},
                                {"exit_code", static_cast<int>(g.exit_status())},
                                {"failures", g.failures}};
    e["comparison"] = g.comparison ? nlohmann::ordered_json(comparison_json(*g.comparison))
                                   : nlohmann::ordered_json(nullptr);
    gpus.push_back(e);
  }
  j["gpus"] = gpus;
  nlohmann::ordered_json regs = nlohmann::ordered_json::array();
  for (const auto& reg : r.regressions) {
    nlohmann::ordered_json slow = nlohmann::ordered_json::array();
    for (std::size_t i : reg.slow) slow.push_back(r.after[r.gpus[i].after].label());
    regs.push_back({{"model", reg.model},
                    {"kernel", reg.kernel},
                    {"shape", reg.shape},
                    {"slow_on", slow},
                    {"compared", reg.compared},
                    {"median_ratio", reg.median_ratio},
                    {"scope", reg.fleet_wide() ? "fleet-wide" : "local"}});
  }
  j["regressions"] = regs;
  nlohmann::ordered_json only_before = nlohmann::ordered_json::array(),
                         only_after = nlohmann::ordered_json::array();
  for (std::size_t i : r.only_before) only_before.push_back(r.before[i].label());
  for (std::size_t i : r.only_after) only_after.push_back(r.after[i].label());
  j["only_before"] = only_before;
  j["only_after"] = only_after;
  return j;
}

}  // namespace rl::roofline
