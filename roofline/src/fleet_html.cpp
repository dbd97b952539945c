#include "rl/roofline/fleet.hpp"

#include "fleet_labels.hpp"

#include "rl/roofline/text.hpp"

#include <algorithm>
#include <cmath>

namespace rl::roofline {

namespace {

using fleet_detail::group_title;
using fleet_detail::pct;
using fleet_detail::run_list;

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
  for (const auto& g : r.groups) emulator |= g.backend == Backend::emulator;
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

}  // namespace rl::roofline
