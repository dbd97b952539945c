// What one chart view draws (internal to the chart): which kernels, which
// roofs, in which colours.  Deciding that is apart from where things go on the
// page (chart_layout.hpp) and how they are written as SVG (svg.cpp).
#pragma once

#include "rl/roofline/results.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rl::roofline::chart {

// Okabe & Ito's colour-blind-safe palette, one colour per compute unit; a
// kernel and the roof of its unit share it.
std::string unit_colour(std::string_view unit);
inline constexpr std::string_view kHbmColour = "#444444";
inline constexpr std::string_view kL2Colour = "#8C8C8C";
inline constexpr std::string_view kL1Colour = "#BDBDBD";  // smem.read, the hierarchy view's alone

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

// One memory level of a kernel in the hierarchy view (chart_hierarchy.hpp):
// its bytes there, counted or, where no counter says, the cost model's figure.
struct LevelPoint {
  std::string level;  // "L1", "L2", "DRAM"
  double bytes = 0;
  double intensity = 0;  // flops / bytes
  bool counted = true;   // false: the model's figure stands in (drawn hollow)
};

// A kernel of the hierarchy view: its levels at its achieved FLOP/s, in one
// colour, joined by a thin line.
struct HierarchyKernel {
  const KernelResult* kernel;
  std::string colour;
  std::vector<LevelPoint> levels;  // L1, L2, DRAM order; the levels it can be placed at
};

struct ViewSpec {
  std::string title;
  std::string note;  // what is selected (shape of a ladder), "" when nothing to add
  std::vector<const KernelResult*> kernels;
  // The kernels whose name is written on the plot (a subset of `kernels`);
  // every other point keeps only its hover title.
  std::vector<const KernelResult*> labelled;
  std::string label_note;   // why some points carry no label, for the footnote; "" when all may
  bool rung_arrows = true;  // an arrow from each rung's baseline (at its shape) up to the rung
  // No leader line crosses a label, nor a label a leader.  The overview's few
  // labels always find such spots; in the crowded family views the rule
  // would cost a few of the rung names those views are for, so they keep
  // the nearest free spot.
  bool leaders_clear_labels = false;
  std::vector<Roof> roofs;
  std::string x_title = "Arithmetic intensity (FLOP/byte, against bytes_model)";
  std::string empty_note = "no timed kernels with FLOPs in this view";
  bool whiskers = true;  // min-max over repetitions on each point
  // The hierarchy view: each kernel's points at its memory levels, in place
  // of one point at bytes_model's intensity (empty in every other view).
  std::vector<HierarchyKernel> hierarchy;
};

// A family's busiest shape: the one with the most plottable kernels, then the
// most FLOPs of one of them (the first such shape in the file on a full tie).
// The family view and the overview both draw the family there, so a reader
// meets the same points in each.  The bench measures each record's headline
// shape (its most FLOPs, selection.hpp) before the others, so in a full run,
// or one cut short after that first pass, the two agree.  Counting kernels
// first keeps every rung beside its baseline when a shape was not reached.
// nullopt when the family has no plottable kernel.
std::optional<ShapeDims> busiest_shape(const Results& r, const std::string& family);

// The view's kernels (pointers into `r`) and roofs; `view` is a valid view name.
ViewSpec view_spec(const Results& r, std::string_view view);

// What the views share with the hierarchy view (chart_hierarchy.cpp).
// A measured compute roof, and its datasheet figure when asked and known.
void add_compute_roof(ViewSpec& v, const Ceiling& c, bool with_datasheet = true);
// A measured memory roof in its level's grey (HBM, L2, L1/shared).
void add_memory_roof(ViewSpec& v, const Ceiling& c);
// The overview's choice of instances: each kernel (record name) that `keep`
// accepts once, at its family's busiest shape, or at its own shape with the
// most FLOPs (then the most bytes_min) where it was not timed there.
void each_kernel_once(ViewSpec& v, const Results& r, bool (*keep)(const KernelResult&));

}  // namespace rl::roofline::chart
