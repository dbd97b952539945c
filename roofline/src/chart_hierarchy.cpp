#include "chart_hierarchy.hpp"

#include "rl/roofline/model.hpp"

#include <array>
#include <cmath>
#include <optional>
#include <string>
#include <string_view>

#include <fmt/format.h>

namespace rl::roofline::chart {

namespace {

// One colour a kernel, its three points alike: Okabe & Ito's palette without
// its yellow (too faint on white), so up to seven kernels never share one.
constexpr std::array<std::string_view, 7> kKernelColours{"#0072B2", "#E69F00", "#009E73", "#D55E00",
                                                         "#CC79A7", "#56B4E9", "#000000"};

std::optional<double> value_of(const KernelCounters& c, const std::string& key) {
  auto it = c.values.find(key);
  if (it == c.values.end() || !std::isfinite(it->second)) return std::nullopt;
  return it->second;
}

// A kernel the view places: timed with FLOPs, not a ceiling loop (those are
// the roofs), and with at least one memory level counted.  A kernel whose
// levels are all the model's (the emulator counted only its tensor ops, or
// copy paths that are not its whole L2 traffic) would repeat the overview
// chart in hollow points.
bool counted_kernel(const KernelResult& k) {
  if (!plottable(k) || k.family == "ceilings" || !k.counters || k.counters->values.empty())
    return false;
  for (const LevelPoint& level : memory_levels(k))
    if (level.counted) return true;
  return false;
}

// The one line the chart shows when it has nothing to place.
std::string empty_note(const Results& r) {
  for (const auto& k : r.kernels)
    if (k.counters && k.counters->values.empty() && !k.counters->unavailable.empty())
      return "no counts to place: " + k.counters->unavailable;
  for (const auto& k : r.kernels)
    if (k.counters && !k.counters->values.empty())
      return "no timed kernel with FLOPs has a counted memory level (L1, L2 or DRAM bytes)";
  return "no kernel in this file has counters (bench_roofline --counters collects them)";
}

}  // namespace

std::string_view level_marker(std::string_view level) {
  return level == "L1" ? "triangle" : level == "L2" ? "square" : "circle";
}

std::vector<LevelPoint> memory_levels(const KernelResult& k) {
  std::vector<LevelPoint> out;
  auto add = [&](std::string level, std::optional<double> bytes, bool counted) {
    if (!bytes || !(*bytes > 0)) return;
    out.push_back({std::move(level), *bytes, intensity(k.flops, *bytes), counted});
  };
  const KernelCounters empty;
  const KernelCounters& c = k.counters ? *k.counters : empty;
  add("L1", value_of(c, "l1_bytes"), true);
  // The emulator's l2_bytes holds only what its copy paths saw (rl::load128,
  // cp.async, TMA, ...: rl/emu/counters.hpp); a model declares both L2
  // figures only where every global access goes through them, so only then
  // is that count the kernel's whole L2 traffic.
  const bool declared = k.bytes_l2_load && k.bytes_l2_store;
  const bool whole_l2 = c.source != CounterSource::emulator || declared;
  if (auto l2 = value_of(c, "l2_bytes"); l2 && whole_l2)
    add("L2", l2, true);
  else if (declared)
    add("L2", *k.bytes_l2_load + *k.bytes_l2_store, false);
  auto read = value_of(c, "dram_bytes_read"), write = value_of(c, "dram_bytes_write");
  if (read && write)
    add("DRAM", *read + *write, true);
  else
    add("DRAM", k.bytes_model, false);
  return out;
}

ViewSpec hierarchy_spec(const Results& r) {
  ViewSpec v;
  v.title = "Each kernel at its L1, L2 and DRAM intensities against those levels' roofs";
  v.note = "counted bytes; hollow: the cost model's";
  v.x_title = "Arithmetic intensity (FLOP/byte at each level: L1, L2, DRAM)";
  v.empty_note = empty_note(r);
  v.whiskers = false;  // three points of one rate: one whisker would be drawn thrice
  v.rung_arrows = false;
  v.leaders_clear_labels = true;
  each_kernel_once(v, r, counted_kernel);
  v.labelled = v.kernels;
  // Beside drawn kernels, say how many are left out; an empty chart's one
  // line says why already.
  std::size_t uncounted = 0;
  for (const auto& k : r.kernels)
    uncounted += plottable(k) && k.family != "ceilings" && !counted_kernel(k);
  if (v.kernels.empty()) v.note.clear();
  if (uncounted > 0 && !v.kernels.empty())
    v.label_note = fmt::format("{} timed instance(s) without a counted memory level are not drawn.",
                               uncounted);
  for (std::size_t i = 0; i < v.kernels.size(); ++i) {
    const KernelResult* k = v.kernels[i];
    v.hierarchy.push_back(
        {k, std::string(kKernelColours[i % kKernelColours.size()]), memory_levels(*k)});
  }
  for (std::string_view level : {"smem.", "l2."})
    if (const Ceiling* c = best_memory_ceiling(r.ceilings, level)) add_memory_roof(v, *c);
  if (const Ceiling* c = dram_ceiling(r.ceilings)) add_memory_roof(v, *c);
  for (const auto* k : v.kernels)
    if (const Ceiling* c = compute_ceiling(r.ceilings, k->unit))
      add_compute_roof(v, *c, /*with_datasheet=*/false);
  return v;
}

}  // namespace rl::roofline::chart
