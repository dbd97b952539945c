#include "chart_view.hpp"

#include "chart_hierarchy.hpp"

#include "rl/roofline/model.hpp"
#include "rl/roofline/svg.hpp"
#include "rl/roofline/text.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>

#include <fmt/format.h>

namespace rl::roofline {
namespace chart {

// Packed-half SIMT and tensor units of one precision share a colour, as do
// the unscaled and block-scaled kinds of one width (fp8/mxfp8, fp4/mxfp4/
// nvfp4): the roof labels tell them apart.
std::string unit_colour(std::string_view unit) {
  auto u = parse_compute_unit(unit);
  if (!u) return "#999999";
  switch (*u) {
    case ComputeUnit::fp32:
      return "#0072B2";  // blue
    case ComputeUnit::fp64:
      return "#CC79A7";  // reddish purple
    case ComputeUnit::fp16:
    case ComputeUnit::tc_fp16:
      return "#009E73";  // bluish green
    case ComputeUnit::bf16:
    case ComputeUnit::tc_bf16:
      return "#E69F00";  // orange
    case ComputeUnit::tc_tf32:
      return "#56B4E9";  // sky blue
    case ComputeUnit::tc_fp8:
    case ComputeUnit::tc_mxfp8:
      return "#D55E00";  // vermillion
    case ComputeUnit::tc_int8:
      return "#000000";
    case ComputeUnit::tc_fp6:
    case ComputeUnit::tc_mxfp6:
      return "#F0E442";  // yellow
    case ComputeUnit::tc_fp4:
    case ComputeUnit::tc_mxfp4:
    case ComputeUnit::tc_nvfp4:
      return "#882255";  // wine
  }
  return "#999999";
}

bool plottable(const KernelResult& k) {
  return k.time_s && k.flops > 0 && k.bytes_model > 0 && k.achieved_flops_per_s > 0 &&
         std::isfinite(k.achieved_flops_per_s) && std::isfinite(k.flops) &&
         std::isfinite(k.bytes_model);
}

std::string Roof::label() const {
  return fmt::format("{}{} {}{}", name, datasheet ? " datasheet" : "", si(value),
                     memory ? "B/s" : "FLOP/s");
}

std::optional<ShapeDims> busiest_shape(const Results& r, const std::string& family) {
  std::vector<std::pair<ShapeDims, std::pair<int, double>>> shapes;  // (count, most FLOPs)
  for (const auto& k : r.kernels) {
    if (k.family != family || !plottable(k)) continue;
    auto it = std::find_if(shapes.begin(), shapes.end(),
                           [&](const auto& s) { return s.first == k.shape; });
    if (it == shapes.end()) {
      shapes.push_back({k.shape, {0, 0.0}});
      it = shapes.end() - 1;
    }
    it->second.first += 1;
    it->second.second = std::max(it->second.second, k.flops);
  }
  if (shapes.empty()) return std::nullopt;
  auto best = std::max_element(shapes.begin(), shapes.end(),
                               [](const auto& a, const auto& b) { return a.second < b.second; });
  return best->first;
}

void add_compute_roof(ViewSpec& v, const Ceiling& c, bool with_datasheet) {
  for (const auto& r : v.roofs)
    if (r.name == c.name && !r.datasheet) return;
  v.roofs.push_back({c.name, false, false, c.value, unit_colour(c.name)});
  if (with_datasheet && c.datasheet && *c.datasheet > 0 && std::isfinite(*c.datasheet))
    v.roofs.push_back({c.name, false, true, *c.datasheet, unit_colour(c.name)});
}

void add_memory_roof(ViewSpec& v, const Ceiling& c) {
  const std::string_view colour = c.name.starts_with("l2")     ? kL2Colour
                                  : c.name.starts_with("smem") ? kL1Colour
                                                               : kHbmColour;
  v.roofs.push_back({c.name, true, false, c.value, std::string(colour)});
}

void each_kernel_once(ViewSpec& v, const Results& r, bool (*keep)(const KernelResult&)) {
  std::map<std::string, std::optional<ShapeDims>> family_shape;
  std::map<std::string, std::size_t> index_of;  // kernel name -> index in v.kernels
  auto at_busiest = [&](const KernelResult& k) { return k.shape == family_shape[k.family]; };
  for (const auto& k : r.kernels) {
    if (!keep(k)) continue;
    if (!family_shape.contains(k.family)) family_shape[k.family] = busiest_shape(r, k.family);
    auto [it, first] = index_of.try_emplace(k.name, v.kernels.size());
    if (first) {
      v.kernels.push_back(&k);
      continue;
    }
    const KernelResult*& kept = v.kernels[it->second];
    if (at_busiest(*kept)) continue;
    if (at_busiest(k) || k.flops > kept->flops ||
        (k.flops == kept->flops && k.bytes_min > kept->bytes_min))
      kept = &k;
  }
}

namespace {

bool tensor_unit(ComputeUnit unit) {
  return compute_unit_name(unit).starts_with("tc_");
}

const Ceiling* best_hbm(const std::vector<Ceiling>& ceilings) {
  return dram_ceiling(ceilings);
}

// Below its unit's ridge against the best DRAM roof, a kernel is limited by
// memory; without both roofs, the recorded bound decides.
bool memory_side(const KernelResult& k, const std::vector<Ceiling>& ceilings) {
  const Ceiling* hbm = best_hbm(ceilings);
  const Ceiling* roof = compute_ceiling(ceilings, k.unit);
  if (hbm && roof) return intensity(k.flops, k.bytes_model) < roof->value / hbm->value;
  return k.bound == Bound::memory;
}

std::vector<std::string> ladder_families(const Results& r) {
  std::set<std::string> names;
  for (const auto& k : r.kernels) names.insert(k.name);
  std::vector<std::string> families;
  for (const auto& k : r.kernels) {
    if (k.family == "ceilings" || k.baseline.empty() || !names.contains(k.baseline)) continue;
    if (std::find(families.begin(), families.end(), k.family) == families.end())
      families.push_back(k.family);
  }
  // The suite's ladders first, in the order the README tells them.
  static const std::vector<std::string> kOrder{"gelu", "bias_gelu", "layernorm", "gemm",
                                               "attention"};
  auto rank = [](const std::string& f) {
    auto it = std::find(kOrder.begin(), kOrder.end(), f);
    return std::make_pair(static_cast<int>(it - kOrder.begin()), f);
  };
  std::sort(families.begin(), families.end(),
            [&](const auto& a, const auto& b) { return rank(a) < rank(b); });
  return families;
}

// The datasheet DRAM bandwidth is one figure, whichever hbm.* ceiling carries it.
void add_datasheet_memory(ViewSpec& v, const std::vector<Ceiling>& ceilings, bool with_l2) {
  double hbm = 0, l2 = 0;
  for (const auto& c : ceilings) {
    if (c.kind != "memory" || !c.datasheet || !(*c.datasheet > 0) || !std::isfinite(*c.datasheet))
      continue;
    if (c.name.starts_with("hbm.")) hbm = std::max(hbm, *c.datasheet);
    if (c.name.starts_with("l2.")) l2 = std::max(l2, *c.datasheet);
  }
  if (hbm > 0) v.roofs.push_back({"hbm", true, true, hbm, std::string(kHbmColour)});
  if (with_l2 && l2 > 0) v.roofs.push_back({"l2", true, true, l2, std::string(kL2Colour)});
}

bool overview_kernel(const KernelResult& k) {
  return plottable(k) && k.family != "ceilings";
}

// The overview draws each kernel (record name) once, so ~100 timed
// instances of an emulated run become one point per kernel (each_kernel_once).
// Only the fastest kernel of each family at the busiest shape (the most
// FLOP/s: the shape's FLOPs are the operation's, so also the shortest time)
// is labelled; the family views name every rung.
void add_overview_kernels(ViewSpec& v, const Results& r) {
  each_kernel_once(v, r, overview_kernel);
  std::map<std::string, std::optional<ShapeDims>> family_shape;
  for (const auto* k : v.kernels)
    if (!family_shape.contains(k->family)) family_shape[k->family] = busiest_shape(r, k->family);
  auto at_busiest = [&](const KernelResult& k) { return k.shape == family_shape[k.family]; };
  std::map<std::string, const KernelResult*> fastest;  // family -> its labelled kernel
  for (const auto* k : v.kernels) {
    if (!at_busiest(*k)) continue;
    auto [it, first] = fastest.try_emplace(k->family, k);
    if (!first && k->achieved_flops_per_s > it->second->achieved_flops_per_s) it->second = k;
  }
  v.labelled.clear();
  for (const auto* k : v.kernels)
    if (auto f = fastest.find(k->family); f != fastest.end() && f->second == k)
      v.labelled.push_back(k);
  v.label_note = "Labelled: the fastest kernel of each family; hover a point for the others.";
  // A family's rungs sit at different intensities: with every family on one
  // chart their arrows cross it from side to side.  The family views draw them.
  v.rung_arrows = false;
  v.leaders_clear_labels = true;
}

}  // namespace

ViewSpec view_spec(const Results& r, std::string_view view) {
  if (view == "hierarchy") return hierarchy_spec(r);
  ViewSpec v;
  const auto& ceilings = r.ceilings;
  const Ceiling* hbm = best_hbm(ceilings);
  auto usable = [](const Ceiling& c) { return c.value > 0 && std::isfinite(c.value); };
  std::string family;
  std::optional<ShapeDims> shape;
  if (view.starts_with("family:")) {
    family = std::string(view.substr(7));
    shape = busiest_shape(r, family);
  }
  for (const auto& k : r.kernels) {
    if (!plottable(k) || view == "overview") continue;
    bool keep = false;
    if (view == "memory")
      keep = k.family != "ceilings" && memory_side(k, ceilings);
    else if (view == "simt")
      keep = k.family != "ceilings" && !tensor_unit(k.unit);
    else if (view == "tensor")
      keep = k.family != "ceilings" && tensor_unit(k.unit);
    else
      keep = k.family == family && shape && k.shape == *shape;
    if (keep) v.kernels.push_back(&k);
  }
  v.labelled = v.kernels;
  if (view == "overview") add_overview_kernels(v, r);
  if (view == "memory") {
    v.title = "Memory-bound kernels against the HBM and L2 roofs";
    // smem.read is a level no kernel is judged against: the hierarchy view's alone.
    for (const auto& c : ceilings)
      if (c.kind == "memory" && usable(c) && !c.name.starts_with("smem.")) add_memory_roof(v, c);
    add_datasheet_memory(v, ceilings, true);
    return v;
  }
  if (hbm) add_memory_roof(v, *hbm);
  if (view == "overview")
    for (const auto& c : ceilings)
      if (c.kind == "memory" && c.name.starts_with("l2") && usable(c)) add_memory_roof(v, c);
  add_datasheet_memory(v, ceilings, false);
  if (view == "simt") {
    v.title = "SIMT kernels (FP32, FP64, packed half) against their pipe's roof";
    for (ComputeUnit unit : {ComputeUnit::fp32, ComputeUnit::fp64})
      if (const Ceiling* c = compute_ceiling(ceilings, unit)) add_compute_roof(v, *c);
  } else if (view == "tensor") {
    v.title = "Tensor-core kernels against the roof of their precision";
    for (const auto& c : ceilings)
      if (c.kind == "compute" && c.name.starts_with("tc.") && usable(c)) add_compute_roof(v, c);
  } else if (view == "overview") {
    v.title = "Every kernel against the roof of the unit it runs on";
    v.note = "each kernel once, at its family's busiest shape";
  } else {
    v.title = fmt::format("The {} ladder: each arrow goes from a baseline up to its rung", family);
    if (shape) v.note = "at " + shape_text(*shape);
  }
  for (const auto* k : v.kernels)
    if (const Ceiling* c = compute_ceiling(ceilings, k->unit)) add_compute_roof(v, *c);
  return v;
}

}  // namespace chart

bool valid_view_name(std::string_view view) {
  return view == "overview" || view == "memory" || view == "simt" || view == "tensor" ||
         view == "hierarchy" || (view.starts_with("family:") && view.size() > 7);
}

std::vector<ChartView> chart_views(const Results& results) {
  std::vector<ChartView> views;
  auto add = [&](std::string id, std::string question) {
    chart::ViewSpec spec = chart::view_spec(results, id);
    if (spec.kernels.empty()) return;
    views.push_back({std::move(id), spec.title, std::move(question)});
  };
  add("memory", "Which kernels are limited by memory, and how close do they get to HBM and L2?");
  add("simt", "How close do the SIMT kernels come to the FP32 and FP64 pipes?");
  add("tensor", "How close does each tensor-core kernel come to the roof of its precision?");
  // Only where kernels were counted (--counters); a colour is a kernel here.
  add("hierarchy",
      "Where is each kernel's data reused: in L1/shared memory, in L2 or from DRAM? One colour "
      "per kernel, its points at its intensity at each level; a hollow point is the cost "
      "model's figure where that level was not counted.");
  for (const auto& family : chart::ladder_families(results))
    add("family:" + family,
        fmt::format("What does each rung of the {} ladder buy over its baseline?", family));
  return views;
}

}  // namespace rl::roofline
