#include "report_html.hpp"

#include "rl/roofline/text.hpp"

#include <cmath>

#include <fmt/format.h>

namespace rl::roofline::report_detail {

const std::string_view kCss = R"(
body{font-family:"DejaVu Sans",Helvetica,Arial,sans-serif;margin:24px;color:#222;max-width:1200px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px;border-bottom:1px solid #ddd}
h3{font-size:14px;margin:16px 0 4px}h1,h2,h3,p,li{overflow-wrap:anywhere}
table{border-collapse:collapse;font-size:13px;margin:6px 0;max-width:100%}
th,td{border:1px solid #ddd;padding:3px 8px;text-align:left;vertical-align:top;overflow-wrap:anywhere}
th{background:#f3f3f3}td.num{text-align:right;font-variant-numeric:tabular-nums}
.banner{background:#b00020;color:#fff;font-weight:bold;padding:8px 12px;font-size:16px;margin:8px 0}
.muted{color:#666}.bad{color:#b00020;font-weight:bold}.slower{color:#b00020}
figure.chart{margin:12px 0 20px}figure.chart svg{max-width:100%;height:auto;display:block}
figure.chart figcaption{font-size:13px;color:#444;margin:2px 0 4px}
.headline{border:1px solid #ccc;background:#fafafa;padding:8px 14px;margin:10px 0}
.headline p{margin:4px 0}.headline ul{margin:4px 0 4px 18px;padding:0}
.headline li{margin:2px 0}
.sortkey{position:absolute;opacity:0;pointer-events:none}
.ktable{display:flex;flex-direction:column;font-size:13px;border:1px solid #ddd;margin:6px 0}
.ktable .kr{display:grid;grid-template-columns:minmax(0,2.4fr) minmax(0,.9fr) minmax(0,1.1fr)
 repeat(5,minmax(0,1fr)) minmax(0,1.1fr) minmax(0,1.3fr);border-top:1px solid #e4e4e4}
.ktable .kr>div{padding:3px 6px;overflow-wrap:anywhere;min-width:0}
.ktable .kh{position:sticky;top:0;z-index:1;background:#f3f3f3;font-weight:bold;order:-1000000;
 border-top:none}
.ktable .kh label{cursor:pointer}.ktable .kh label:hover{text-decoration:underline}
.ktable .kb:nth-child(even){background:#fbfbfb}
.ktable .num{text-align:right;font-variant-numeric:tabular-nums}
.ktable small{color:#666}
table.counters{width:100%}table.counters td:first-child{width:26%}
table.counters td:nth-child(2){width:16%}table.counters small{color:#666}
ul.counters{margin:2px 0 0;padding-left:16px}ul.counters li.bad{font-weight:normal}
)";

std::string esc(std::string_view s) {
  return xml_escape(s);
}

// Escaped, with break opportunities after '_' and ',' so long kernel names
// and shapes wrap at their words in narrow columns.
std::string breakable(std::string_view text) {
  std::string out;
  for (char ch : esc(text)) {
    out += ch;
    if (ch == '_' || ch == ',') out += "<wbr>";
  }
  return out;
}

std::string rate(std::optional<double> v, std::string_view unit) {
  if (!v || !std::isfinite(*v)) return "—";
  return esc(si(*v) + std::string(unit));
}

std::string headline_html(const Results& r, const ReportOptions& options) {
  const Headline f = headline_facts(r, options);
  std::string h = "<section class=\"headline\">\n";
  h += fmt::format(
      "<p><b>{}</b> · compute capability {} · {} SMs · backend <b>{}</b> · datasheet row: {}</p>\n",
      esc(f.device), esc(f.compute_capability), f.sm_count, esc(f.backend),
      !f.sku.empty() ? esc(f.sku)
                     : "<span class=\"muted\">none (" + esc(f.sku_reason) + ")</span>");
  h += fmt::format(
      "<p>Kernels: <b>{}</b> validated and timed, {}{} failed{}, {} skipped (not run){}.</p>\n",
      f.ok, f.failed > 0 ? "<span class=\"bad\">" : "", f.failed, f.failed > 0 ? "</span>" : "",
      f.skipped, f.other > 0 ? fmt::format(", {} other", f.other) : "");
  if (!f.verdicts.empty() && f.emulator) {
    // No claim applies to an emulator: one line, the values for the record.
    std::string values;
    for (const auto& v : f.verdicts)
      values +=
          fmt::format("{}<b>{}</b> {}", values.empty() ? "" : ", ", esc(v.name), esc(v.measured));
    h += "<p>Ceilings, measured on the CPU emulator (no datasheet or derived GPU figure "
         "applies): " +
         values + ".</p>\n";
  } else if (!f.verdicts.empty()) {
    h += "<p>Ceilings against the claim:</p>\n<ul class=\"verdicts\">\n";
    for (const auto& v : f.verdicts) {
      std::string against;
      for (const auto& a : v.against) against += (against.empty() ? "" : ", ") + a;
      if (v.word.empty())
        h += fmt::format("<li><b>{}</b> {} — no datasheet or derived figure for this device</li>\n",
                         esc(v.name), esc(v.measured));
      else
        h += fmt::format("<li><b>{}</b> {} — {}{}{} ({})</li>\n", esc(v.name), esc(v.measured),
                         v.bad ? "<span class=\"bad\">" : "", esc(v.word), v.bad ? "</span>" : "",
                         esc(against));
    }
    h += "</ul>\n";
  } else {
    h += "<p class=\"muted\">No ceilings measured: no roof and no verdict against a claim.</p>\n";
  }
  h += "<p>" + esc(noise_text(f)) + ".</p>\n";
  std::string throttling = esc(throttling_text(f));
  if (!f.nvml)
    throttling = "<b>unknown</b>" + throttling.substr(std::string("unknown").size());
  else if (f.throttled > 0 || f.discarded > 0 || !f.throttled_ceilings.empty())
    throttling = "<span class=\"bad\">" + throttling + "</span>";
  h += "<p>Throttling: " + throttling + ".</p>\n";
  if (std::string counters = esc(counters_text(f)); !counters.empty())
    h += fmt::format("<p>{}{}{}.</p>\n", f.counters_differ > 0 ? "<span class=\"bad\">" : "",
                     counters, f.counters_differ > 0 ? "</span>" : "");
  h += "</section>\n";
  return h;
}

}  // namespace rl::roofline::report_detail
