#include "rl/roofline/svg.hpp"

#include "rl/roofline/model.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>

#include <fmt/format.h>

namespace rl::roofline {

std::string xml_escape(std::string_view s) {
  std::string out;
  for (char ch : s) {
    switch (ch) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        // XML 1.0 forbids most control characters even when escaped.
        if (static_cast<unsigned char>(ch) < 0x20 && ch != '\t' && ch != '\n')
          out += '?';
        else
          out += ch;
    }
  }
  return out;
}

std::string si(double value, int significant) {
  if (!std::isfinite(value)) return "n/a";
  if (value == 0) return "0 ";
  static constexpr std::array<std::pair<double, const char*>, 10> kPrefixes{{{1e18, "E"},
                                                                             {1e15, "P"},
                                                                             {1e12, "T"},
                                                                             {1e9, "G"},
                                                                             {1e6, "M"},
                                                                             {1e3, "k"},
                                                                             {1, ""},
                                                                             {1e-3, "m"},
                                                                             {1e-6, "µ"},
                                                                             {1e-9, "n"}}};
  double magnitude = std::abs(value);
  for (auto [scale, prefix] : kPrefixes) {
    if (magnitude >= scale * 0.9995 || scale == 1e-9) {
      double scaled = value / scale;
      int digits = std::max(
          0, significant - 1 -
                 static_cast<int>(std::floor(std::log10(std::max(std::abs(scaled), 1e-300)))));
      std::string text = fmt::format("{:.{}f}", scaled, digits);
      if (text.find('.') != std::string::npos) {
        while (text.back() == '0') text.pop_back();
        if (text.back() == '.') text.pop_back();
      }
      return text + " " + prefix;
    }
  }
  return fmt::format("{:g} ", value);
}

namespace {

// Every coordinate goes through here: a non-finite value would make the SVG
// unreadable, so it is clamped (the callers never produce one; this is the guard).
std::string num(double v) {
  if (!std::isfinite(v)) v = 0;
  return fmt::format("{:.2f}", v);
}

constexpr double kFontSize = 11;
constexpr double kTitleSize = 16;
constexpr double kBannerSize = 14;
// Below the baseline a box keeps 0.3 em for descenders (3.3 units at 11).
constexpr double kDescent = 0.3;
constexpr double kLineHeight = kFontSize * (1 + kDescent) + 0.5;
constexpr double kLegendWidth = 200;

bool overlaps(const TextBox& a, const TextBox& b) {
  return a.x0 < b.x1 && b.x0 < a.x1 && a.y0 < b.y1 && b.y0 < a.y1;
}

// Okabe & Ito's colour-blind-safe palette, one colour per compute unit; a
// kernel and the roof of its unit share it.  Packed-half SIMT and tensor
// units of one precision share a colour: they never share a view but the
// overview, where the roof labels tell them apart.
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
      return "#D55E00";  // vermillion
    case ComputeUnit::tc_int8:
      return "#000000";
  }
  return "#999999";
}

constexpr std::string_view kHbmColour = "#444444";
constexpr std::string_view kL2Colour = "#8C8C8C";
constexpr std::string_view kDatasheetDash = "2,4";

const std::array<std::string_view, 8> kMarkerShapes{"circle", "square", "triangle", "diamond",
                                                    "down",   "cross",  "star",     "hexagon"};

std::string marker_path(std::string_view shape, double x, double y, double r) {
  auto p = [&](double dx, double dy) { return num(x + dx) + "," + num(y + dy); };
  if (shape == "square")
    return "M" + p(-r, -r) + " L" + p(r, -r) + " L" + p(r, r) + " L" + p(-r, r) + " Z";
  if (shape == "triangle")
    return "M" + p(0, -r * 1.2) + " L" + p(r * 1.1, r * 0.8) + " L" + p(-r * 1.1, r * 0.8) + " Z";
  if (shape == "down")
    return "M" + p(0, r * 1.2) + " L" + p(r * 1.1, -r * 0.8) + " L" + p(-r * 1.1, -r * 0.8) + " Z";
  if (shape == "diamond")
    return "M" + p(0, -r * 1.3) + " L" + p(r * 1.3, 0) + " L" + p(0, r * 1.3) + " L" +
           p(-r * 1.3, 0) + " Z";
  if (shape == "cross") {
    double t = r * 0.4;
    return "M" + p(-t, -r) + " L" + p(t, -r) + " L" + p(t, -t) + " L" + p(r, -t) + " L" + p(r, t) +
           " L" + p(t, t) + " L" + p(t, r) + " L" + p(-t, r) + " L" + p(-t, t) + " L" + p(-r, t) +
           " L" + p(-r, -t) + " L" + p(-t, -t) + " Z";
  }
  if (shape == "star" || shape == "hexagon") {
    std::string d;
    int corners = shape == "star" ? 10 : 6;
    for (int i = 0; i < corners; ++i) {
      double angle = M_PI / 2 + 2 * M_PI * i / corners;
      double radius = (shape == "star" && i % 2) ? r * 0.5 : r * 1.2;
      d += (i ? " L" : "M") + p(radius * std::cos(angle), -radius * std::sin(angle));
    }
    return d + " Z";
  }
  // circle as a path: one element kind for every marker keeps tests simple
  return "M" + p(-r, 0) + " A" + num(r) + "," + num(r) + " 0 1,0 " + p(r, 0) + " A" + num(r) + "," +
         num(r) + " 0 1,0 " + p(-r, 0) + " Z";
}

bool plottable(const KernelResult& k) {
  return k.time_s && k.flops > 0 && k.bytes_model > 0 && k.achieved_flops_per_s > 0 &&
         std::isfinite(k.achieved_flops_per_s) && std::isfinite(k.flops) &&
         std::isfinite(k.bytes_model);
}

bool tensor_unit(std::string_view unit) {
  return unit.starts_with("tc_") || unit.starts_with("tc.");
}

const Ceiling* best_hbm(const std::vector<Ceiling>& ceilings) {
  return dram_ceiling(ceilings);
}

const Ceiling* unit_roof(const std::vector<Ceiling>& ceilings, std::string_view unit) {
  auto u = parse_compute_unit(unit);
  return u ? compute_ceiling(ceilings, *u) : nullptr;
}

// Below its unit's ridge against the best DRAM roof, a kernel is limited by
// memory; without both roofs, the recorded bound decides.
bool memory_side(const KernelResult& k, const std::vector<Ceiling>& ceilings) {
  const Ceiling* hbm = best_hbm(ceilings);
  const Ceiling* roof = unit_roof(ceilings, k.unit);
  if (hbm && roof) return intensity(k.flops, k.bytes_model) < roof->value / hbm->value;
  return k.bound == "memory";
}

// A family's ladder is drawn at one shape: the one with the most plottable
// kernels (the most work on a tie), so every rung sits beside its baseline.
std::optional<ShapeDims> ladder_shape(const Results& r, const std::string& family) {
  std::vector<std::pair<ShapeDims, std::pair<int, double>>> shapes;
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

struct Roof {
  std::string name;  // ceiling name ("hbm.copy", "tc.bf16"); "hbm" for the datasheet DRAM line
  bool memory = false;
  bool datasheet = false;
  double value = 0;  // B/s or FLOP/s
  std::string colour;
  std::string label() const {
    return fmt::format("{}{} {}{}", name, datasheet ? " datasheet" : "", si(value),
                       memory ? "B/s" : "FLOP/s");
  }
};

struct ViewSpec {
  std::string title;
  std::string note;  // what is selected (shape of a ladder), "" when nothing to add
  std::vector<const KernelResult*> kernels;
  std::vector<Roof> roofs;
};

void add_compute_roof(ViewSpec& v, const Ceiling& c) {
  for (const auto& r : v.roofs)
    if (r.name == c.name && !r.datasheet) return;
  v.roofs.push_back({c.name, false, false, c.value, unit_colour(c.name)});
  if (c.datasheet && *c.datasheet > 0 && std::isfinite(*c.datasheet))
    v.roofs.push_back({c.name, false, true, *c.datasheet, unit_colour(c.name)});
}

void add_memory_roof(ViewSpec& v, const Ceiling& c) {
  bool l2 = c.name.starts_with("l2");
  v.roofs.push_back({c.name, true, false, c.value, std::string(l2 ? kL2Colour : kHbmColour)});
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

ViewSpec view_spec(const Results& r, std::string_view view) {
  ViewSpec v;
  const auto& ceilings = r.ceilings;
  const Ceiling* hbm = best_hbm(ceilings);
  auto usable = [](const Ceiling& c) { return c.value > 0 && std::isfinite(c.value); };
  std::string family;
  std::optional<ShapeDims> shape;
  if (view.starts_with("family:")) {
    family = std::string(view.substr(7));
    shape = ladder_shape(r, family);
  }
  for (const auto& k : r.kernels) {
    if (!plottable(k)) continue;
    bool keep = false;
    if (view == "overview")
      keep = k.family != "ceilings";
    else if (view == "memory")
      keep = k.family != "ceilings" && memory_side(k, ceilings);
    else if (view == "simt")
      keep = k.family != "ceilings" && !tensor_unit(k.unit);
    else if (view == "tensor")
      keep = k.family != "ceilings" && tensor_unit(k.unit);
    else
      keep = k.family == family && shape && k.shape == *shape;
    if (keep) v.kernels.push_back(&k);
  }
  if (view == "memory") {
    v.title = "Memory-bound kernels against the HBM and L2 roofs";
    for (const auto& c : ceilings)
      if (c.kind == "memory" && usable(c)) add_memory_roof(v, c);
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
    for (const char* name : {"fp32", "fp64"})
      if (const Ceiling* c = unit_roof(ceilings, name)) add_compute_roof(v, *c);
  } else if (view == "tensor") {
    v.title = "Tensor-core kernels against the roof of their precision";
    for (const auto& c : ceilings)
      if (c.kind == "compute" && c.name.starts_with("tc.") && usable(c)) add_compute_roof(v, c);
  } else if (view == "overview") {
    v.title = "Every kernel against the roof of the unit it runs on";
  } else {
    v.title = fmt::format("The {} ladder: each arrow goes from a baseline up to its rung", family);
    if (shape) v.note = "at " + shape_text(*shape);
  }
  for (const auto* k : v.kernels)
    if (const Ceiling* c = unit_roof(ceilings, k->unit)) add_compute_roof(v, *c);
  return v;
}

std::string y_tick_text(double v) {
  std::string text = si(v, 2);
  text.erase(std::remove(text.begin(), text.end(), ' '), text.end());
  return text;
}

std::string x_tick_text(double v) {
  if (v < 1000) return fmt::format("{:g}", std::stod(fmt::format("{:.2g}", v)));
  return y_tick_text(v);
}

// Ticks at decades when the axis spans several, else at 1, 2 and 5 of each
// decade so a narrow axis (one fitted to its data) still has three or more.
std::vector<double> tick_values(double l0, double l1) {
  std::vector<double> ticks;
  const bool decades = l1 - l0 >= 2.5;
  for (double e = std::floor(l0); e <= std::ceil(l1); e += 1)
    for (double m : decades ? std::vector<double>{1} : std::vector<double>{1, 2, 5}) {
      double v = m * std::pow(10, e);
      double lv = std::log10(v);
      if (lv >= l0 - 1e-9 && lv <= l1 + 1e-9) ticks.push_back(v);
    }
  return ticks;
}

struct PlotPoint {
  const KernelResult* kernel;
  double x, y;        // pixels
  double y_hi, y_lo;  // whisker ends (pixels): fastest and slowest sample
};

struct Segment {  // a roof line or arrow, pixels
  double x0, y0, x1, y1;
};

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

class Chart {
 public:
  Chart(const Results& results, const ChartOptions& options) : r_(results), o_(options) {
    if (!valid_view_name(o_.view))
      throw std::invalid_argument(fmt::format(
          "unknown chart view '{}' (overview, memory, simt, tensor or family:NAME)", o_.view));
    spec_ = view_spec(r_, o_.view);
    // Several charts share one HTML page: ids are unique per view.
    for (char ch : o_.view) id_ += std::isalnum(static_cast<unsigned char>(ch)) ? ch : '-';
    emulator_ = r_.context.backend == "emulator";
    layout_.width = o_.width;
    layout_.height = o_.height;
    for (const auto& k : r_.kernels)
      if (k.time_s && !plottable(k) && k.family != "ceilings") layout_.unplotted.push_back(k.name);
    collect_keys();
    choose_ranges();
    place_frame_texts();
    place_roofs();
    place_point_labels();
    place_legend();
    place_footnote();
  }

  const ChartLayout& layout() const { return layout_; }

  std::string render() const {
    std::string s;
    s += "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n";
    s += fmt::format(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"{}\" height=\"{}\" "
        "viewBox=\"0 0 {} {}\" font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\" "
        "font-size=\"{}\" class=\"roofline-chart\" data-view=\"{}\">\n",
        num(o_.width), num(o_.height), num(o_.width), num(o_.height), num(kFontSize),
        xml_escape(o_.view));
    s += "<title>" + xml_escape(spec_.title) + "</title>\n";
    s += "<defs><marker id=\"arrowhead-" + id_ +
         "\" markerWidth=\"8\" markerHeight=\"6\" refX=\"7\" "
         "refY=\"3\" orient=\"auto\" markerUnits=\"userSpaceOnUse\"><path d=\"M0,0 L8,3 L0,6 "
         "Z\" fill=\"#333\"/></marker>\n";
    s += fmt::format(
        "<clipPath id=\"plot-area-{}\"><rect x=\"{}\" y=\"{}\" width=\"{}\" "
        "height=\"{}\"/></clipPath></defs>\n",
        id_, num(left_), num(top_), num(right_ - left_), num(bottom_ - top_));
    s += fmt::format("<rect x=\"0\" y=\"0\" width=\"{}\" height=\"{}\" fill=\"#ffffff\"/>\n",
                     num(o_.width), num(o_.height));
    if (emulator_)
      s += fmt::format(
          "<rect class=\"emulator-banner\" x=\"{}\" y=\"{}\" width=\"{}\" "
          "height=\"{}\" fill=\"#b00020\"/>\n",
          num(banner_.x0 - 6), num(banner_.y0 - 4), num(banner_.x1 - banner_.x0 + 12),
          num(banner_.y1 - banner_.y0 + 6));
    s += grid_svg();
    s += roofs_svg();
    s += arrows_svg();
    s += points_svg();
    s += texts_svg();
    s += legend_marks_svg();
    s += "</svg>\n";
    return s;
  }

 private:
  // ------------------------------------------------------------ helpers
  TextBox box(std::string text, double x, double baseline, std::string role,
              double size = kFontSize, bool bold = false, std::string_view anchor = "start") const {
    double w = estimate_text_width(text, size, bold);
    double x0 = anchor == "end" ? x - w : anchor == "middle" ? x - w / 2 : x;
    return {std::move(text), x0, baseline - size, x0 + w, baseline + kDescent * size,
            std::move(role)};
  }

  // Shortens `text` with an ellipsis until it fits `width` at `size`.
  static std::string fit(std::string text, double width, double size, bool bold = false) {
    if (estimate_text_width(text, size, bold) <= width) return text;
    while (!text.empty() && estimate_text_width(text + "…", size, bold) > width) {
      text.pop_back();
      while (!text.empty() && (static_cast<unsigned char>(text.back()) & 0xC0) == 0x80)
        text.pop_back();
      if (!text.empty() && (static_cast<unsigned char>(text.back()) & 0xC0) == 0xC0)
        text.pop_back();
    }
    return text + "…";
  }

  double px(double x) const {
    return left_ + (std::log10(x) - lx0_) / (lx1_ - lx0_) * (right_ - left_);
  }
  double py(double y) const {
    double t = (std::log10(y) - ly0_) / (ly1_ - ly0_);
    // Lines may leave the plot (the clip path crops them); the clamp only keeps
    // coordinates finite and small.
    return bottom_ - std::clamp(t, -20.0, 20.0) * (bottom_ - top_);
  }
  double x_at(double pixel) const {
    return std::pow(10, lx0_ + (pixel - left_) / (right_ - left_) * (lx1_ - lx0_));
  }

  bool inside_plot(const TextBox& b) const {
    return b.x0 >= left_ + 2 && b.x1 <= right_ - 2 && b.y0 >= top_ + 2 && b.y1 <= bottom_ - 2;
  }

  // A label is free where it overlaps no text, marker, whisker or line.
  bool free(const TextBox& b, const Segment* own = nullptr) const {
    if (!inside_plot(b)) return false;
    for (const auto& other : layout_.texts)
      if (overlaps(b, other)) return false;
    for (const auto& p : points_) {
      TextBox marker{
          "", p.x - 6, std::min(p.y - 6, p.y_hi - 1), p.x + 6, std::max(p.y + 6, p.y_lo + 1), ""};
      if (overlaps(b, marker)) return false;
    }
    for (const auto& s : segments_)
      if (&s != own && crosses(s, b)) return false;
    return true;
  }

  // ------------------------------------------------------------ data
  void collect_keys() {
    std::set<std::string> families;
    for (const auto* k : spec_.kernels) families.insert(k->family);
    int i = 0;
    for (const auto& f : families) family_shape_[f] = kMarkerShapes[i++ % kMarkerShapes.size()];
    std::set<std::string> units;
    for (const auto* k : spec_.kernels) units.insert(k->unit);
    for (const auto& roof : spec_.roofs)
      if (!roof.memory)
        if (auto u = parse_compute_unit(roof.name))
          units.insert(std::string(compute_unit_name(*u)));
    units_.assign(units.begin(), units.end());
    for (const auto& roof : spec_.roofs) {
      layout_.roofs.push_back(roof.name + (roof.datasheet ? " datasheet" : " measured"));
      if (roof.datasheet) has_datasheet_ = true;
    }
  }

  // The ridge drawn for a compute roof: where it meets the best measured DRAM roof.
  std::optional<double> ridge_of(const Roof& roof) const {
    if (roof.memory) return std::nullopt;
    for (const auto& m : spec_.roofs)
      if (m.memory && !m.datasheet && m.name.starts_with("hbm")) return roof.value / m.value;
    return std::nullopt;
  }
  std::optional<double> datasheet_ridge_of(const Roof& roof) const {
    for (const auto& m : spec_.roofs)
      if (m.memory && m.datasheet && m.name == "hbm") return roof.value / m.value;
    return std::nullopt;
  }

  // Axes fitted to what is drawn: the points with their whiskers, the compute
  // roofs and their ridge points, with room above for the roof labels.
  void choose_ranges() {
    std::vector<double> xs, ys;
    for (const auto* k : spec_.kernels) {
      xs.push_back(intensity(k->flops, k->bytes_model));
      ys.push_back(k->achieved_flops_per_s);
      if (k->time_s->min > 0) ys.push_back(k->flops / k->time_s->min);
      if (k->time_s->max > 0) ys.push_back(k->flops / k->time_s->max);
    }
    for (const auto& roof : spec_.roofs) {
      if (roof.memory) continue;
      ys.push_back(roof.value);
      if (auto ridge = roof.datasheet ? datasheet_ridge_of(roof) : ridge_of(roof))
        xs.push_back(*ridge);
    }
    if (xs.empty()) {
      for (const auto& roof : spec_.roofs)
        if (roof.memory) ys.push_back(roof.value);
      xs = {0.1, 100};
    }
    // Without compute roofs (the memory view) the diagonals must cross the
    // points' intensities inside the plot.
    bool any_compute = false;
    for (const auto& roof : spec_.roofs) any_compute = any_compute || !roof.memory;
    if (!any_compute && !spec_.kernels.empty()) {
      auto [x_lo, x_hi] = std::minmax_element(xs.begin(), xs.end());
      for (const auto& roof : spec_.roofs) {
        ys.push_back(roof.value * *x_lo);
        ys.push_back(roof.value * *x_hi);
      }
    }
    if (ys.empty()) ys = {1e9, 1e12};
    auto [xmin, xmax] = std::minmax_element(xs.begin(), xs.end());
    auto [ymin, ymax] = std::minmax_element(ys.begin(), ys.end());
    lx0_ = std::log10(*xmin) - 0.3;
    lx1_ = std::log10(*xmax) + 0.3;
    if (lx1_ - lx0_ < 1.2) {
      double mid = (lx0_ + lx1_) / 2;
      lx0_ = mid - 0.6;
      lx1_ = mid + 0.6;
    }
    ly0_ = std::log10(*ymin) - 0.25;
    ly1_ = std::log10(*ymax) + 0.35;  // the roof labels sit above their lines
    if (ly1_ - ly0_ < 1.2) ly0_ = ly1_ - 1.2;

    // The left margin holds the y-axis title and the widest tick label.
    double widest = 0;
    for (double v : tick_values(ly0_, ly1_))
      widest = std::max(widest, estimate_text_width(y_tick_text(v), kFontSize));
    left_ = 10 + kFontSize + 8 + widest + 8;
    right_ = o_.width - kLegendWidth - 16;
    top_ = emulator_ ? 96 : 66;
    bottom_ = o_.height - 62;

    for (const auto* k : spec_.kernels) {
      double x = px(intensity(k->flops, k->bytes_model)), y = py(k->achieved_flops_per_s);
      double hi = k->time_s->min > 0 ? py(k->flops / k->time_s->min) : y;
      double lo = k->time_s->max > 0 ? py(k->flops / k->time_s->max) : y;
      points_.push_back({k, x, y, std::min(hi, y), std::max(lo, y)});
      layout_.points.push_back(k->name);
    }
  }

  // ------------------------------------------------------------ texts
  void add_text(TextBox b) { layout_.texts.push_back(std::move(b)); }

  void place_frame_texts() {
    const double width = o_.width - 2 * 12;
    add_text(box(fit(spec_.title, width, kTitleSize, true), 12, 24, "title", kTitleSize, true));
    std::string device = r_.context.device.name.empty() ? "unknown device" : r_.context.device.name;
    std::string date = r_.context.timestamp_utc.substr(0, 10);
    std::string sub =
        fmt::format("{}{} · backend {} · {}", device, spec_.note.empty() ? "" : " · " + spec_.note,
                    r_.context.backend, date.empty() ? "date unknown" : date);
    add_text(box(fit(sub, width, kFontSize), 12, 44, "subtitle"));
    if (emulator_) {
      banner_ = box("CPU emulator — not GPU performance", (left_ + right_) / 2, 76, "banner",
                    kBannerSize, true, "middle");
      add_text(banner_);
    }
    for (double v : tick_values(lx0_, lx1_))
      add_text(box(x_tick_text(v), px(v), bottom_ + 16, "x-tick", kFontSize, false, "middle"));
    for (double v : tick_values(ly0_, ly1_))
      add_text(box(y_tick_text(v), left_ - 6, py(v) + 4, "y-tick", kFontSize, false, "end"));
    add_text(box("Arithmetic intensity (FLOP/byte, against bytes_model)", (left_ + right_) / 2,
                 bottom_ + 36, "x-axis-title", kFontSize, false, "middle"));
    // Rotated -90 degrees about (cx, cy): the glyphs extend to the left of cx.
    std::string y_title = "Performance (FLOP/s)";
    double cx = 10 + kFontSize, cy = (top_ + bottom_) / 2;
    double h = estimate_text_width(y_title, kFontSize);
    add_text({y_title, cx - kFontSize, cy - h / 2, cx + kDescent * kFontSize, cy + h / 2,
              "y-axis-title"});
    if (spec_.kernels.empty())
      add_text(box("no timed kernels with FLOPs in this view", (left_ + right_) / 2,
                   (top_ + bottom_) / 2, "empty-note", kFontSize, false, "middle"));
  }

  // Roof lines first (labels avoid them), then their labels at the line's end.
  void place_roofs() {
    const double x_lo = std::pow(10, lx0_), x_hi = std::pow(10, lx1_);
    double top_compute = 0;
    for (const auto& roof : spec_.roofs)
      if (!roof.memory && !roof.datasheet) top_compute = std::max(top_compute, roof.value);
    for (const auto& roof : spec_.roofs) {
      DrawnRoof d{&roof, {}, std::nullopt};
      if (roof.memory) {
        // A diagonal ends where it meets the highest measured compute roof.
        double x_end = top_compute > 0 ? std::min(x_hi, top_compute / roof.value) : x_hi;
        d.line = {px(x_lo), py(roof.value * x_lo), px(x_end), py(roof.value * x_end)};
      } else {
        auto ridge = roof.datasheet ? datasheet_ridge_of(roof) : ridge_of(roof);
        double x_start = ridge ? std::clamp(*ridge, x_lo, x_hi) : x_lo;
        d.line = {px(x_start), py(roof.value), px(x_hi), py(roof.value)};
        if (ridge && !roof.datasheet && *ridge > x_lo && *ridge < x_hi) d.ridge = *ridge;
      }
      roofs_.push_back(d);
      segments_.push_back(d.line);
    }
    // Measured labels first: they are what a reader looks for.
    for (int pass = 0; pass < 2; ++pass)
      for (std::size_t i = 0; i < roofs_.size(); ++i) {
        const Roof& roof = *roofs_[i].roof;
        if (roof.datasheet != (pass == 1)) continue;
        auto placed = roof.memory ? place_diagonal_label(roof, segments_[i])
                                  : place_flat_label(roof, segments_[i]);
        if (placed) {
          add_text(*placed);
          roof_labels_.push_back({&roof, *placed});
        } else {
          layout_.unlabelled_roofs.push_back(roof.label());
        }
      }
  }

  std::optional<TextBox> place_flat_label(const Roof& roof, const Segment& line) {
    std::string text = roof.label();
    double w = estimate_text_width(text, kFontSize);
    for (double shift = 0; line.x1 - 4 - shift - w >= line.x0 - w / 2; shift += 16)
      for (double dy : {-3.0, kFontSize + 4})  // just above the line, then just below it
      {
        TextBox b = box(text, line.x1 - 4 - shift - w, line.y0 + dy, "roof-label");
        if (free(b, &line)) return b;
      }
    return std::nullopt;
  }

  std::optional<TextBox> place_diagonal_label(const Roof& roof, const Segment& line) {
    std::string text = roof.label();
    double w = estimate_text_width(text, kFontSize);
    // The visible end of the line: where it leaves the plot at the top or right.
    double end = line.x1;
    if (line.y1 < top_ && line.y1 != line.y0)
      end = line.x0 + (top_ - line.y0) / (line.y1 - line.y0) * (line.x1 - line.x0);
    auto y_on = [&](double x) {
      return line.y0 + (x - line.x0) / (line.x1 - line.x0) * (line.y1 - line.y0);
    };
    for (double x1 = std::min(end, right_ - 2); x1 - w > left_; x1 -= 14) {
      // Above the line: it is highest (smallest y) under the label's right end.
      TextBox above = box(text, x1 - w, y_on(x1) - 4, "roof-label");
      above.y1 = std::min(above.y1, y_on(x1) - 1);
      if (free(above, &line)) return above;
      // Below it: lowest under the label's left end.
      TextBox below = box(text, x1 - w, y_on(x1 - w) + kFontSize + 3, "roof-label");
      if (free(below, &line)) return below;
    }
    return std::nullopt;
  }

  // Greedy placement, nearest free candidate first: beside the point, then
  // rings further out (with a leader line); a label that finds no room is
  // left to the point's hover title (listed in `hidden`).
  void place_point_labels() {
    std::vector<std::size_t> order(points_.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(),
              [&](auto a, auto b) { return points_[a].y < points_[b].y; });
    for (std::size_t i : order) {
      const auto& p = points_[i];
      const std::string& text = p.kernel->name;
      double w = estimate_text_width(text, kFontSize);
      std::optional<TextBox> placed;
      // Within about 230 px: a label further out reads as belonging to another point.
      for (int column = 0; column < 2 && !placed; ++column) {
        double reach = column * (w + 12);
        for (int ring = 0; ring < 16 && !placed; ++ring) {
          double d = ring * kLineHeight;
          const std::array<std::pair<double, double>, 6> candidates{
              {{p.x + 9 + reach, p.y + 4 - d},
               {p.x + 9 + reach, p.y + 4 + d},
               {p.x - 9 - w - reach, p.y + 4 - d},
               {p.x - 9 - w - reach, p.y + 4 + d},
               {p.x - w / 2, p.y_hi - 8 - d},
               {p.x - w / 2, p.y_lo + 18 + d}}};
          for (auto [x, baseline] : candidates) {
            TextBox b = box(text, x, baseline, "point-label");
            if (free(b)) {
              placed = b;
              break;
            }
          }
        }
      }
      if (placed) {
        add_text(*placed);
        point_labels_.push_back({i, *placed});
      } else {
        layout_.hidden.push_back(text);
      }
    }
  }

  void place_legend() {
    double x = right_ + 16, y = top_ + 4;
    const double width = o_.width - x - 6;
    auto heading = [&](std::string text) {
      y += 6;
      add_text(box(fit(std::move(text), width, kFontSize, true), x, y + 10, "legend-heading",
                   kFontSize, true));
      y += 18;
    };
    auto entry = [&](std::string text, LegendMark mark) {
      if (y + 14 > bottom_) return;
      mark.y = y;
      legend_marks_.push_back(mark);
      add_text(box(fit(std::move(text), width - 20, kFontSize), x + 20, y + 10, "legend"));
      y += 17;
    };
    if (!family_shape_.empty()) {
      heading("Family (marker)");
      for (const auto& [family, shape] : family_shape_)
        entry(family, {LegendMark::marker, std::string(shape), "#cccccc", 0});
    }
    if (!units_.empty()) {
      heading("Compute unit (colour)");
      for (const auto& unit : units_) {
        auto u = parse_compute_unit(unit);
        entry(u ? fmt::format("{} ({})", unit, compute_ceiling_name(*u)) : unit,
              {LegendMark::swatch, "", unit_colour(unit), 0});
      }
    }
    heading("Lines");
    entry("measured roof", {LegendMark::line, "", std::string(kHbmColour), 0});
    if (has_datasheet_)
      entry("datasheet roof", {LegendMark::dotted, "", std::string(kHbmColour), 0});
    bool l2 = false;
    for (const auto& roof : spec_.roofs) l2 = l2 || roof.name.starts_with("l2");
    if (l2) entry("L2 roof", {LegendMark::line, "", std::string(kL2Colour), 0});
    bool ridges = false;
    for (const auto& d : roofs_) ridges = ridges || d.ridge.has_value();
    if (ridges) entry("ridge (DRAM meets roof)", {LegendMark::ridge, "", "#444444", 0});
    if (!arrows().empty()) entry("baseline → rung", {LegendMark::arrow, "", "#333333", 0});
    entry("whisker: min–max over reps", {LegendMark::whisker, "", "#333333", 0});
    // A roof whose label found no room on the plot is named here instead.
    if (!layout_.unlabelled_roofs.empty()) {
      heading("Other roofs (no room)");
      for (const auto& d : roofs_) {
        const Roof& roof = *d.roof;
        if (std::find(layout_.unlabelled_roofs.begin(), layout_.unlabelled_roofs.end(),
                      roof.label()) == layout_.unlabelled_roofs.end())
          continue;
        entry(roof.label(),
              {roof.datasheet ? LegendMark::dotted : LegendMark::line, "", roof.colour, 0});
      }
    }
  }

  void place_footnote() {
    std::string s;
    if (!layout_.unplotted.empty())
      s += fmt::format("{} timed kernel(s) with 0 FLOP are not on log axes (see the report). ",
                       layout_.unplotted.size());
    if (!layout_.hidden.empty())
      s += fmt::format("{} label(s) did not fit: hover a point for its name.",
                       layout_.hidden.size());
    if (!s.empty()) add_text(box(fit(s, o_.width - 24, kFontSize), 12, o_.height - 8, "footnote"));
  }

  // ------------------------------------------------------------ drawing
  std::vector<std::pair<std::size_t, std::size_t>> arrows() const {
    std::vector<std::pair<std::size_t, std::size_t>> out;  // from (baseline), to (rung)
    for (std::size_t to = 0; to < points_.size(); ++to) {
      const auto& k = *points_[to].kernel;
      if (k.baseline.empty()) continue;
      for (std::size_t from = 0; from < points_.size(); ++from)
        if (points_[from].kernel->name == k.baseline && points_[from].kernel->shape == k.shape)
          out.emplace_back(from, to);
    }
    return out;
  }

  std::string grid_svg() const {
    std::string s = "<g class=\"axes\" stroke=\"#999\" stroke-width=\"1\">\n";
    s += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\"/>\n",
                     num(left_), num(top_), num(right_ - left_), num(bottom_ - top_));
    for (double v : tick_values(lx0_, lx1_))
      s += fmt::format(
          "<line class=\"grid\" x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" "
          "stroke=\"#ececec\"/>\n",
          num(px(v)), num(top_), num(px(v)), num(bottom_));
    for (double v : tick_values(ly0_, ly1_))
      s += fmt::format(
          "<line class=\"grid\" x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" "
          "stroke=\"#ececec\"/>\n",
          num(left_), num(py(v)), num(right_), num(py(v)));
    s += "</g>\n";
    return s;
  }

  std::string roofs_svg() const {
    std::string s = "<g class=\"roofs\" clip-path=\"url(#plot-area-" + id_ + ")\" fill=\"none\">\n";
    for (const auto& d : roofs_) {
      const Roof& roof = *d.roof;
      // Measured roofs keep the classes scripts read; datasheet roofs have their own.
      std::string cls = roof.datasheet ? (roof.memory ? "datasheet-roof memory-datasheet"
                                                      : "datasheet-roof compute-datasheet")
                                       : (roof.memory ? "memory-ceiling" : "compute-ceiling");
      s += fmt::format(
          "<line class=\"{}\" data-name=\"{}\" x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" "
          "stroke=\"{}\" stroke-width=\"{}\"{}><title>{}</title></line>\n",
          cls, xml_escape(roof.name), num(d.line.x0), num(d.line.y0), num(d.line.x1),
          num(d.line.y1), roof.colour, roof.datasheet ? "1.6" : "2.2",
          roof.datasheet ? fmt::format(" stroke-dasharray=\"{}\"", kDatasheetDash) : "",
          xml_escape(roof.label()));
      if (d.ridge)
        s += fmt::format(
            "<circle class=\"ridge\" cx=\"{}\" cy=\"{}\" r=\"3.5\" fill=\"#ffffff\" "
            "stroke=\"{}\" stroke-width=\"1.5\"><title>ridge of {}: {} FLOP/B</title></circle>\n",
            num(d.line.x0), num(d.line.y0), roof.colour, xml_escape(roof.name),
            fmt::format("{:.3g}", *d.ridge));
    }
    s += "</g>\n";
    return s;
  }

  std::string arrows_svg() const {
    // "fusion-arrow" is the class older scripts count; the arrow is a ladder's rung.
    std::string s = "<g class=\"arrows\" stroke=\"#333\" stroke-width=\"1.2\" fill=\"none\">\n";
    for (auto [from_i, to_i] : arrows()) {
      const auto &from = points_[from_i], &to = points_[to_i];
      double dx = to.x - from.x, dy = to.y - from.y, len = std::hypot(dx, dy);
      if (len < 14) continue;
      // Stop short of both markers so the arrowhead stays visible.
      double ux = dx / len, uy = dy / len;
      s += fmt::format(
          "<line class=\"rung-arrow fusion-arrow\" x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" "
          "marker-end=\"url(#arrowhead-{})\"><title>{} → {}: {:.2f}× faster</title></line>\n",
          num(from.x + ux * 7), num(from.y + uy * 7), num(to.x - ux * 8), num(to.y - uy * 8), id_,
          xml_escape(from.kernel->name), xml_escape(to.kernel->name),
          from.kernel->time_s->median / to.kernel->time_s->median);
    }
    s += "</g>\n";
    return s;
  }

  std::string points_svg() const {
    std::string s = "<g class=\"points\">\n";
    for (const auto& p : points_) {
      const auto& k = *p.kernel;
      if (p.y_lo - p.y_hi > 2)
        s += fmt::format(
            "<path class=\"whisker\" d=\"M{},{} L{},{} M{},{} L{},{} M{},{} L{},{}\" "
            "stroke=\"#333\" stroke-width=\"1\" fill=\"none\"/>\n",
            num(p.x), num(p.y_hi), num(p.x), num(p.y_lo), num(p.x - 3), num(p.y_hi), num(p.x + 3),
            num(p.y_hi), num(p.x - 3), num(p.y_lo), num(p.x + 3), num(p.y_lo));
      s += fmt::format(
          "<path class=\"kernel-point\" data-name=\"{}\" d=\"{}\" fill=\"{}\" stroke=\"#000\" "
          "stroke-width=\"0.7\"><title>{} ({}, {} on {}, {}): {:.3g} FLOP/B, {}FLOP/s "
          "(min–max {}–{}){}</title></path>\n",
          xml_escape(k.name), marker_path(family_shape_.at(k.family), p.x, p.y, 4.5),
          unit_colour(k.unit), xml_escape(k.name), xml_escape(k.family), xml_escape(k.precision),
          xml_escape(k.unit), xml_escape(shape_text(k.shape)), intensity(k.flops, k.bytes_model),
          si(k.achieved_flops_per_s), k.time_s->max > 0 ? si(k.flops / k.time_s->max) : "n/a",
          k.time_s->min > 0 ? si(k.flops / k.time_s->min) : "n/a",
          k.pct_of_roof ? fmt::format(", {:.0f}% of roof", *k.pct_of_roof) : "");
    }
    s += "</g>\n";
    return s;
  }

  std::string text_svg(const TextBox& b, std::string_view cls, std::string_view fill,
                       double size = kFontSize, bool bold = false) const {
    return fmt::format("<text class=\"{}\" x=\"{}\" y=\"{}\" fill=\"{}\"{}{}>{}</text>\n", cls,
                       num(b.x0), num(b.y1 - kDescent * size), fill,
                       size != kFontSize ? fmt::format(" font-size=\"{}\"", num(size)) : "",
                       bold ? " font-weight=\"bold\"" : "", xml_escape(b.text));
  }

  std::string texts_svg() const {
    std::string s = "<g class=\"labels\">\n";
    for (const auto& [roof, b] : roof_labels_)
      s += text_svg(b, roof->datasheet ? "ceiling-label datasheet-label" : "ceiling-label",
                    roof->memory ? "#333333" : roof->colour);
    for (const auto& [i, b] : point_labels_) {
      const auto& p = points_[i];
      double cx = std::clamp(p.x, b.x0, b.x1), cy = std::clamp(p.y, b.y0, b.y1);
      if (std::hypot(cx - p.x, cy - p.y) > 14)
        s += fmt::format(
            "<line class=\"leader\" x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" "
            "stroke=\"#aaa\" stroke-width=\"0.8\"/>\n",
            num(p.x), num(p.y), num(cx), num(cy));
      s += text_svg(b, "point-label", "#222222");
    }
    s += "</g>\n";
    for (const auto& b : layout_.texts) {
      if (b.role == "title")
        s += text_svg(b, "title", "#111111", kTitleSize, true);
      else if (b.role == "subtitle" || b.role == "footnote" || b.role == "empty-note")
        s += text_svg(b, b.role, "#555555");
      else if (b.role == "banner")
        s += text_svg(b, "emulator-banner-text", "#ffffff", kBannerSize, true);
      else if (b.role == "x-tick")
        s += text_svg(b, "tick x-tick", "#333333");
      else if (b.role == "y-tick")
        s += text_svg(b, "tick y-tick", "#333333");
      else if (b.role == "legend-heading")
        s += text_svg(b, "legend-heading", "#222222", kFontSize, true);
      else if (b.role == "legend")
        s += text_svg(b, "legend-entry", "#222222");
      else if (b.role == "x-axis-title")
        s += text_svg(b, "axis-title", "#222222");
      else if (b.role == "y-axis-title")
        s += fmt::format(
            "<text class=\"axis-title\" x=\"{0}\" y=\"{1}\" text-anchor=\"middle\" "
            "transform=\"rotate(-90 {0} {1})\" fill=\"#222222\">{2}</text>\n",
            num(b.x1 - kDescent * kFontSize), num((b.y0 + b.y1) / 2), xml_escape(b.text));
    }
    return s;
  }

  struct LegendMark {
    enum Kind { marker, swatch, line, dotted, ridge, arrow, whisker } kind;
    std::string shape, colour;
    double y;
  };

  std::string legend_marks_svg() const {
    double x = right_ + 16;
    std::string s = "<g class=\"legend\">\n";
    for (const auto& m : legend_marks_) {
      double cy = m.y + 6;
      switch (m.kind) {
        case LegendMark::marker:
          s += fmt::format("<path d=\"{}\" fill=\"{}\" stroke=\"#000\" stroke-width=\"0.6\"/>\n",
                           marker_path(m.shape, x + 7, cy, 4.5), m.colour);
          break;
        case LegendMark::swatch:
          s += fmt::format(
              "<rect x=\"{}\" y=\"{}\" width=\"14\" height=\"10\" fill=\"{}\" "
              "stroke=\"#000\" stroke-width=\"0.4\"/>\n",
              num(x), num(cy - 5), m.colour);
          break;
        case LegendMark::line:
        case LegendMark::dotted:
          s += fmt::format(
              "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\" "
              "stroke-width=\"2\"{}/>\n",
              num(x), num(cy), num(x + 16), num(cy), m.colour,
              m.kind == LegendMark::dotted ? fmt::format(" stroke-dasharray=\"{}\"", kDatasheetDash)
                                           : "");
          break;
        case LegendMark::ridge:
          s += fmt::format(
              "<circle cx=\"{}\" cy=\"{}\" r=\"3.5\" fill=\"#fff\" stroke=\"{}\" "
              "stroke-width=\"1.5\"/>\n",
              num(x + 7), num(cy), m.colour);
          break;
        case LegendMark::arrow:
          s += fmt::format(
              "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\" "
              "marker-end=\"url(#arrowhead-{})\"/>\n",
              num(x), num(cy), num(x + 16), num(cy), m.colour, id_);
          break;
        case LegendMark::whisker:
          s += fmt::format(
              "<path d=\"M{0},{1} L{0},{2} M{3},{1} L{4},{1} M{3},{2} L{4},{2}\" "
              "stroke=\"{5}\" fill=\"none\"/>\n",
              num(x + 7), num(cy - 6), num(cy + 6), num(x + 4), num(x + 10), m.colour);
          break;
      }
    }
    s += "</g>\n";
    return s;
  }

  struct DrawnRoof {
    const Roof* roof;
    Segment line;
    std::optional<double> ridge;  // FLOP/B, drawn at the line's start
  };

  const Results& r_;
  ChartOptions o_;
  ViewSpec spec_;
  std::string id_;
  bool emulator_ = false, has_datasheet_ = false;
  double left_ = 0, right_ = 0, top_ = 0, bottom_ = 0;
  double lx0_ = -1, lx1_ = 3, ly0_ = 9, ly1_ = 13;  // log10 of the axis ends
  std::vector<PlotPoint> points_;
  std::vector<DrawnRoof> roofs_;
  std::vector<Segment> segments_;
  std::map<std::string, std::string_view> family_shape_;
  std::vector<std::string> units_;
  std::vector<std::pair<const Roof*, TextBox>> roof_labels_;
  std::vector<std::pair<std::size_t, TextBox>> point_labels_;
  std::vector<LegendMark> legend_marks_;
  TextBox banner_;
  ChartLayout layout_;
};

}  // namespace

double estimate_text_width(std::string_view text, double font_size, bool bold) {
  std::size_t code_points = 0;
  for (char ch : text)
    if ((static_cast<unsigned char>(ch) & 0xC0) != 0x80) ++code_points;
  return (bold ? 0.68 : 0.62) * font_size * static_cast<double>(code_points);
}

bool valid_view_name(std::string_view view) {
  return view == "overview" || view == "memory" || view == "simt" || view == "tensor" ||
         (view.starts_with("family:") && view.size() > 7);
}

std::vector<ChartView> chart_views(const Results& results) {
  std::vector<ChartView> views;
  auto add = [&](std::string id, std::string question) {
    ViewSpec spec = view_spec(results, id);
    if (spec.kernels.empty()) return;
    views.push_back({std::move(id), spec.title, std::move(question)});
  };
  add("memory", "Which kernels are limited by memory, and how close do they get to HBM and L2?");
  add("simt", "How close do the SIMT kernels come to the FP32 and FP64 pipes?");
  add("tensor", "How close does each tensor-core kernel come to the roof of its precision?");
  for (const auto& family : ladder_families(results))
    add("family:" + family,
        fmt::format("What does each rung of the {} ladder buy over its baseline?", family));
  return views;
}

ChartLayout layout_roofline_chart(const Results& results, const ChartOptions& options) {
  return Chart(results, options).layout();
}

std::string render_roofline_svg(const Results& results, const ChartOptions& options) {
  return Chart(results, options).render();
}

}  // namespace rl::roofline
