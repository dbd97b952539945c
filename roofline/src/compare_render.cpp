// The gate's result as text for a terminal or a pull request (markdown) and
// for scripts (JSON); the HTML page is compare_page.cpp.
#include "rl/roofline/compare.hpp"

#include <fmt/format.h>

namespace rl::roofline {

std::string comparison_markdown(const Comparison& c) {
  std::string s = fmt::format("## roofline compare: {} → {}\n\n", c.base_label, c.new_label);
  s += fmt::format(
      "Threshold ±{:g}%, alpha {:g}.  Verdicts rest on the measured times: two-sided "
      "Mann-Whitney U over the repetitions (exact up to {} samples); SAME needs the {:.0f}% "
      "interval of the ratio within the threshold; noise = 1.4826 × MAD / median per side.  "
      "The clock-normalised ratio (compute-bound kernels with a sampled SM clock) is shown, "
      "never judged.\n\n",
      c.options.threshold_pct, c.options.alpha, kExactMannWhitneyMaxSamples,
      (1 - 2 * c.options.alpha) * 100);
  if (!c.cross_device_note.empty())
    s += fmt::format("**Cross-device comparison (--cross-device):** {}.\n\n", c.cross_device_note);
  s += "| kernel | shape | base median | new median | ratio | interval | noise base / new | "
       "p-value | clock-normalised | verdict | note |\n"
       "|---|---|---:|---:|---:|---:|---:|---:|---:|---|---|\n";
  for (const auto& k : c.kernels) {
    s += fmt::format(
        "| {} | {} | {:.4g} s ×{} | {:.4g} s ×{} | {:.3f} | {} | {:.1f}% / {:.1f}% | {:.3g}{} | "
        "{} | **{}** | {} |\n",
        k.name, k.shape, k.base.median_s, k.base.repetitions, k.next.median_s, k.next.repetitions,
        k.ratio,
        k.ratio_interval
            ? fmt::format("{:.3f} – {:.3f}", k.ratio_interval->low, k.ratio_interval->high)
            : "n/a",
        k.base.noise * 100, k.next.noise * 100, k.test.p, k.test.exact ? " (exact)" : "",
        k.clock_ratio ? fmt::format("{:.3f}", *k.clock_ratio) : "n/a", verdict_name(k.verdict),
        k.note);
  }
  if (c.kernels.empty()) s += "| (no kernel timed in both runs) | | | | | | | | | | |\n";
  if (auto geomean = c.geometric_mean_ratio())
    s += fmt::format("\nGeometric-mean ratio over {} kernel(s): {:.4f} ({:+.2f}%).\n",
                     c.kernels.size(), *geomean, (*geomean - 1) * 100);
  auto list = [&](std::string_view title, const std::vector<GateFailure>& items) {
    if (items.empty()) return;
    s += fmt::format("\n**{}:**\n", title);
    for (const auto& f : items) s += fmt::format("- {}: {}\n", f.kernel, f.reason);
  };
  list("Gate failures", c.failures);
  list("Allowed by --allow-missing", c.allowed);
  auto names = [&](std::string_view title, const std::vector<std::string>& items) {
    if (items.empty()) return;
    s += fmt::format("\n**{}:** ", title);
    for (std::size_t i = 0; i < items.size(); ++i) s += (i ? ", " : "") + items[i];
    s += "\n";
  };
  names("Only in " + c.new_label, c.only_in_new);
  names("Not compared", c.not_compared);
  if (!c.counter_flags.empty()) {
    s += "\n**Counters differ from the cost model** (flagged; the gate does not judge them):\n";
    for (const auto& f : c.counter_flags)
      s += fmt::format("- {} in {}: {}\n", f.kernel, f.file, f.sentence);
  }
  s += "\n### Context differences\n\n";
  if (c.context.empty()) {
    s += "None.\n";
  } else {
    s += "| field | base | new |\n|---|---|---|\n";
    for (const auto& d : c.context) s += fmt::format("| {} | {} | {} |\n", d.field, d.base, d.next);
  }
  s += fmt::format(
      "\nResult: {} SAME, {} FAST, {} SLOW, {} UNSURE, {} INCONCLUSIVE; {} → exit {}.\n",
      c.count(Verdict::same), c.count(Verdict::fast), c.count(Verdict::slow),
      c.count(Verdict::unsure), c.count(Verdict::inconclusive), c.exit_reason(),
      static_cast<int>(c.exit_status()));
  return s;
}

nlohmann::json comparison_json(const Comparison& c) {
  auto finite_or_null = [](std::optional<double> v) {
    return v && std::isfinite(*v) ? nlohmann::json(*v) : nlohmann::json(nullptr);
  };
  auto side = [&](const SideSummary& s) {
    return nlohmann::json{{"median_s", s.median_s},
                          {"repetitions", s.repetitions},
                          {"noise", s.noise},
                          {"sm_clock_mhz", finite_or_null(s.sm_clock_mhz)},
                          {"bound", std::string(to_string(s.bound))}};
  };
  nlohmann::json kernels = nlohmann::json::array();
  for (const auto& k : c.kernels) {
    kernels.push_back(
        {{"name", k.name},
         {"shape", k.shape},
         {"base", side(k.base)},
         {"new", side(k.next)},
         {"ratio", k.ratio},
         {"change_pct", k.change_pct},
         {"ratio_interval",
          k.ratio_interval ? nlohmann::json::array({k.ratio_interval->low, k.ratio_interval->high})
                           : nlohmann::json(nullptr)},
         {"p_value", k.test.p},
         {"p_exact", k.test.exact},
         {"smallest_p", k.smallest_p},
         {"clock_ratio", finite_or_null(k.clock_ratio)},
         {"verdict", verdict_name(k.verdict)},
         {"note", k.note}});
  }
  auto failures = [](const std::vector<GateFailure>& items) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& f : items) out.push_back({{"kernel", f.kernel}, {"reason", f.reason}});
    return out;
  };
  nlohmann::json counter_flags = nlohmann::json::array();
  for (const auto& f : c.counter_flags)
    counter_flags.push_back({{"kernel", f.kernel}, {"file", f.file}, {"sentence", f.sentence}});
  nlohmann::json context = nlohmann::json::array();
  for (const auto& d : c.context)
    context.push_back({{"field", d.field}, {"base", d.base}, {"new", d.next}});
  nlohmann::json counts = nlohmann::json::object();
  for (Verdict v :
       {Verdict::same, Verdict::fast, Verdict::slow, Verdict::unsure, Verdict::inconclusive})
    counts[std::string(verdict_name(v))] = c.count(v);
  return {{"base", c.base_label},
          {"new", c.new_label},
          {"threshold_pct", c.options.threshold_pct},
          {"alpha", c.options.alpha},
          {"cross_device", c.cross_device_note.empty() ? nlohmann::json(nullptr)
                                                       : nlohmann::json(c.cross_device_note)},
          {"kernels", kernels},
          {"geometric_mean_ratio", finite_or_null(c.geometric_mean_ratio())},
          {"failures", failures(c.failures)},
          {"allowed_missing", failures(c.allowed)},
          {"only_in_new", c.only_in_new},
          {"not_compared", c.not_compared},
          {"counter_flags", counter_flags},
          {"context_differences", context},
          {"verdict_counts", counts},
          {"exit_code", static_cast<int>(c.exit_status())},
          {"exit_reason", c.exit_reason()}};
}

}  // namespace rl::roofline
