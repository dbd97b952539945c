#include "rl/roofline/report.hpp"

#include "rl/roofline/analysis.hpp"
#include "rl/roofline/model.hpp"
#include "rl/roofline/results_io.hpp"
#include "rl/roofline/svg.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <optional>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

namespace rl::roofline {

namespace {

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

// "1980 / 1980 MHz"; "n/a" for a value nobody measured (0 in results.json).
std::string mhz_pair(double current, double max) {
  auto one = [](double mhz) { return mhz > 0 ? fmt::format("{:.0f}", mhz) : std::string("n/a"); };
  if (current <= 0 && max <= 0) return "n/a";
  return one(current) + " / " + one(max) + " MHz";
}

std::string validation_text(const KernelResult& k) {
  if (std::isinf(k.max_rel_err)) return "not finite";
  return fmt::format("{:.2e}", k.max_rel_err);
}

// Datasheet and derived figures for a ceiling: what the results carry, else
// what the SKU row says (derived at the clock observed during the measurement).
struct Claim {
  std::optional<double> datasheet, derived;
};

Claim claim_for(const Ceiling& c, const Results& r, const Sku* sku, bool sku_chosen) {
  Claim claim{c.datasheet, c.derived_peak};
  if (sku_chosen) claim = {};  // the chosen row's figures only
  if (!sku) return claim;
  if (c.kind == "memory") {
    if (!claim.datasheet && c.name.starts_with("hbm.") && sku->memory_bytes_per_s > 0)
      claim.datasheet = sku->memory_bytes_per_s;
    return claim;
  }
  auto unit = parse_compute_unit(c.name);
  if (!unit) return claim;
  if (!claim.datasheet) claim.datasheet = sku->datasheet[*unit];
  if (!claim.derived) {
    double clock = c.observed_sm_mhz.value_or(r.context.clocks.sm_max_mhz);
    if (clock > 0) claim.derived = derived_peak_for_device(r.context.device, sku, *unit, clock);
  }
  return claim;
}

constexpr std::string_view kCss = R"(
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
)";

std::string pct_text(const std::optional<double>& pct) {
  return pct ? fmt::format("{:.1f}%", *pct) : "—";
}

std::string status_cell(const std::string& status, const std::string& error) {
  if (status == "ok") return "ok";
  return fmt::format("<span class=\"bad\">{}</span>{}", esc(status.empty() ? "—" : status),
                     error.empty() ? "" : ": " + esc(error));
}

// The GEMM ladder (one table per shape, like SGEMM_CUDA's README table), the
// precision ladder, and why fusion beats naive attention (analysis.hpp).
std::string analysis_sections(const Analysis& a) {
  std::string h;
  if (!a.gemm_ladders.empty()) {
    h += "<h2>GEMM ladder</h2>\n<p class=\"muted\">Each rung changes one thing from the one "
         "above it. % of library: against the fastest library record (cuBLAS / cuBLASLt) of the "
         "same precision at the same shape, where one was timed.</p>\n";
    for (const GemmLadder& l : a.gemm_ladders) {
      h += fmt::format(
          "<h3>{}</h3>\n<table class=\"ladder\">\n<tr><th>rung</th><th>what it "
          "adds</th><th>precision</th><th>FLOP/s</th><th>% of library</th><th>% of "
          "roof</th><th>status</th></tr>\n",
          esc(shape_text(l.shape)));
      for (const LadderRung& r : l.rungs)
        h += fmt::format(
            "<tr><td>{}{}</td><td>{}</td><td>{}</td><td class=\"num\">{}</td><td "
            "class=\"num\"{}>{}</td><td class=\"num\">{}</td><td>{}</td></tr>\n",
            esc(r.name),
            r.library.empty() ? "" : " <span class=\"muted\">(" + esc(r.library) + ")</span>",
            esc(r.idea.empty() ? "—" : r.idea), esc(r.precision), rate(r.flops_per_s, "FLOP/s"),
            r.library_reference.empty() ? "" : " title=\"of " + esc(r.library_reference) + "\"",
            pct_text(r.pct_of_library), pct_text(r.pct_of_roof), status_cell(r.status, r.error));
      h += "</table>\n";
    }
  }
  if (a.precision_ladder) {
    h += fmt::format(
        "<h2>Precision ladder ({})</h2>\n<p class=\"muted\">The fastest "
        "hand-written kernel and library record of each precision at one shape, "
        "beside that precision's measured compute roof: the steps between roofs are "
        "what lower precision buys.</p>\n<table class=\"precision\">\n<tr><th>"
        "precision</th><th>fastest kernel</th><th>FLOP/s</th><th>library</th><th>"
        "FLOP/s</th><th>compute roof</th></tr>\n",
        esc(shape_text(a.precision_ladder->shape)));
    for (const PrecisionStep& s : a.precision_ladder->steps)
      h += fmt::format(
          "<tr><td>{}</td><td>{}</td><td class=\"num\">{}</td><td>{}</td><td "
          "class=\"num\">{}</td><td class=\"num\">{}</td></tr>\n",
          esc(s.precision), esc(s.kernel.empty() ? "—" : s.kernel), rate(s.flops_per_s, "FLOP/s"),
          esc(s.library.empty() ? "—" : s.library), rate(s.library_flops_per_s, "FLOP/s"),
          s.roof ? esc(s.roof_name) + " " + rate(s.roof, "FLOP/s")
                 : esc(s.roof_name.empty() ? "—" : s.roof_name + " not measured"));
    h += "</table>\n";
  }
  if (!a.attention_fusion.empty()) {
    h += "<h2>Why fusion beats naive attention</h2>\n<p class=\"muted\">Bytes are the cost "
         "model's (results.json <code>bytes_model</code>). Beyond Q, K, V, O: for a naive "
         "variant the share of its traffic that is S and P written and read back; for a fused "
         "one, the K/V re-reads per query tile. Footprint: the device memory the instance "
         "declares.</p>\n";
    for (const AttentionFusion& f : a.attention_fusion) {
      h += fmt::format(
          "<h3>{}</h3>\n<table class=\"attention\">\n<tr><th>variant</th>"
          "<th>precision</th><th>bytes (model)</th><th>beyond Q,K,V,O</th><th>"
          "intensity FLOP/B</th><th>median time</th><th>speed-up</th><th>FLOP/s"
          "</th><th>% of roof</th><th>footprint</th><th>status</th></tr>\n",
          esc(shape_text(f.shape)));
      for (const AttentionVariant& v : f.variants)
        h += fmt::format(
            "<tr><td>{}{}</td><td>{}</td><td class=\"num\">{}B</td><td class=\"num\">{:.0f}%"
            "</td><td class=\"num\">{:.3g}</td><td class=\"num\">{}</td><td "
            "class=\"num\"{}>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td "
            "class=\"num\">{}</td><td>{}</td></tr>\n",
            esc(v.name), v.naive ? " <span class=\"muted\">(naive)</span>" : "", esc(v.precision),
            esc(si(v.bytes_model)), 100.0 * v.extra_traffic_share, v.intensity,
            v.time_s ? esc(si(*v.time_s) + "s") : "—",
            v.speedup_over.empty() ? "" : " title=\"over " + esc(v.speedup_over) + "\"",
            v.speedup ? fmt::format("{:.2f}×", *v.speedup) : "—", rate(v.flops_per_s, "FLOP/s"),
            pct_text(v.pct_of_roof), v.device_bytes ? esc(si(*v.device_bytes) + "B") : "—",
            status_cell(v.status, v.error));
      h += "</table>\n";
      if (!f.findings.empty()) {
        h += "<ul class=\"findings\">\n";
        for (const std::string& finding : f.findings) h += "<li>" + esc(finding) + "</li>\n";
        h += "</ul>\n";
      }
    }
  }
  return h;
}

// ------------------------------------------------------------------ fusion

// Fusion is a declared pair (a record's `fuses` names the unfused reference),
// never a ladder's rung and its baseline: those are in the ladder section.
std::string fusion_section(const Results& r) {
  std::string rows;
  for (const auto& fused : r.kernels) {
    if (fused.fuses.empty()) continue;
    for (const auto& unfused : r.kernels) {
      if (unfused.name != fused.fuses || unfused.shape != fused.shape) continue;
      std::string speedup = "—";
      if (fused.time_s && unfused.time_s && fused.time_s->median > 0) {
        const double s = unfused.time_s->median / fused.time_s->median;
        speedup = s < 1 ? fmt::format(
                              "<span class=\"slower\">{:.2f}× (the fused kernel is "
                              "slower here)</span>",
                              s)
                        : fmt::format("{:.2f}×", s);
      }
      const double saved =
          unfused.bytes_model > 0 ? 1 - fused.bytes_model / unfused.bytes_model : 0.0;
      rows += fmt::format(
          "<tr><td>{}</td><td>{}</td><td>{}</td><td class=\"num\">{}B → {}B ({:.0f}% less; "
          "compulsory {}B)</td><td class=\"num\">{:.3g} → {:.3g}</td><td class=\"num\">{} → "
          "{}</td><td class=\"num\">{}</td></tr>\n",
          breakable(unfused.name), breakable(fused.name), breakable(shape_text(fused.shape)),
          esc(si(unfused.bytes_model)), esc(si(fused.bytes_model)), 100 * saved,
          esc(si(fused.bytes_min)), intensity(unfused.flops, unfused.bytes_model),
          intensity(fused.flops, fused.bytes_model),
          unfused.time_s ? esc(si(unfused.time_s->median) + "s") : "not timed",
          fused.time_s ? esc(si(fused.time_s->median) + "s") : "not timed", speedup);
    }
  }
  std::string h = "<h2>Fusion</h2>\n";
  if (rows.empty())
    return h +
           "<p class=\"muted\">No declared fusion pairs in this run (a record declares "
           "one with <code>fuses</code>, naming the unfused kernel it replaces).</p>\n";
  h += "<p class=\"muted\">Each fused kernel beside the unfused kernels it replaces, at the same "
       "shape: bytes are the cost model's (<code>bytes_model</code>), so the saving is the "
       "traffic fusion removes; speed-up = unfused median time / fused median time.";
  if (r.context.backend == "emulator")
    h += " These are CPU-emulator times: the byte savings hold, the speed-ups do not.";
  h += "</p>\n<table class=\"fusion\">\n<tr><th>unfused</th><th>fused</th><th>shape</th><th>"
       "bytes moved (model)</th><th>intensity FLOP/B</th><th>median time</th><th>speed-up"
       "</th></tr>\n" +
       rows + "</table>\n";
  return h;
}

// ------------------------------------------------------------------ headline

// How a measured ceiling stands against the claim: the datasheet's figure
// when there is one, else the derived peak.  Plain text; the HTML adds marks.
struct CeilingVerdict {
  std::string name, measured;
  std::string word;                  // "" when there is nothing to compare with
  bool bad = false;                  // far short of the claim, or above it
  std::vector<std::string> against;  // "78% of the datasheet's 2.04 TB/s", ...
};

CeilingVerdict ceiling_verdict(const Ceiling& c, const Claim& claim) {
  CeilingVerdict v{c.name, si(c.value) + c.unit, "", false, {}};
  std::optional<double> pct;
  if (claim.datasheet && *claim.datasheet > 0) {
    pct = 100 * c.value / *claim.datasheet;
    v.against.push_back(
        fmt::format("{:.0f}% of the datasheet's {}", *pct, si(*claim.datasheet) + c.unit));
  }
  if (claim.derived && *claim.derived > 0) {
    double of_derived = 100 * c.value / *claim.derived;
    if (!pct) pct = of_derived;
    v.against.push_back(
        fmt::format("{:.0f}% of the derived peak {}", of_derived, si(*claim.derived) + c.unit));
  }
  if (!pct) return v;
  // Thresholds a reader can check: a well-run ceiling loop reaches about 90%.
  v.word = *pct > 105   ? "above the claim: check the method"
           : *pct >= 90 ? "meets the claim"
           : *pct >= 70 ? "short of the claim"
                        : "far short of the claim";
  v.bad = *pct > 105 || *pct < 70;
  return v;
}

// A kernel's relative noise: the harness's robust figure when the file has
// it, else the spread of the repetitions (stddev / median).
std::optional<double> relative_noise(const KernelResult& k, bool& robust) {
  if (!k.time_s || !(k.time_s->median > 0)) return std::nullopt;
  if (k.time_s->noise) {
    robust = true;
    return *k.time_s->noise;
  }
  if (k.time_s->repetitions < 2) return std::nullopt;
  return k.time_s->stddev / k.time_s->median;
}

// What the headline says, computed once for the page and the terminal.
struct Headline {
  std::string device, compute_capability, backend, sku;  // sku: "" none
  std::string sku_reason;
  int sm_count = 0;
  bool emulator = false;
  int ok = 0, failed = 0, skipped = 0, other = 0;
  std::vector<CeilingVerdict> verdicts;
  std::size_t noise_count = 0;
  bool noise_robust = false;
  double noise_median = 0, noise_worst = 0;
  std::string noise_worst_kernel;
  bool nvml = false;
  std::string nvml_note;
  int throttled = 0, discarded = 0;
  std::string throttled_ceilings;
};

Headline headline_facts(const Results& r, const ReportOptions& options) {
  const auto& c = r.context;
  Headline h;
  h.device = c.device.name.empty() ? "unknown device" : c.device.name;
  h.compute_capability = c.device.compute_capability.empty() ? "n/a" : c.device.compute_capability;
  h.sm_count = c.device.sm_count;
  h.backend = c.backend;
  h.emulator = c.backend == "emulator";
  h.sku = options.sku ? options.sku->name : "";
  h.sku_reason = options.sku_reason;
  for (const auto& k : r.kernels) {
    if (k.status == "ok" && k.validated)
      ++h.ok;
    else if (k.status == "skipped")
      ++h.skipped;
    else if (k.status == "failed_validation" || k.status == "error" || !k.validated)
      ++h.failed;
    else
      ++h.other;
  }
  for (const auto& ceiling : r.ceilings)
    h.verdicts.push_back(
        ceiling_verdict(ceiling, claim_for(ceiling, r, options.sku, options.sku_chosen)));
  std::vector<std::pair<double, std::string>> noise;
  for (const auto& k : r.kernels)
    if (auto n = relative_noise(k, h.noise_robust)) noise.emplace_back(*n, k.name);
  if (!noise.empty()) {
    std::sort(noise.begin(), noise.end());
    h.noise_count = noise.size();
    h.noise_median = noise[noise.size() / 2].first;
    h.noise_worst = noise.back().first;
    h.noise_worst_kernel = noise.back().second;
  }
  h.nvml = c.nvml_available;
  h.nvml_note = c.nvml_note;
  for (const auto& k : r.kernels) {
    h.throttled += k.throttled;
    h.discarded += k.discarded_throttled;
  }
  for (const auto& ceiling : r.ceilings)
    if (!ceiling.throttle_reasons.empty())
      h.throttled_ceilings += (h.throttled_ceilings.empty() ? "" : ", ") + ceiling.name;
  return h;
}

// "Noise (what it is): median ..., worst ...", or unknown.
std::string noise_text(const Headline& h) {
  if (h.noise_count == 0) return "Noise: unknown (no kernel timed with two or more repetitions)";
  return fmt::format("Noise ({}): median {:.2f}% over {} kernels, worst {:.2f}% ({})",
                     h.noise_robust ? "1.4826 × MAD / median of the samples"
                                    : "spread: stddev / median of the repetitions",
                     100 * h.noise_median, h.noise_count, 100 * h.noise_worst,
                     h.noise_worst_kernel);
}

// Throttling: only what NVML watched; without it nothing can be said.
std::string throttling_text(const Headline& h) {
  if (!h.nvml)
    return "unknown — NVML not available" + (h.nvml_note.empty() ? "" : " (" + h.nvml_note + ")");
  if (h.throttled == 0 && h.discarded == 0 && h.throttled_ceilings.empty())
    return "none seen by NVML during the samples";
  return fmt::format("{} kernel(s) throttled, {} sample(s) discarded for a clock-lowering reason{}",
                     h.throttled, h.discarded,
                     h.throttled_ceilings.empty()
                         ? ""
                         : "; ceilings with throttle reasons: " + h.throttled_ceilings);
}

std::string headline(const Results& r, const ReportOptions& options) {
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
  h += "<p>Throttling: " + throttling + ".</p>\n</section>\n";
  return h;
}

// ------------------------------------------------------------------ kernel table

// Sorting without a script: every row carries its rank in each sortable
// column as a CSS variable, a hidden radio button per column and direction
// sits before the table, and the checked one sets the flex `order` of the
// rows.  The header labels are the buttons.
struct Column {
  std::string title;
  bool numeric;
};

std::string kernel_table(const Results& r) {
  const std::vector<Column> columns{{"kernel", false},
                                    {"precision (unit)", false},
                                    {"shape", false},
                                    {"median time", true},
                                    {"noise", true},
                                    {"FLOP/s", true},
                                    {"B/s", true},
                                    {"intensity FLOP/B", true},
                                    {"bound, % of roof", true},
                                    {"validation", false}};
  const std::size_t n = r.kernels.size();
  // Sort keys: numbers (absent ones last) or text.
  std::vector<std::vector<std::pair<double, std::string>>> keys(
      columns.size(), std::vector<std::pair<double, std::string>>(n));
  constexpr double kAbsent = std::numeric_limits<double>::infinity();
  bool robust = false;
  for (std::size_t i = 0; i < n; ++i) {
    const auto& k = r.kernels[i];
    const bool timed = k.time_s.has_value();
    keys[0][i] = {0, k.name};
    keys[1][i] = {0, k.precision + " " + k.unit};
    keys[2][i] = {0, shape_text(k.shape)};
    keys[3][i] = {timed ? k.time_s->median : kAbsent, ""};
    keys[4][i] = {relative_noise(k, robust).value_or(kAbsent), ""};
    keys[5][i] = {timed ? k.achieved_flops_per_s : kAbsent, ""};
    keys[6][i] = {timed ? k.achieved_bytes_per_s : kAbsent, ""};
    keys[7][i] = {intensity(k.flops, k.bytes_model), ""};
    keys[8][i] = {k.pct_of_roof.value_or(kAbsent), ""};
    keys[9][i] = {k.validated ? k.max_rel_err : kAbsent, k.status};
  }
  std::vector<std::vector<std::size_t>> rank(columns.size(), std::vector<std::size_t>(n));
  for (std::size_t c = 0; c < columns.size(); ++c) {
    std::vector<std::size_t> order(n);
    for (std::size_t i = 0; i < n; ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return keys[c][a] < keys[c][b]; });
    for (std::size_t pos = 0; pos < n; ++pos) rank[c][order[pos]] = pos;
  }

  std::string h;
  std::string css;
  for (std::size_t c = 0; c < columns.size(); ++c) {
    h += fmt::format(
        "<input type=\"radio\" name=\"kernel-sort\" class=\"sortkey\" id=\"ks{0}a\">"
        "<input type=\"radio\" name=\"kernel-sort\" class=\"sortkey\" id=\"ks{0}d\">\n",
        c);
    css += fmt::format(
        "#ks{0}a:checked~.ktable .kb{{order:var(--k{0})}}"
        "#ks{0}d:checked~.ktable .kb{{order:calc(-1*var(--k{0}))}}\n",
        c);
  }
  h = "<style>" + css + "</style>\n" + h;
  h += "<div class=\"ktable\" role=\"table\">\n<div class=\"kr kh\" role=\"row\">";
  for (std::size_t c = 0; c < columns.size(); ++c)
    h += fmt::format(
        "<div role=\"columnheader\"><label for=\"ks{0}a\" title=\"sort ascending\">{1}</label> "
        "<label for=\"ks{0}d\" title=\"sort descending\">▾</label></div>",
        c, esc(columns[c].title));
  h += "</div>\n";
  for (std::size_t i = 0; i < n; ++i) {
    const auto& k = r.kernels[i];
    // Results written before ceilings existed carry no roof: judge them here
    // against the file's own ceilings (what apply_roofline would have filled).
    RoofVerdict verdict{k.roof, k.pct_of_roof, k.bound, k.memory_roof};
    if (!k.roof && k.bound.empty())
      verdict = judge(k, r.ceilings, static_cast<double>(r.context.device.l2_bytes));
    std::string style;
    for (std::size_t c = 0; c < columns.size(); ++c)
      style += fmt::format("--k{}:{};", c, rank[c][i]);
    std::string time = "not timed", spread;
    if (k.time_s) {
      time = si(k.time_s->median) + "s";
      spread = fmt::format("{}s – {}s, n={}", si(k.time_s->min), si(k.time_s->max),
                           k.time_s->repetitions);
    }
    bool robust_here = false;
    auto noise = relative_noise(k, robust_here);
    // A skip is not a failure: its reason is a hover title, kept short in the cell.
    std::string validation;
    if (k.validated)
      validation = "passed, " + validation_text(k);
    else if (k.status == "skipped")
      validation = fmt::format("<span class=\"muted\" title=\"{}\">skipped{}</span>", esc(k.error),
                               k.error.empty() ? "" : " (hover for why)");
    else
      validation = fmt::format(
          "<span class=\"bad\">{}</span> <small>{}</small>",
          esc(k.status.empty() ? "failed" : k.status),
          esc(fmt::format("({}{})", validation_text(k), k.error.empty() ? "" : "; " + k.error)));
    const double ai = intensity(k.flops, k.bytes_model), ai_min = intensity(k.flops, k.bytes_min);
    std::string ai_text = fmt::format("{:.3g}", ai);
    if (std::abs(ai - ai_min) > 1e-9 * std::max(1.0, ai))
      ai_text += fmt::format(" <small>({:.3g} vs bytes_min)</small>", ai_min);
    std::string bound = verdict.bound.empty() ? "—" : esc(verdict.bound);
    if (verdict.pct_of_roof) bound += fmt::format(", {:.1f}%", *verdict.pct_of_roof);
    if (!verdict.memory_roof.empty())
      bound += " <small>vs " + esc(verdict.memory_roof) + "</small>";
    h += fmt::format(
        "<div class=\"kr kb\" role=\"row\" style=\"{}\"><div>{}{}<br><small>{} / "
        "{}</small></div><div>{} <small>({})</small></div><div>{}</div><div class=\"num\" "
        "title=\"{}\">{}</div><div class=\"num\">{}</div><div class=\"num\">{}</div><div "
        "class=\"num\">{}</div><div class=\"num\">{}</div><div>{}</div><div>{}</div></div>\n",
        style, breakable(k.name), k.throttled ? " <span class=\"bad\">(throttled)</span>" : "",
        esc(k.family), esc(k.variant), esc(k.precision), esc(k.unit),
        breakable(shape_text(k.shape)), esc(spread), esc(time),
        noise ? fmt::format("{:.2f}%", 100 * *noise) : "—",
        k.time_s ? rate(k.achieved_flops_per_s, "FLOP/s") : "—",
        k.time_s ? rate(k.achieved_bytes_per_s, "B/s") : "—", ai_text, bound, validation);
  }
  h += "</div>\n";
  return h;
}

// ------------------------------------------------------------------ ladders

std::string ladder_section(const Results& r) {
  const auto steps = ladder_steps(r);
  if (steps.empty()) return {};
  std::string h =
      "<h2>Ladders: what each rung buys</h2>\n<p class=\"muted\">Each rung against the rung "
      "below it (its <code>baseline</code>) at the same shape: gain = baseline median time / "
      "rung median time. A gain under 1 means the rung is slower there.";
  if (r.context.backend == "emulator")
    h += " These are CPU-emulator times: the gains describe the emulator, not a GPU.";
  h += "</p>\n";
  std::string family;
  ShapeDims shape;
  bool open = false;
  for (const auto& s : steps) {
    if (!open || s.family != family || s.shape != shape) {
      if (open) h += "</table>\n";
      family = s.family;
      shape = s.shape;
      h += fmt::format(
          "<h3>{} at {}</h3>\n<table class=\"ladder-steps\">\n<tr><th>rung</th><th>baseline</th>"
          "<th>what it changes</th><th>precision</th><th>baseline time</th><th>rung "
          "time</th><th>gain</th></tr>\n",
          esc(family), esc(shape_text(shape)));
      open = true;
    }
    std::string gain = "—";
    if (s.gain)
      gain = *s.gain < 1 ? fmt::format("<span class=\"slower\">{:.2f}× (slower)</span>", *s.gain)
                         : fmt::format("{:.2f}×", *s.gain);
    h += fmt::format(
        "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"num\">{}</td><td "
        "class=\"num\">{}</td><td class=\"num\">{}</td></tr>\n",
        esc(s.rung), esc(s.baseline), esc(s.idea.empty() ? "—" : s.idea), esc(s.precision),
        s.baseline_time_s ? esc(si(*s.baseline_time_s) + "s") : "not timed",
        s.rung_time_s ? esc(si(*s.rung_time_s) + "s") : "not timed", gain);
  }
  if (open) h += "</table>\n";
  return h;
}

// ------------------------------------------------------------------ charts

std::string inline_svg(const Results& r, const std::string& view) {
  ChartOptions options;
  options.view = view;
  std::string svg = render_roofline_svg(r, options);
  if (auto end = svg.find("?>"); svg.starts_with("<?xml") && end != std::string::npos)
    svg.erase(0, end + 3);
  return svg;
}

std::string charts_section(const Results& r) {
  std::string h =
      "<h2>Roofline charts</h2>\n<p class=\"muted\">One question per chart. A kernel "
      "is drawn against the roof of the unit it runs on, in that unit's colour; "
      "solid roofs are measured, dotted ones the datasheet's; whiskers span the "
      "fastest and slowest repetition; hover a point for its numbers.</p>\n";
  h += "<figure class=\"chart\" id=\"chart-overview\"><figcaption>Where does every kernel "
       "stand against its roof?</figcaption>\n" +
       inline_svg(r, "overview") + "</figure>\n";
  for (const auto& view : chart_views(r)) {
    std::string id;
    for (char ch : view.id) id += std::isalnum(static_cast<unsigned char>(ch)) ? ch : '-';
    h += fmt::format("<figure class=\"chart\" id=\"chart-{}\"><figcaption>{}</figcaption>\n", id,
                     esc(view.question)) +
         inline_svg(r, view.id) + "</figure>\n";
  }
  return h;
}

}  // namespace

std::string render_report_html(const Results& r, const ReportOptions& options) {
  const auto& c = r.context;
  bool emulator = c.backend == "emulator";
  std::string h;
  h += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
       "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  h += fmt::format("<title>bench_roofline report — {}</title>\n", esc(c.device.name));
  h += "<style>" + std::string(kCss) + "</style>\n</head>\n<body>\n";
  h += fmt::format("<h1>bench_roofline report — {}</h1>\n", esc(c.device.name));
  h += fmt::format("<p class=\"muted\">{} · backend <b>{}</b> · git {}</p>\n", esc(c.timestamp_utc),
                   esc(c.backend), esc(c.git_commit));
  if (emulator)
    h += "<div class=\"banner\">CPU emulator — not GPU performance. Times and rates below "
         "measure the emulator on the host CPU; they say nothing about any GPU.</div>\n";
  if (r.run.complete == false)
    h += fmt::format(
        "<div class=\"banner\">Incomplete run{}: only the {} benchmark(s) that finished are "
        "shown.</div>\n",
        r.run.interrupted_by.empty() ? "" : " (interrupted by " + esc(r.run.interrupted_by) + ")",
        r.kernels.size());

  h += headline(r, options);
  // The charts draw the same datasheet figures as the tables (the chosen or
  // matched row), never a mix with what the run recorded.
  Results charted = r;
  for (auto& ceiling : charted.ceilings)
    ceiling.datasheet = claim_for(ceiling, r, options.sku, options.sku_chosen).datasheet;
  h += charts_section(charted);

  // Kernels
  h += "<h2>Kernels</h2>\n<p class=\"muted\">Click a column title to sort ascending, ▾ to sort "
       "descending. Hover a median time for min – max over the repetitions.</p>\n";
  h += kernel_table(r);

  h += ladder_section(r);
  h += analysis_sections(analyse(r));
  h += fusion_section(r);

  // Summary (the device in full)
  h += "<h2>Device</h2>\n<table class=\"summary\">\n";
  auto row = [&](std::string_view key, const std::string& value) {
    h += fmt::format("<tr><th>{}</th><td>{}</td></tr>\n", esc(key), value);
  };
  row("Device", esc(c.device.name));
  row("Compute capability / SMs",
      esc(fmt::format("{} / {}", c.device.compute_capability, c.device.sm_count)));
  row("Memory / L2", esc(fmt::format("{:.1f} GiB / {:.1f} MiB",
                                     static_cast<double>(c.device.memory_bytes) / (1 << 30),
                                     static_cast<double>(c.device.l2_bytes) / (1 << 20))));
  row("Driver", esc(c.driver_version.empty() ? "n/a" : c.driver_version));
  row("CUDA runtime / driver API",
      esc(fmt::format("{} / {}", c.cuda_runtime_version,
                      c.cuda_driver_version.empty() ? "n/a" : c.cuda_driver_version)));
  row("Backend", esc(c.backend));
  row("SM clock (current / max)", esc(mhz_pair(c.clocks.sm_mhz, c.clocks.sm_max_mhz)));
  row("Datasheet row",
      options.sku
          ? esc(fmt::format("{} ({})", options.sku->name, options.sku_reason))
          : "<span class=\"muted\">unknown device — " + esc(options.sku_reason) + "</span>");
  h += "</table>\n";
  // Ceilings
  h += "<h2>Ceilings</h2>\n";
  if (r.ceilings.empty()) {
    h += "<p class=\"muted\">No ceilings were measured in this run: kernels carry no roof.</p>\n";
  } else {
    h += "<table class=\"ceilings\">\n<tr><th>ceiling</th><th>kind</th><th>measured "
         "(median)</th><th>best</th><th>datasheet</th><th>derived peak</th><th>% of "
         "datasheet</th><th>SM clock during measurement</th><th>throttling</th><th>method</th>"
         "</tr>\n";
    for (const auto& ceiling : r.ceilings) {
      std::string unit = ceiling.unit;
      Claim claim = claim_for(ceiling, r, options.sku, options.sku_chosen);
      std::string pct = claim.datasheet && *claim.datasheet > 0
                            ? fmt::format("{:.1f}%", 100 * ceiling.value / *claim.datasheet)
                            : "—";
      // "none seen" only where something was watching: NVML sampled the run.
      std::string throttling = !ceiling.throttle_reasons.empty() ? ""
                               : c.nvml_available                ? "none seen"
                                                                 : "NVML unavailable";
      for (const auto& reason : ceiling.throttle_reasons)
        throttling += (throttling.empty() ? "" : ", ") + reason;
      if (ceiling.throttled_fraction)
        throttling += fmt::format(" ({:.0f}% of samples)", 100 * *ceiling.throttled_fraction);
      h += fmt::format(
          "<tr><td>{}</td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td "
          "class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td "
          "class=\"num\">{}</td><td>{}</td><td>{}</td></tr>\n",
          esc(ceiling.name), esc(ceiling.kind), rate(ceiling.value, unit), rate(ceiling.best, unit),
          rate(claim.datasheet, unit), rate(claim.derived, unit), pct,
          ceiling.observed_sm_mhz ? fmt::format("{:.0f} MHz", *ceiling.observed_sm_mhz) : "—",
          esc(throttling), esc(ceiling.method));
    }
    h += "</table>\n";
  }

  // Full context
  h += "<h2>Context</h2>\n<table class=\"context\">\n";
  auto opt_bool = [](const std::optional<bool>& b) {
    return b ? std::string(*b ? "yes" : "no") : std::string("unknown");
  };
  row("UUID", esc(c.device.uuid.empty() ? "unknown" : c.device.uuid));
  row("Memory bus width", c.device.memory_bus_width_bits > 0
                              ? esc(fmt::format("{} bits", c.device.memory_bus_width_bits))
                              : "n/a");
  row("Memory clock (current / max)", esc(mhz_pair(c.clocks.memory_mhz, c.clocks.memory_max_mhz)));
  row("ECC", esc(opt_bool(c.ecc_enabled)));
  row("Persistence mode", esc(opt_bool(c.persistence_mode)));
  row("Power limit", c.power_limit_w ? esc(fmt::format("{:.0f} W", *c.power_limit_w)) : "unknown");
  row("NVML", esc(c.nvml_available ? "available" : "not available: " + c.nvml_note));
  for (const auto& [library, version] : c.library_versions) row(library, esc(version));
  row("Host", esc(c.host));
  row("Time (UTC)", esc(c.timestamp_utc));
  row("Git commit", esc(c.git_commit));
  row("Size preset", esc(c.size_preset));
  row("L2 flushed before each sample", c.l2_flushed ? "yes" : "no (--warm-l2)");
  h += "</table>\n</body>\n</html>\n";
  return h;
}

namespace {

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

namespace {

std::size_t code_points(std::string_view s) {
  std::size_t n = 0;
  for (char ch : s) n += (static_cast<unsigned char>(ch) & 0xC0) != 0x80;
  return n;
}

// `text` cut to `width` code points (the last one "…"), or padded to it.
std::string cell(std::string text, std::size_t width) {
  if (code_points(text) > width) {
    std::string out;
    std::size_t n = 0;
    for (std::size_t i = 0; i < text.size() && n + 1 < width; ++i) {
      out += text[i];
      if (i + 1 == text.size() || (static_cast<unsigned char>(text[i + 1]) & 0xC0) != 0x80) ++n;
    }
    return out + "…";
  }
  return text + std::string(width - code_points(text), ' ');
}

// Words joined into lines no wider than `width`, continuation lines indented.
std::string wrap(const std::string& text, std::size_t width) {
  std::string out, line;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find(' ', start);
    if (end == std::string::npos) end = text.size();
    std::string word = text.substr(start, end - start);
    start = end + 1;
    if (!line.empty() && code_points(line) + 1 + code_points(word) > width) {
      out += line + "\n";
      line = "  ";
    }
    line += (line.empty() || line == "  " ? "" : " ") + word;
  }
  return out + line + "\n";
}

}  // namespace

std::string render_summary_text(const Results& r, const ReportOptions& options, int columns) {
  const std::size_t width = static_cast<std::size_t>(std::max(columns, 60));
  const Headline f = headline_facts(r, options);
  std::string s;
  s += wrap(fmt::format("{} · cc {} · {} SMs · backend {} · datasheet row: {}", f.device,
                        f.compute_capability, f.sm_count, f.backend,
                        f.sku.empty() ? "none (" + f.sku_reason + ")" : f.sku),
            width);
  if (f.emulator) s += wrap("CPU emulator — not GPU performance.", width);
  s += wrap(fmt::format("Kernels: {} validated and timed, {} failed, {} skipped (not run){}.", f.ok,
                        f.failed, f.skipped, f.other > 0 ? fmt::format(", {} other", f.other) : ""),
            width);
  if (!f.verdicts.empty() && f.emulator) {
    std::string values;
    for (const auto& v : f.verdicts)
      values += (values.empty() ? "" : ", ") + v.name + " " + v.measured;
    s += wrap("Ceilings (CPU emulator, no GPU claim applies): " + values + ".", width);
  } else {
    for (const auto& v : f.verdicts) {
      std::string against;
      for (const auto& a : v.against) against += (against.empty() ? "" : ", ") + a;
      s += wrap(v.word.empty()
                    ? fmt::format("{} {}: no datasheet or derived figure", v.name, v.measured)
                    : fmt::format("{} {}: {} ({})", v.name, v.measured, v.word, against),
                width);
    }
  }
  s += wrap(noise_text(f) + ".", width);
  s += wrap("Throttling: " + throttling_text(f) + ".", width);

  // name | shape | median | FLOP/s | bound, % of roof | status; the shape only
  // when the terminal is wide enough to keep 24 columns for the name.
  constexpr std::size_t kTime = 9, kRate = 12, kBound = 17, kStatus = 9, kShape = 20;
  const bool with_shape = width >= 24 + kShape + kTime + kRate + kBound + kStatus + 5;
  const std::size_t name_width =
      width - (kTime + kRate + kBound + kStatus + 4) - (with_shape ? kShape + 1 : 0);
  auto line = [&](std::string name, std::string shape, std::string time, std::string rate_text,
                  std::string bound, std::string status) {
    std::string l = cell(std::move(name), name_width) + " ";
    if (with_shape) l += cell(std::move(shape), kShape) + " ";
    l += cell(std::move(time), kTime) + " " + cell(std::move(rate_text), kRate) + " " +
         cell(std::move(bound), kBound) + " " + cell(std::move(status), kStatus);
    while (!l.empty() && l.back() == ' ') l.pop_back();
    return l + "\n";
  };
  s += "\n" + line("kernel", "shape", "median", "FLOP/s", "bound, % roof", "status");
  for (const auto& k : r.kernels) {
    std::string bound = k.bound.empty() ? "—" : k.bound;
    if (k.pct_of_roof) bound += fmt::format(" {:.0f}%", *k.pct_of_roof);
    std::string status = k.status == "ok" && k.validated ? "ok"
                         : k.status.empty()              ? "failed"
                                                         : k.status;
    s += line(k.name, shape_text(k.shape), k.time_s ? si(k.time_s->median) + "s" : "—",
              k.time_s && k.flops > 0 ? si(k.achieved_flops_per_s) + "FLOP/s" : "—", bound, status);
  }
  return s;
}

ReportOptions report_options_for(const Results& results, std::string_view sku_override) {
  ReportOptions options;
  if (!sku_override.empty()) {
    options.sku = find_sku(sku_override);
    if (!options.sku)
      throw std::invalid_argument(
          fmt::format("unknown SKU '{}' (roofline skus lists them)", sku_override));
    options.sku_reason = "chosen with --sku";
    options.sku_chosen = true;
  } else {
    SkuMatch match = match_sku(results.context.device);
    options.sku = match.sku;
    options.sku_reason = match.reason;
  }
  return options;
}

void write_chart_and_report(const std::filesystem::path& directory, const Results& results) {
  write_file_atomic(directory / "roofline.svg", render_roofline_svg(results));
  write_file_atomic(directory / "report.html",
                    render_report_html(results, report_options_for(results)));
}

}  // namespace rl::roofline
