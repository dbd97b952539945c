// Where everything of one chart goes (internal to the chart): the axes fitted
// to what is drawn, the roof lines, and every text placed where it overlaps
// nothing.  place_chart decides it all; svg.cpp only writes it out.
#pragma once

#include "chart_view.hpp"

#include "rl/roofline/svg.hpp"

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace rl::roofline::chart {

inline constexpr double kFontSize = 11;
inline constexpr double kTitleSize = 16;
inline constexpr double kBannerSize = 14;
// Below the baseline a box keeps 0.3 em for descenders (3.3 units at 11).
inline constexpr double kDescent = 0.3;

struct PlotPoint {
  const KernelResult* kernel;
  double x, y;                        // pixels
  double y_hi, y_lo;                  // whisker ends (pixels): fastest and slowest sample
  std::string_view shape;             // marker: the family's, or in the hierarchy view the level's
  std::string colour;                 // the unit's, or in the hierarchy view the kernel's
  const LevelPoint* level = nullptr;  // the hierarchy view's level (into the spec)
  bool label_anchor = true;           // the kernel's label goes beside this point (one per kernel)
};

struct Segment {  // a roof line or arrow, pixels
  double x0, y0, x1, y1;
};

struct DrawnRoof {
  const Roof* roof;
  Segment line;
  std::optional<double> ridge;  // FLOP/B, drawn at the line's start
};

struct LegendMark {
  enum Kind { marker, hollow, swatch, line, dotted, join, ridge, arrow, whisker } kind;
  std::string shape, colour;
  double y;
};

// Ticks at decades when the axis spans several, else at 1, 2 and 5 of each
// decade so a narrow axis (one fitted to its data) still has three or more.
std::vector<double> tick_values(double l0, double l1);

// A chart with every position decided.  Its roofs and labels point into
// `spec` and its points into the Results it was placed from, so it moves but
// is never copied.
struct PlacedChart {
  PlacedChart() = default;
  PlacedChart(PlacedChart&&) = default;
  PlacedChart(const PlacedChart&) = delete;
  PlacedChart& operator=(const PlacedChart&) = delete;

  ChartOptions options;
  ViewSpec spec;
  std::string id;  // the view as an id: several charts share one HTML page
  bool emulator = false, has_datasheet = false;
  double left = 0, right = 0, top = 0, bottom = 0;  // the plot area, pixels
  double lx0 = -1, lx1 = 3, ly0 = 9, ly1 = 13;      // log10 of the axis ends
  std::vector<PlotPoint> points;
  std::vector<DrawnRoof> roofs;
  std::vector<Segment> segments;  // every roof line, in the order of `roofs`
  // The hierarchy view's thin lines from each kernel's point to its next
  // level's, with the kernel's colour; labels keep clear of them too.
  std::vector<std::pair<Segment, std::string>> joins;
  std::map<std::string, std::string_view> family_shape;  // family -> marker shape
  std::vector<std::string> units;
  std::vector<std::pair<const Roof*, TextBox>> roof_labels;
  std::vector<std::pair<std::size_t, TextBox>> point_labels;  // index into points
  std::vector<Segment> leaders;         // from a point to its label's nearest edge
  std::size_t labels_without_room = 0;  // labels wanted (spec.labelled) that found no room
  std::vector<LegendMark> legend_marks;
  TextBox banner;
  ChartLayout layout;

  double px(double x) const;  // data -> pixels on the log axes
  double py(double y) const;
  // Ladder arrows as (baseline, rung) indices into `points`.
  std::vector<std::pair<std::size_t, std::size_t>> arrows() const;
};

// Throws std::invalid_argument for a view name valid_view_name refuses.
PlacedChart place_chart(const Results& results, const ChartOptions& options);

}  // namespace rl::roofline::chart
