#include "rl/roofline/report.hpp"

#include "rl/roofline/analysis.hpp"
#include "rl/roofline/model.hpp"
#include "rl/roofline/results_io.hpp"
#include "rl/roofline/svg.hpp"

#include <cmath>
#include <optional>
#include <stdexcept>

#include <fmt/format.h>

namespace rl::roofline {

namespace {

std::string esc(std::string_view s) {
  return xml_escape(s);
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
h3{font-size:14px;margin:16px 0 4px}
table{border-collapse:collapse;font-size:13px;margin:6px 0}
th,td{border:1px solid #ddd;padding:3px 8px;text-align:left;vertical-align:top}
th{background:#f3f3f3}td.num{text-align:right;font-variant-numeric:tabular-nums}
.banner{background:#b00020;color:#fff;font-weight:bold;padding:8px 12px;font-size:16px;margin:8px 0}
.muted{color:#666}.bad{color:#b00020;font-weight:bold}.chart{margin:8px 0;overflow-x:auto}
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

}  // namespace

std::string render_report_html(const Results& r, const ReportOptions& options) {
  const auto& c = r.context;
  bool emulator = c.backend == "emulator";
  std::string h;
  h += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
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

  // Summary
  h += "<h2>Summary</h2>\n<table class=\"summary\">\n";
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
          esc(ceiling.name), esc(ceiling.kind), rate(ceiling.value, unit),
          rate(ceiling.best, unit), rate(claim.datasheet, unit), rate(claim.derived, unit), pct,
          ceiling.observed_sm_mhz ? fmt::format("{:.0f} MHz", *ceiling.observed_sm_mhz) : "—",
          esc(throttling), esc(ceiling.method));
    }
    h += "</table>\n";
  }

  // Chart
  h += "<h2>Roofline</h2>\n<div class=\"chart\">\n";
  std::string svg = render_roofline_svg(r);
  if (auto end = svg.find("?>"); svg.starts_with("<?xml") && end != std::string::npos)
    svg.erase(0, end + 3);
  h += svg + "</div>\n";

  // Kernels
  h += "<h2>Kernels</h2>\n<table class=\"kernels\">\n<tr><th>kernel</th><th>family / "
       "variant</th><th>precision (unit)</th><th>shape</th><th>median time</th><th>spread "
       "(min–max, reps)</th><th>achieved FLOP/s</th><th>achieved B/s</th><th>intensity "
       "(model / min) FLOP/B</th><th>bound</th><th>% of roof</th><th>validation "
       "(max rel err)</th></tr>\n";
  for (const auto& k : r.kernels) {
    // Results written before ceilings existed carry no roof: judge them here
    // against the file's own ceilings (what apply_roofline would have filled).
    RoofVerdict verdict{k.roof, k.pct_of_roof, k.bound, k.memory_roof};
    if (!k.roof && k.bound.empty())
      verdict = judge(k, r.ceilings, static_cast<double>(r.context.device.l2_bytes));
    std::string time = "not timed", spread = "—";
    if (k.time_s) {
      time = si(k.time_s->median) + "s";
      spread = fmt::format("{}s – {}s, n={}", si(k.time_s->min), si(k.time_s->max),
                           k.time_s->repetitions);
    }
    std::string validation =
        k.validated ? "passed, " + validation_text(k)
                    : fmt::format("<span class=\"bad\">{}</span>{}",
                                  esc(k.status.empty() ? "failed" : k.status),
                                  esc(fmt::format(" ({}{})", validation_text(k),
                                                  k.error.empty() ? "" : "; " + k.error)));
    h += fmt::format(
        "<tr><td>{}{}</td><td>{} / {}</td><td>{} ({})</td><td>{}</td><td class=\"num\">{}</td>"
        "<td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td "
        "class=\"num\">{:.3g} / {:.3g}</td><td>{}</td><td class=\"num\">{}</td><td>{}</td></tr>\n",
        esc(k.name), k.throttled ? " <span class=\"bad\">(throttled)</span>" : "", esc(k.family),
        esc(k.variant), esc(k.precision), esc(k.unit), esc(shape_text(k.shape)), esc(time),
        esc(spread), k.time_s ? rate(k.achieved_flops_per_s, "FLOP/s") : "—",
        k.time_s ? rate(k.achieved_bytes_per_s, "B/s") : "—", intensity(k.flops, k.bytes_model),
        intensity(k.flops, k.bytes_min), esc(verdict.bound.empty() ? "—" : verdict.bound),
        verdict.pct_of_roof ? fmt::format("{:.1f}%", *verdict.pct_of_roof) : "—", validation);
  }
  h += "</table>\n";

  h += analysis_sections(analyse(r));

  // Fusion: an optimised variant next to the naive sibling it improves on.
  std::string fusion;
  for (const auto& k : r.kernels) {
    if (k.baseline.empty() || !k.time_s) continue;
    for (const auto& base : r.kernels) {
      if (base.name != k.baseline || base.shape != k.shape || !base.time_s) continue;
      fusion += fmt::format(
          "<tr><td>{}</td><td>{}</td><td>{}</td><td class=\"num\">{}B → {}B</td><td "
          "class=\"num\">{:.3g} → {:.3g}</td><td class=\"num\">{}s → {}s</td><td "
          "class=\"num\">{:.2f}×</td></tr>\n",
          esc(base.name), esc(k.name), esc(shape_text(k.shape)), esc(si(base.bytes_model)),
          esc(si(k.bytes_model)), intensity(base.flops, base.bytes_model),
          intensity(k.flops, k.bytes_model), esc(si(base.time_s->median)),
          esc(si(k.time_s->median)),
          k.time_s->median > 0 ? base.time_s->median / k.time_s->median : 0.0);
    }
  }
  if (!fusion.empty()) {
    h += "<h2>Fusion</h2>\n<table class=\"fusion\">\n<tr><th>naive</th><th>optimised</th>"
         "<th>shape</th><th>bytes moved (model)</th><th>intensity FLOP/B</th><th>median "
         "time</th><th>speedup</th></tr>\n" +
         fusion + "</table>\n";
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
