// The HTML report: one self-contained file (inline CSS and SVG, no scripts,
// nothing fetched): summary, ceilings (measured / datasheet / derived / % of
// claim / clocks / throttling), the roofline chart, the kernel table, a
// fusion section for naive -> optimised pairs, and the full context.
#pragma once

#include "rl/roofline/results.hpp"
#include "rl/roofline/sku.hpp"

#include <string>

namespace rl::roofline {

struct ReportOptions {
  // The datasheet row to compare against: from --sku, else matched from the
  // device; nullptr = unknown device (shown as such, nothing guessed).
  const Sku* sku = nullptr;
  std::string sku_reason;  // how the row was chosen, or why none was
};

std::string render_report_html(const Results& results, const ReportOptions& options);

}  // namespace rl::roofline
