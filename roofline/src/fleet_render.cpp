#include "rl/roofline/fleet.hpp"

#include "fleet_labels.hpp"

#include "rl/roofline/text.hpp"

#include <algorithm>
#include <set>

namespace rl::roofline {

namespace {

using fleet_detail::group_title;
using fleet_detail::pct;
using fleet_detail::run_list;

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
    if (g.backend == Backend::emulator)
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
                      {"backend", std::string(to_string(g.backend))},
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

}  // namespace rl::roofline
