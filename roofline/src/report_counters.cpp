// The report's "Counters beside the model" section (issue 28): per counted
// kernel, who counted it (the raw values behind a disclosure), whether the
// counts agree with its cost model, and each comparison's sentence.
#include "report_html.hpp"

#include "rl/roofline/counter_agreement.hpp"
#include "rl/roofline/text.hpp"

#include <fmt/format.h>

namespace rl::roofline::report_detail {

namespace {

// Who counted, and every counted value by its role key, folded away: the
// comparisons beside it are what a reader needs first.
std::string counted_by(const KernelCounters& c) {
  std::string h = "emulator (exact counts)";
  if (c.source == CounterSource::cupti) {
    h = "CUPTI";
    if (!c.chip.empty()) h += " on " + esc(c.chip);
    if (c.passes > 0) h += fmt::format(", {} pass{}", c.passes, c.passes == 1 ? "" : "es");
  }
  if (c.values.empty()) return h;
  h += fmt::format("<details><summary>{} value{}</summary>", c.values.size(),
                   c.values.size() == 1 ? "" : "s");
  for (const auto& [role, value] : c.values)
    h += fmt::format("{} = {}<br>", esc(role), esc(si(value)));
  return h + "</details>";
}

std::string verdict_cell(const KernelCounters& c, bool skipped) {
  const CounterVerdict v = counter_verdict(c);
  if (v.disagrees) return "<span class=\"bad\">differ</span>";
  if (!c.unavailable.empty()) return "<span class=\"muted\">" + esc(v.text) + "</span>";
  if (c.comparisons.empty())
    return skipped ? "<span class=\"muted\">nothing compared</span>"
                   : "<span class=\"muted\">nothing to compare (the model declares none of the "
                     "counted quantities)</span>";
  return "agree";
}

// The verdict, then each comparison's sentence and what was left out (the
// reason is the section's sentence above, and the item's hover title).
std::string comparisons_cell(const KernelResult& k) {
  const KernelCounters& c = *k.counters;
  const std::vector<SkippedComparison> skipped = skipped_comparisons(k);
  std::string h = verdict_cell(c, !skipped.empty());
  if (c.comparisons.empty() && skipped.empty()) return h;
  h += "<ul class=\"counters\">";
  for (const CounterComparison& x : c.comparisons)
    h += fmt::format(
        "<li{}><b>{}</b>: {}{}</li>", x.agrees ? "" : " class=\"bad\"", to_string(x.quantity),
        esc(x.sentence),
        x.tolerance > 0 ? fmt::format(" <small>(tolerance {:g}%)</small>", 100 * x.tolerance) : "");
  for (const SkippedComparison& s : skipped)
    for (CounterQuantity q : s.quantities)
      h += fmt::format("<li class=\"muted\" title=\"{}\"><b>{}</b>: not compared</li>", esc(s.why),
                       to_string(q));
  return h + "</ul>";
}

}  // namespace

std::string counters_section(const Results& r) {
  std::string rows;
  for (const auto& k : r.kernels) {
    if (!k.counters) continue;
    rows += fmt::format("<tr><td>{}<br><small>{}</small></td><td>{}</td><td>{}</td></tr>\n",
                        breakable(k.name), breakable(shape_text(k.shape)), counted_by(*k.counters),
                        comparisons_cell(k));
  }
  if (rows.empty()) return "";  // a run without --counters
  std::string not_compared;
  for (const std::string& sentence : not_compared_sentences(r))
    not_compared += "<p class=\"muted\">" + esc(sentence) + "</p>\n";
  return "<h2>Counters beside the model</h2>\n<p class=\"muted\">One replayed launch per kernel, "
         "counted after its timed samples, against the kernel's cost model (docs/counters.md). "
         "The emulator's counts are exact: any difference is the model's to fix. CUPTI's are "
         "judged within a tolerance per quantity (bytes 10%: sectors, caches and replays move "
         "them; tensor ops 2%; an FMA kernel's FLOPs 5%).</p>\n" +
         not_compared +
         "<table "
         "class=\"counters\">\n<tr><th>kernel</th><th>counted by"
         "</th><th>counters vs model</th></tr>\n" +
         rows + "</table>\n";
}

}  // namespace rl::roofline::report_detail
