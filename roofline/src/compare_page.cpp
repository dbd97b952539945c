#include "rl/roofline/report.hpp"

#include "report_html.hpp"

#include "rl/roofline/text.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <utility>
#include <vector>

#include <fmt/format.h>

namespace rl::roofline {

namespace {

using report_detail::breakable;
using report_detail::esc;
using report_detail::kCss;

// The ratio's interval on a log axis from 1/span to span, the threshold band
// shaded, the point at the median ratio: how far a change is from "same".
std::string interval_svg(const KernelComparison& k, double threshold) {
  const double span =
      std::max({1.25, 1 + 2 * threshold, k.ratio, k.ratio_interval ? k.ratio_interval->high : 1.0,
                1 / std::max(1e-9, k.ratio_interval ? k.ratio_interval->low : 1.0),
                1 / std::max(1e-9, k.ratio)});
  const double w = 100, h = 16;
  auto x = [&](double ratio) {
    return std::clamp(w / 2 + w / 2 * std::log(std::max(ratio, 1e-12)) / std::log(span), 1.0,
                      w - 1);
  };
  std::string colour = k.verdict == Verdict::slow   ? "#b00020"
                       : k.verdict == Verdict::fast ? "#0072B2"
                                                    : "#444444";
  std::string s = fmt::format(
      "<svg class=\"ci\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\"><rect x=\"{2:.1f}\" "
      "y=\"1\" width=\"{3:.1f}\" height=\"14\" fill=\"#e8e8e8\"/><line x1=\"{4:.1f}\" y1=\"0\" "
      "x2=\"{4:.1f}\" y2=\"16\" stroke=\"#999\"/>",
      w, h, x(1 - threshold), x(1 + threshold) - x(1 - threshold), x(1));
  if (k.ratio_interval)
    s += fmt::format(
        "<line x1=\"{:.1f}\" y1=\"8\" x2=\"{:.1f}\" y2=\"8\" stroke=\"{}\" "
        "stroke-width=\"2\"/>",
        x(k.ratio_interval->low), x(k.ratio_interval->high), colour);
  s += fmt::format("<circle cx=\"{:.1f}\" cy=\"8\" r=\"3.5\" fill=\"{}\"/></svg>", x(k.ratio),
                   colour);
  return s;
}

int verdict_rank(Verdict v) {
  switch (v) {
    case Verdict::slow:
      return 0;
    case Verdict::unsure:
      return 1;
    case Verdict::inconclusive:
      return 2;
    case Verdict::fast:
      return 3;
    case Verdict::same:
      return 4;
  }
  return 5;
}

}  // namespace

std::string render_comparison_html(const Comparison& c) {
  const double t = c.options.threshold_pct / 100;
  const int exit = static_cast<int>(c.exit_status());
  std::string h =
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  h += fmt::format("<title>roofline compare — {} → {}</title>\n", esc(c.base_label),
                   esc(c.new_label));
  h += "<style>" + std::string(kCss) +
       "tr.slow td{background:#fde8eb}tr.fast td{background:#e6f1fa}"
       "tr.unsure td,tr.inconclusive "
       "td{background:#fff6e0}.verdict{font-weight:bold;overflow-wrap:normal}"
       "svg.ci{display:block}</style>\n</head>\n<body>\n";
  h += fmt::format("<h1>roofline compare — {} → {}</h1>\n", esc(c.base_label), esc(c.new_label));
  h += fmt::format(
      "<section class=\"headline\"><p><b class=\"{}\">exit {}</b>: {}.</p>\n<p>{} SLOW, {} FAST, "
      "{} SAME, {} UNSURE, {} INCONCLUSIVE over {} kernel(s) timed in both runs{}.</p>\n<p "
      "class=\"muted\">Threshold ±{:g}%, alpha {:g}: SLOW/FAST need p &lt; alpha (two-sided "
      "Mann-Whitney U over the repetitions) and a change beyond the threshold; SAME needs the "
      "{:.0f}% interval of the ratio inside the grey band. Verdicts rest on the measured "
      "times.</p>\n",
      exit == 0 ? "" : "bad", exit, esc(c.exit_reason()), c.count(Verdict::slow),
      c.count(Verdict::fast), c.count(Verdict::same), c.count(Verdict::unsure),
      c.count(Verdict::inconclusive), c.kernels.size(),
      c.geometric_mean_ratio()
          ? fmt::format("; geometric-mean ratio {:.4f} ({:+.2f}%)", *c.geometric_mean_ratio(),
                        (*c.geometric_mean_ratio() - 1) * 100)
          : "",
      c.options.threshold_pct, c.options.alpha, (1 - 2 * c.options.alpha) * 100);
  if (!c.cross_device_note.empty())
    h += "<p class=\"bad\">Cross-device comparison (--cross-device): " + esc(c.cross_device_note) +
         ".</p>\n";
  h += "</section>\n";
  auto list = [&](std::string_view title, const std::vector<GateFailure>& items, bool bad) {
    if (items.empty()) return;
    h += fmt::format("<h2>{}</h2>\n<ul>\n", esc(title));
    for (const auto& f : items)
      h += fmt::format("<li{}><b>{}</b>: {}</li>\n", bad ? " class=\"bad\"" : "", esc(f.kernel),
                       esc(f.reason));
    h += "</ul>\n";
  };
  list("Gate failures", c.failures, true);
  list("Allowed by --allow-missing", c.allowed, false);

  std::vector<const KernelComparison*> order;
  for (const auto& k : c.kernels) order.push_back(&k);
  std::stable_sort(order.begin(), order.end(), [](const auto* a, const auto* b) {
    return std::make_pair(verdict_rank(a->verdict), -a->ratio) <
           std::make_pair(verdict_rank(b->verdict), -b->ratio);
  });
  h += "<h2>Kernels, worst first</h2>\n<table class=\"compare\">\n<tr><th>verdict</th><th>kernel"
       "</th><th>shape</th><th>base median</th><th>new median</th><th>ratio</th><th>interval "
       "(grey: ±threshold)</th><th>p</th><th>noise base / new</th><th>cycles ratio</th><th>note"
       "</th></tr>\n";
  for (const auto* k : order) {
    std::string name(verdict_name(k->verdict));
    std::string cls;
    for (char ch : name) cls += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    h += fmt::format(
        "<tr class=\"{}\"><td class=\"verdict\">{}</td><td>{}</td><td>{}</td><td "
        "class=\"num\">{}s ×{}</td><td class=\"num\">{}s ×{}</td><td class=\"num\">{:.3f} "
        "({:+.1f}%)</td><td>{}<small>{}</small></td><td class=\"num\">{:.3g}{}</td><td "
        "class=\"num\">{:.1f}% / {:.1f}%</td><td class=\"num\">{}</td><td>{}</td></tr>\n",
        cls, esc(name), breakable(k->name), breakable(k->shape), esc(si(k->base.median_s)),
        k->base.repetitions, esc(si(k->next.median_s)), k->next.repetitions, k->ratio,
        k->change_pct, interval_svg(*k, t),
        k->ratio_interval
            ? fmt::format("{:.3f} – {:.3f}", k->ratio_interval->low, k->ratio_interval->high)
            : "n/a",
        k->test.p, k->test.exact ? " (exact)" : "", 100 * k->base.noise, 100 * k->next.noise,
        k->clock_ratio ? fmt::format("{:.3f}", *k->clock_ratio) : "—", esc(k->note));
  }
  if (c.kernels.empty())
    h += "<tr><td colspan=\"11\" class=\"muted\">no kernel timed in both runs</td></tr>\n";
  h += "</table>\n";
  auto names = [&](std::string_view title, const std::vector<std::string>& items) {
    if (items.empty()) return;
    h += fmt::format("<h2>{}</h2>\n<ul>\n", esc(title));
    for (const auto& n : items) h += "<li>" + esc(n) + "</li>\n";
    h += "</ul>\n";
  };
  names("Only in " + c.new_label, c.only_in_new);
  names("Not compared", c.not_compared);
  if (!c.counter_flags.empty()) {
    h += "<h2>Counters differ from the cost model</h2>\n<p class=\"muted\">Flagged; the gate "
         "does not judge counters (they check the model, not the speed).</p>\n<ul>\n";
    for (const auto& f : c.counter_flags)
      h += fmt::format("<li><b>{}</b> in {}: <span class=\"bad\">differ</span>: {}</li>\n",
                       esc(f.kernel), esc(f.file), esc(f.sentence));
    h += "</ul>\n";
  }
  h += "<h2>Context differences</h2>\n";
  if (c.context.empty()) {
    h += "<p>None.</p>\n";
  } else {
    h += "<table class=\"context\">\n<tr><th>field</th><th>base</th><th>new</th></tr>\n";
    for (const auto& d : c.context)
      h += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td></tr>\n", esc(d.field), esc(d.base),
                       esc(d.next));
    h += "</table>\n";
  }
  h += "</body>\n</html>\n";
  return h;
}

}  // namespace rl::roofline
