#include "rl/roofline/report.hpp"

#include "report_html.hpp"

#include "rl/roofline/analysis.hpp"
#include "rl/roofline/node_report.hpp"
#include "rl/roofline/results_io.hpp"
#include "rl/roofline/svg.hpp"
#include "rl/roofline/text.hpp"

#include <stdexcept>

#include <fmt/format.h>

namespace rl::roofline {

namespace {

using namespace report_detail;

std::string mhz_pair(double current, double max) {
  auto one = [](double mhz) { return mhz > 0 ? fmt::format("{:.0f}", mhz) : std::string("n/a"); };
  if (current <= 0 && max <= 0) return "n/a";
  return one(current) + " / " + one(max) + " MHz";
}

}  // namespace

std::string render_report_html(const Results& r, const ReportOptions& options) {
  const auto& c = r.context;
  bool emulator = c.backend == Backend::emulator;
  std::string h;
  h += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
       "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  h += fmt::format("<title>bench_roofline report — {}</title>\n", esc(c.device.name));
  h += "<style>" + std::string(kCss) + "</style>\n</head>\n<body>\n";
  h += fmt::format("<h1>bench_roofline report — {}</h1>\n", esc(c.device.name));
  h += fmt::format("<p class=\"muted\">{} · backend <b>{}</b> · git {}</p>\n", esc(c.timestamp_utc),
                   esc(to_string(c.backend)), esc(c.git_commit));
  if (emulator)
    h += "<div class=\"banner\">CPU emulator — not GPU performance. Times and rates below "
         "measure the emulator on the host CPU; they say nothing about any GPU.</div>\n";
  if (r.run.complete == false)
    h += fmt::format(
        "<div class=\"banner\">Incomplete run{}: only the {} benchmark(s) that finished are "
        "shown.</div>\n",
        r.run.interrupted_by.empty() ? "" : " (interrupted by " + esc(r.run.interrupted_by) + ")",
        r.kernels.size());

  h += headline_html(r, options);
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
  h += left_out_section(r);
  h += counters_section(r);

  h += ladder_section(r);
  h += analysis_sections(analyse(r));
  h += fusion_section(r);
  h += node_section_html(analyse_node(r, options.sku));

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
  row("Backend", esc(to_string(c.backend)));
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
