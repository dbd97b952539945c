// Text helpers every page and chart uses: XML escaping, SI prefixes and the
// width estimate the chart layout places labels with.
#pragma once

#include <string>
#include <string_view>

namespace rl::roofline {

// Text escaped for XML/HTML content and attribute values; control characters
// XML cannot carry become '?'.
std::string xml_escape(std::string_view text);

// SI formatting used by the chart and the report: 2.0e12 -> "2 T".
std::string si(double value, int significant = 3);

// Text estimate shared by the layout and the tests: font size x 0.62 per
// character (0.68 bold), characters counted as UTF-8 code points.
double estimate_text_width(std::string_view text, double font_size, bool bold = false);

}  // namespace rl::roofline
