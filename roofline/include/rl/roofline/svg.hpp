// Roofline charts as self-contained SVG 1.1 documents (no scripts, fonts or
// images from elsewhere), one question per chart (the way Nsight Compute's
// roofline section and the FlashAttention figures do it):
//   overview  every kernel once (at its family's busiest shape) against the
//             roof of the unit it runs on, the best DRAM roof and L2 (the
//             file `roofline plot` writes by default);
//   memory    the memory-side kernels against every measured memory roof and
//             the datasheet's DRAM bandwidth;
//   simt      FP32/FP64 (and packed half) SIMT kernels and their roofs;
//   tensor    tensor-core kernels, one roof per precision;
//   family:F  one ladder (gelu, layernorm, gemm, attention, ...) at one shape,
//             with an arrow from each rung's baseline up to the rung;
//   hierarchy each kernel with counters at its L1, L2 and DRAM intensities
//             (one colour a kernel, its points joined; hollow where the cost
//             model stands in for a counter) against the smem, L2 and DRAM
//             roofs (chart_hierarchy.hpp).
// Each kernel is coloured by its compute unit, and that unit's roof has the
// same colour (Okabe-Ito palette, colour-blind safe); markers say the family.
// Measured roofs are solid, datasheet roofs dotted and labelled "datasheet".
// Every roof is labelled at its line's end with its value; kernel labels are
// placed greedily where they overlap nothing (leader lines, crossing no other
// text, when they sit away from their point); a label that finds no room is
// left to the point's hover title.  The overview draws each kernel once, at
// its family's busiest shape, and labels only the fastest kernel of each
// family.  Points carry min-max whiskers from time_s.
#pragma once

#include "rl/roofline/results.hpp"
#include "rl/roofline/text.hpp"  // xml_escape, si, estimate_text_width

#include <string>
#include <string_view>
#include <vector>

namespace rl::roofline {

struct ChartOptions {
  double width = 1000;
  double height = 660;
  // "overview" | "memory" | "simt" | "tensor" | "hierarchy" | "family:NAME"
  std::string view = "overview";
};

struct ChartView {
  std::string id;        // the ChartOptions::view that draws it
  std::string title;     // what the chart shows
  std::string question;  // the one question it answers, for the report
};

// The views this results file has something to draw in, in reading order:
// memory, simt, tensor, then one per family that has a ladder (a kernel whose
// baseline is another kernel of the family).  The overview is not listed.
std::vector<ChartView> chart_views(const Results& results);

// True for "overview", "memory", "simt", "tensor", "hierarchy" and "family:NAME".
bool valid_view_name(std::string_view view);

struct TextBox {  // a drawn text, in SVG user units (y grows downwards)
  std::string text;
  double x0 = 0, y0 = 0, x1 = 0, y1 = 0;
  std::string role;  // "title", "tick", "axis-title", "roof-label", "point-label", "legend", ...
};

struct ChartLayout {
  std::vector<TextBox> texts;          // every text drawn, with its estimated box
  std::vector<std::string> roofs;      // every roof drawn: "hbm.copy measured", "tc.bf16 datasheet"
  std::vector<std::string> points;     // every kernel plotted (name)
  std::vector<std::string> hidden;     // kernels plotted without a label (hover title only)
  std::vector<std::string> unplotted;  // timed kernels that cannot sit on log axes (0 FLOP)
  std::vector<std::string> unlabelled_roofs;  // roofs whose label found no room (hover title)
  double width = 0, height = 0;
};

// Both throw std::invalid_argument for a view name valid_view_name refuses.
ChartLayout layout_roofline_chart(const Results& results, const ChartOptions& options = {});
std::string render_roofline_svg(const Results& results, const ChartOptions& options = {});

}  // namespace rl::roofline
