// The roofline chart as a self-contained SVG 1.1 document (no scripts, fonts
// or images from elsewhere): log-log axes with decade ticks, one diagonal per
// memory ceiling and one flat roof per compute ceiling (labelled with value
// and unit), ridge points, kernel points (marker per family, colour per
// precision) with non-overlapping labels, arrows from a naive variant to its
// optimised sibling of the same shape, title, legend, and a banner on
// emulator results.
#pragma once

#include "rl/roofline/results.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace rl::roofline {

struct ChartOptions {
  double width = 1000;
  double height = 660;
};

struct TextBox {  // a placed label, in SVG user units (y grows downwards)
  std::string text;
  double x0 = 0, y0 = 0, x1 = 0, y1 = 0;
};

struct ChartLayout {
  std::vector<TextBox> labels;         // every ceiling and kernel label drawn
  std::vector<std::string> hidden;     // kernels plotted without a label (no free space)
  std::vector<std::string> unplotted;  // timed kernels that cannot sit on log axes (0 FLOP)
};

// Text escaped for XML/HTML content and attribute values; control characters
// XML cannot carry become '?'.
std::string xml_escape(std::string_view text);

// SI formatting used by the chart and the report: 2.0e12 -> "2 T".
std::string si(double value, int significant = 3);

ChartLayout layout_roofline_chart(const Results& results, const ChartOptions& options = {});
std::string render_roofline_svg(const Results& results, const ChartOptions& options = {});

}  // namespace rl::roofline
