// Label placement on a chart (internal): every text gets an estimated box,
// and roof and point labels go, greedily, where they overlap no other text,
// marker, whisker or line.
#pragma once

#include "chart_layout.hpp"

#include <string>
#include <string_view>

namespace rl::roofline::chart {

// The box of `text` drawn at `x` (its start, middle or end, per `anchor`) on
// `baseline`, estimated with estimate_text_width.
TextBox text_box(std::string text, double x, double baseline, std::string role,
                 double size = kFontSize, bool bold = false, std::string_view anchor = "start");

// `text` shortened with an ellipsis until it fits `width` at `size`.
std::string fit_text(std::string text, double width, double size, bool bold = false);

// Each roof's label at its line's end (measured roofs first); a roof whose
// label finds no room is listed in layout.unlabelled_roofs.
void place_roof_labels(PlacedChart& c);

// The label of each point the view labels (spec.labelled) beside it or
// further out with a leader line; a point without a label, by the view's
// choice or for want of room, is listed in layout.hidden.
void place_point_labels(PlacedChart& c);

}  // namespace rl::roofline::chart
