// The HTML report: one self-contained file (inline CSS and SVG, no scripts,
// nothing fetched): summary, ceilings (measured / datasheet / derived / % of
// claim / clocks / throttling), the roofline chart, the kernel table, a
// fusion section for naive -> optimised pairs, and the full context.
#pragma once

#include "rl/roofline/compare.hpp"
#include "rl/roofline/results.hpp"
#include "rl/roofline/sku.hpp"

#include <filesystem>
#include <string>
#include <string_view>

namespace rl::roofline {

struct ReportOptions {
  // The datasheet row to compare against: from --sku, else matched from the
  // device; nullptr = unknown device (shown as such, nothing guessed).
  const Sku* sku = nullptr;
  std::string sku_reason;  // how the row was chosen, or why none was
  // Chosen by the user (--sku): every datasheet and derived figure comes from
  // this row, never a mix with the figures the run recorded for its device.
  bool sku_chosen = false;
};

std::string render_report_html(const Results& results, const ReportOptions& options);

// The end-of-run summary for a terminal `columns` wide (at least 60): the
// report's headline block in plain text, then one line per kernel (name,
// shape, median time, FLOP/s, % of roof and bound, status), long names cut
// with "…" so no line is wider than `columns`.
std::string render_summary_text(const Results& results, const ReportOptions& options,
                                int columns = 100);

// `roofline compare --format html`: the gate's result as one self-contained
// page: the exit status and why first, the verdict counts, gate failures,
// every kernel sorted worst first (SLOW, UNSURE, INCONCLUSIVE, then by
// ratio) with its ratio, confidence interval drawn against the threshold
// band, p-value and noise, then the context diff.
std::string render_comparison_html(const Comparison& comparison);

// The datasheet row for a results file: `sku_override` (a key or name) when
// given, else the row matched from the device.  Throws std::invalid_argument
// for an unknown override.
ReportOptions report_options_for(const Results& results, std::string_view sku_override = {});

// What bench_roofline does at the end of a run: roofline.svg and report.html
// beside results.json in `directory`, each written atomically.
void write_chart_and_report(const std::filesystem::path& directory, const Results& results);

}  // namespace rl::roofline
