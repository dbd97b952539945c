#include "chart_labels.hpp"

#include "rl/roofline/text.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <optional>
#include <utility>
#include <vector>

namespace rl::roofline::chart {

namespace {

constexpr double kLineHeight = kFontSize * (1 + kDescent) + 0.5;

bool overlaps(const TextBox& a, const TextBox& b) {
  return a.x0 < b.x1 && b.x0 < a.x1 && a.y0 < b.y1 && b.y0 < a.y1;
}

// Liang-Barsky: does the segment cross the box?
bool crosses(const Segment& s, const TextBox& b) {
  double t0 = 0, t1 = 1, dx = s.x1 - s.x0, dy = s.y1 - s.y0;
  auto clip = [&](double p, double q) {
    if (p == 0) return q >= 0;
    double t = q / p;
    if (p < 0) {
      if (t > t1) return false;
      t0 = std::max(t0, t);
    } else {
      if (t < t0) return false;
      t1 = std::min(t1, t);
    }
    return true;
  };
  return clip(-dx, s.x0 - b.x0) && clip(dx, b.x1 - s.x0) && clip(-dy, s.y0 - b.y0) &&
         clip(dy, b.y1 - s.y0) && t0 <= t1;
}

bool inside_plot(const PlacedChart& c, const TextBox& b) {
  return b.x0 >= c.left + 2 && b.x1 <= c.right - 2 && b.y0 >= c.top + 2 && b.y1 <= c.bottom - 2;
}

// A point's marker with its whisker, as a box.
TextBox marker_box(const PlotPoint& p) {
  return {"", p.x - 6, std::min(p.y - 6, p.y_hi - 1), p.x + 6, std::max(p.y + 6, p.y_lo + 1), ""};
}

// A label is free where it overlaps no text, marker, whisker, line or leader.
bool is_free(const PlacedChart& c, const TextBox& b, const Segment* own = nullptr) {
  if (!inside_plot(c, b)) return false;
  for (const auto& other : c.layout.texts)
    if (overlaps(b, other)) return false;
  for (const auto& p : c.points)
    if (overlaps(b, marker_box(p))) return false;
  for (const auto& s : c.segments)
    if (&s != own && crosses(s, b)) return false;
  for (const auto& join : c.joins)
    if (crosses(join.first, b)) return false;
  if (c.spec.leaders_clear_labels)
    for (const auto& l : c.leaders)
      if (crosses(l, b)) return false;
  return true;
}

// The leader from point `p` to the nearest edge of its label `b`, when the
// label sits away from the point (further than 14 px: nearer, it reads as
// the point's without one).
std::optional<Segment> leader_of(const PlotPoint& p, const TextBox& b) {
  double cx = std::clamp(p.x, b.x0, b.x1), cy = std::clamp(p.y, b.y0, b.y1);
  if (std::hypot(cx - p.x, cy - p.y) <= 14) return std::nullopt;
  return Segment{p.x, p.y, cx, cy};
}

// A leader must not cross a text: it would seem to point at it.  (It may
// pass other markers: in a cluster every way out does.)
bool leader_is_clear(const PlacedChart& c, const Segment& leader) {
  for (const auto& t : c.layout.texts)
    if (crosses(leader, t)) return false;
  return true;
}

std::optional<TextBox> place_flat_label(const PlacedChart& c, const Roof& roof,
                                        const Segment& line) {
  std::string text = roof.label();
  double w = estimate_text_width(text, kFontSize);
  for (double shift = 0; line.x1 - 4 - shift - w >= line.x0 - w / 2; shift += 16)
    for (double dy : {-3.0, kFontSize + 4})  // just above the line, then just below it
    {
      TextBox b = text_box(text, line.x1 - 4 - shift - w, line.y0 + dy, "roof-label");
      if (is_free(c, b, &line)) return b;
    }
  return std::nullopt;
}

std::optional<TextBox> place_diagonal_label(const PlacedChart& c, const Roof& roof,
                                            const Segment& line) {
  std::string text = roof.label();
  double w = estimate_text_width(text, kFontSize);
  // The visible end of the line: where it leaves the plot at the top or right.
  double end = line.x1;
  if (line.y1 < c.top && line.y1 != line.y0)
    end = line.x0 + (c.top - line.y0) / (line.y1 - line.y0) * (line.x1 - line.x0);
  auto y_on = [&](double x) {
    return line.y0 + (x - line.x0) / (line.x1 - line.x0) * (line.y1 - line.y0);
  };
  for (double x1 = std::min(end, c.right - 2); x1 - w > c.left; x1 -= 14) {
    // Above the line: it is highest (smallest y) under the label's right end.
    TextBox above = text_box(text, x1 - w, y_on(x1) - 4, "roof-label");
    above.y1 = std::min(above.y1, y_on(x1) - 1);
    if (is_free(c, above, &line)) return above;
    // Below it: lowest under the label's left end.
    TextBox below = text_box(text, x1 - w, y_on(x1 - w) + kFontSize + 3, "roof-label");
    if (is_free(c, below, &line)) return below;
  }
  return std::nullopt;
}

}  // namespace

TextBox text_box(std::string text, double x, double baseline, std::string role, double size,
                 bool bold, std::string_view anchor) {
  double w = estimate_text_width(text, size, bold);
  double x0 = anchor == "end" ? x - w : anchor == "middle" ? x - w / 2 : x;
  return {std::move(text), x0, baseline - size, x0 + w, baseline + kDescent * size,
          std::move(role)};
}

std::string fit_text(std::string text, double width, double size, bool bold) {
  if (estimate_text_width(text, size, bold) <= width) return text;
  while (!text.empty() && estimate_text_width(text + "…", size, bold) > width) {
    text.pop_back();
    while (!text.empty() && (static_cast<unsigned char>(text.back()) & 0xC0) == 0x80)
      text.pop_back();
    if (!text.empty() && (static_cast<unsigned char>(text.back()) & 0xC0) == 0xC0) text.pop_back();
  }
  return text + "…";
}

void place_roof_labels(PlacedChart& c) {
  // Measured labels first: they are what a reader looks for.
  for (int pass = 0; pass < 2; ++pass)
    for (std::size_t i = 0; i < c.roofs.size(); ++i) {
      const Roof& roof = *c.roofs[i].roof;
      if (roof.datasheet != (pass == 1)) continue;
      auto placed = roof.memory ? place_diagonal_label(c, roof, c.segments[i])
                                : place_flat_label(c, roof, c.segments[i]);
      if (placed) {
        c.layout.texts.push_back(*placed);
        c.roof_labels.push_back({&roof, *placed});
      } else {
        c.layout.unlabelled_roofs.push_back(roof.label());
      }
    }
}

namespace {

// The nearest free spot for point `i`'s label within about 230 px (further
// out it reads as another point's): beside it, then rings further out with a
// leader line; where the view asks (spec.leaders_clear_labels), the leader
// must cross no text.
std::optional<TextBox> free_spot(const PlacedChart& c, std::size_t i) {
  const auto& p = c.points[i];
  const std::string& text = p.kernel->name;
  const double w = estimate_text_width(text, kFontSize);
  for (int column = 0; column < 2; ++column) {
    double reach = column * (w + 12);
    for (int ring = 0; ring < 16; ++ring) {
      double d = ring * kLineHeight;
      const std::array<std::pair<double, double>, 6> candidates{{{p.x + 9 + reach, p.y + 4 - d},
                                                                 {p.x + 9 + reach, p.y + 4 + d},
                                                                 {p.x - 9 - w - reach, p.y + 4 - d},
                                                                 {p.x - 9 - w - reach, p.y + 4 + d},
                                                                 {p.x - w / 2, p.y_hi - 8 - d},
                                                                 {p.x - w / 2, p.y_lo + 18 + d}}};
      for (auto [x, baseline] : candidates) {
        TextBox b = text_box(text, x, baseline, "point-label");
        if (!is_free(c, b)) continue;
        auto leader = leader_of(p, b);
        if (leader && c.spec.leaders_clear_labels && !leader_is_clear(c, *leader)) continue;
        return b;
      }
    }
  }
  return std::nullopt;
}

}  // namespace

// Greedy placement of the labels the view wants (spec.labelled), top point
// first, each at its nearest free spot; a label that finds no room is left
// to the point's hover title, as is every point the view does not label.
void place_point_labels(PlacedChart& c) {
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < c.points.size(); ++i) {
    if (!c.points[i].label_anchor) continue;  // the kernel's label goes by another of its points
    if (std::find(c.spec.labelled.begin(), c.spec.labelled.end(), c.points[i].kernel) !=
        c.spec.labelled.end())
      order.push_back(i);
    else
      c.layout.hidden.push_back(c.points[i].kernel->name);
  }
  std::sort(order.begin(), order.end(),
            [&](auto a, auto b) { return c.points[a].y < c.points[b].y; });
  for (std::size_t i : order) {
    auto placed = free_spot(c, i);
    if (!placed) {
      c.layout.hidden.push_back(c.points[i].kernel->name);
      ++c.labels_without_room;
      continue;
    }
    if (auto leader = leader_of(c.points[i], *placed)) c.leaders.push_back(*leader);
    c.layout.texts.push_back(*placed);
    c.point_labels.push_back({i, *placed});
  }
}

}  // namespace rl::roofline::chart
