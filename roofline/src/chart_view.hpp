// What one chart view draws (internal to the chart): which kernels, which
// roofs, in which colours.  Deciding that is apart from where things go on the
// page (chart_layout.hpp) and how they are written as SVG (svg.cpp).
#pragma once

#include "rl/roofline/results.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace rl::roofline::chart {

// Okabe & Ito's colour-blind-safe palette, one colour per compute unit; a
// kernel and the roof of its unit share it.
std::string unit_colour(std::string_view unit);
inline constexpr std::string_view kHbmColour = "#444444";
inline constexpr std::string_view kL2Colour = "#8C8C8C";

// A kernel that can sit on log axes: timed, with FLOPs and bytes.
bool plottable(const KernelResult& k);

struct Roof {
  std::string name;  // ceiling name ("hbm.copy", "tc.bf16"); "hbm" for the datasheet DRAM line
  bool memory = false;
  bool datasheet = false;
  double value = 0;  // B/s or FLOP/s
  std::string colour;
  std::string label() const;
};

struct ViewSpec {
  std::string title;
  std::string note;  // what is selected (shape of a ladder), "" when nothing to add
  std::vector<const KernelResult*> kernels;
  std::vector<Roof> roofs;
};

// The view's kernels (pointers into `r`) and roofs; `view` is a valid view name.
ViewSpec view_spec(const Results& r, std::string_view view);

}  // namespace rl::roofline::chart
