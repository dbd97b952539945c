#include "rl/roofline/fleet.hpp"

#include <map>
#include <set>
#include <tuple>

#include <fmt/format.h>

namespace rl::roofline {

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
