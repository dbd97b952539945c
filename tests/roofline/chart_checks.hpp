// What the chart tests check on every view (tests/roofline/test_chart_layout.cpp,
// tests/roofline_hierarchy/): texts that overlap or leave the canvas, and
// leader lines that pass through a text.  Boxes are the layout's own estimate
// (font size x characters), the one it places with.
#pragma once

#include "rl/roofline/svg.hpp"

#include <algorithm>
#include <array>
#include <regex>
#include <string>
#include <utility>
#include <vector>

namespace rl::roofline::testing {

inline bool boxes_overlap(const TextBox& a, const TextBox& b) {
  return a.x0 < b.x1 && b.x0 < a.x1 && a.y0 < b.y1 && b.y0 < a.y1;
}

// Every pair of drawn texts, whatever their role (titles, ticks, roof and
// kernel labels, legend, footnote).
inline std::vector<std::string> overlapping_texts(const ChartLayout& layout) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < layout.texts.size(); ++i)
    for (std::size_t j = i + 1; j < layout.texts.size(); ++j)
      if (boxes_overlap(layout.texts[i], layout.texts[j]))
        out.push_back("'" + layout.texts[i].text + "' (" + layout.texts[i].role + ") overlaps '" +
                      layout.texts[j].text + "' (" + layout.texts[j].role + ")");
  return out;
}

inline std::vector<std::string> texts_outside_canvas(const ChartLayout& layout) {
  std::vector<std::string> out;
  for (const auto& t : layout.texts)
    if (t.x0 < 0 || t.y0 < 0 || t.x1 > layout.width || t.y1 > layout.height)
      out.push_back(t.text + " (" + t.role + ")");
  return out;
}

inline int count(const std::string& text, const std::string& needle) {
  int n = 0;
  for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

// The <line>s of class `cls` the SVG draws, as (x1, y1, x2, y2).
inline std::vector<std::array<double, 4>> drawn_lines(const std::string& svg,
                                                      const std::string& cls) {
  std::vector<std::array<double, 4>> out;
  const std::regex line("class=\"" + cls +
                        "\" x1=\"([-0-9.]+)\" y1=\"([-0-9.]+)\" x2=\"([-0-9.]+)\" "
                        "y2=\"([-0-9.]+)\"");
  for (std::sregex_iterator it(svg.begin(), svg.end(), line), end; it != end; ++it)
    out.push_back(
        {std::stod((*it)[1]), std::stod((*it)[2]), std::stod((*it)[3]), std::stod((*it)[4])});
  return out;
}

// The leader lines from points to their labels.
inline std::vector<std::array<double, 4>> drawn_leaders(const std::string& svg) {
  return drawn_lines(svg, "leader");
}

// Does the segment enter the box's inside (Liang-Barsky)?  A leader ends on
// its own label's edge, so only a label it passes through counts.
inline bool enters(const std::array<double, 4>& s, const TextBox& box) {
  const double x0 = box.x0 + 0.5, y0 = box.y0 + 0.5, x1 = box.x1 - 0.5, y1 = box.y1 - 0.5;
  double t0 = 0, t1 = 1;
  const double dx = s[2] - s[0], dy = s[3] - s[1];
  for (auto [p, q] : {std::pair{-dx, s[0] - x0}, std::pair{dx, x1 - s[0]},
                      std::pair{-dy, s[1] - y0}, std::pair{dy, y1 - s[1]}}) {
    if (p == 0) {
      if (q < 0) return false;
      continue;
    }
    const double t = q / p;
    if (p < 0)
      t0 = std::max(t0, t);
    else
      t1 = std::min(t1, t);
  }
  return t0 < t1;
}

}  // namespace rl::roofline::testing
