// What the HTML pages (report, compare page) share (internal): escaping, the
// stylesheet, and the page sections the report is built from.
#pragma once

#include "report_headline.hpp"

#include "rl/roofline/analysis.hpp"
#include "rl/roofline/results.hpp"

#include <optional>
#include <string>
#include <string_view>

namespace rl::roofline::report_detail {

// The stylesheet of both pages.
extern const std::string_view kCss;

std::string esc(std::string_view s);
// Escaped, with break opportunities after '_' and ',' so long kernel names
// and shapes wrap at their words in narrow columns.
std::string breakable(std::string_view text);
// "2.04 TB/s", or "—" for a value that is absent or not finite.
std::string rate(std::optional<double> v, std::string_view unit);

// The headline block (report_headline.hpp's facts, with marks).
std::string headline_html(const Results& r, const ReportOptions& options);
// The overview chart and one chart per view (svg.hpp), inline.
std::string charts_section(const Results& r);
// Every kernel, sortable by any column without a script.
std::string kernel_table(const Results& r);
// What each rung of each ladder buys over its baseline.
std::string ladder_section(const Results& r);
// The GEMM ladder, the precision ladder and attention fusion (analysis.hpp).
std::string analysis_sections(const Analysis& a);
// Declared fusion pairs (a record's `fuses`).
std::string fusion_section(const Results& r);
// Each counted kernel's counts against its cost model (--counters); "" when
// no kernel was counted.
std::string counters_section(const Results& r);
// What a run cut short did not measure (run.left_out), in run order; "" when
// nothing was left out.
std::string left_out_section(const Results& r);

}  // namespace rl::roofline::report_detail
