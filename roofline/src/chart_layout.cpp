#include "chart_layout.hpp"

#include "chart_hierarchy.hpp"
#include "chart_labels.hpp"

#include "rl/roofline/model.hpp"
#include "rl/roofline/text.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <set>
#include <stdexcept>

#include <fmt/format.h>

namespace rl::roofline::chart {

namespace {

constexpr double kLegendWidth = 200;

const std::array<std::string_view, 8> kMarkerShapes{"circle", "square", "triangle", "diamond",
                                                    "down",   "cross",  "star",     "hexagon"};

std::string y_tick_text(double v) {
  std::string text = si(v, 2);
  text.erase(std::remove(text.begin(), text.end(), ' '), text.end());
  return text;
}

std::string x_tick_text(double v) {
  if (v < 1000) return fmt::format("{:g}", std::stod(fmt::format("{:.2g}", v)));
  return y_tick_text(v);
}

// Fills a PlacedChart in order: keys, axes, frame texts, roofs and their
// labels, point labels, legend, footnote.  Each label is placed against
// everything placed before it.
class Placer {
 public:
  Placer(const Results& results, PlacedChart& placed) : r(results), c(placed) {}

  void place() {
    collect_keys();
    choose_ranges();
    place_frame_texts();
    place_roofs();
    place_point_labels(c);
    place_legend();
    place_footnote();
  }

 private:
  void collect_keys() {
    // The hierarchy view's markers are levels and its colours kernels: no
    // family or unit key (its kernels are named on the plot).
    const bool by_level = !c.spec.hierarchy.empty();
    std::set<std::string> families;
    for (const auto* k : c.spec.kernels)
      if (!by_level) families.insert(k->family);
    int i = 0;
    for (const auto& f : families) c.family_shape[f] = kMarkerShapes[i++ % kMarkerShapes.size()];
    std::set<std::string> units;
    for (const auto* k : c.spec.kernels)
      if (!by_level) units.insert(std::string(compute_unit_name(k->unit)));
    for (const auto& roof : c.spec.roofs)
      if (!roof.memory && !by_level)
        if (auto u = parse_compute_unit(roof.name))
          units.insert(std::string(compute_unit_name(*u)));
    c.units.assign(units.begin(), units.end());
    for (const auto& roof : c.spec.roofs) {
      c.layout.roofs.push_back(roof.name + (roof.datasheet ? " datasheet" : " measured"));
      if (roof.datasheet) c.has_datasheet = true;
    }
  }

  // The ridge drawn for a compute roof: where it meets the best measured DRAM roof.
  std::optional<double> ridge_of(const Roof& roof) const {
    if (roof.memory) return std::nullopt;
    for (const auto& m : c.spec.roofs)
      if (m.memory && !m.datasheet && m.name.starts_with("hbm")) return roof.value / m.value;
    return std::nullopt;
  }
  std::optional<double> datasheet_ridge_of(const Roof& roof) const {
    for (const auto& m : c.spec.roofs)
      if (m.memory && m.datasheet && m.name == "hbm") return roof.value / m.value;
    return std::nullopt;
  }

  // What each point is before it has a position: a kernel at an intensity.
  struct Mark {
    const KernelResult* kernel;
    double intensity;
    std::string_view shape;
    std::string colour;
    const LevelPoint* level;
    bool anchor;
  };

  // One mark per kernel at bytes_model's intensity, or in the hierarchy view
  // one per level it has, its label beside the last (DRAM: usually the
  // highest intensity).
  std::vector<Mark> marks() const {
    std::vector<Mark> out;
    for (const auto& h : c.spec.hierarchy)
      for (std::size_t i = 0; i < h.levels.size(); ++i) {
        const LevelPoint& l = h.levels[i];
        out.push_back(
            {h.kernel, l.intensity, level_marker(l.level), h.colour, &l, i + 1 == h.levels.size()});
      }
    if (!c.spec.hierarchy.empty()) return out;
    for (const auto* k : c.spec.kernels)
      out.push_back({k, intensity(k->flops, k->bytes_model), c.family_shape.at(k->family),
                     unit_colour(compute_unit_name(k->unit)), nullptr, true});
    return out;
  }

  // Axes fitted to what is drawn: the points with their whiskers, the compute
  // roofs and their ridge points, with room above for the roof labels.
  void choose_ranges() {
    const std::vector<Mark> drawn = marks();
    const bool whiskers = c.spec.whiskers;
    std::vector<double> xs, ys;
    for (const Mark& m : drawn) {
      const KernelResult* k = m.kernel;
      xs.push_back(m.intensity);
      ys.push_back(k->achieved_flops_per_s);
      if (whiskers && k->time_s->min > 0) ys.push_back(k->flops / k->time_s->min);
      if (whiskers && k->time_s->max > 0) ys.push_back(k->flops / k->time_s->max);
    }
    for (const auto& roof : c.spec.roofs) {
      if (roof.memory) continue;
      ys.push_back(roof.value);
      if (auto ridge = roof.datasheet ? datasheet_ridge_of(roof) : ridge_of(roof))
        xs.push_back(*ridge);
    }
    if (xs.empty()) {
      for (const auto& roof : c.spec.roofs)
        if (roof.memory) ys.push_back(roof.value);
      xs = {0.1, 100};
    }
    // Without compute roofs (the memory view) the diagonals must cross the
    // points' intensities inside the plot.
    bool any_compute = false;
    for (const auto& roof : c.spec.roofs) any_compute = any_compute || !roof.memory;
    if (!any_compute && !c.spec.kernels.empty()) {
      auto [x_lo, x_hi] = std::minmax_element(xs.begin(), xs.end());
      for (const auto& roof : c.spec.roofs) {
        ys.push_back(roof.value * *x_lo);
        ys.push_back(roof.value * *x_hi);
      }
    }
    if (ys.empty()) ys = {1e9, 1e12};
    auto [xmin, xmax] = std::minmax_element(xs.begin(), xs.end());
    auto [ymin, ymax] = std::minmax_element(ys.begin(), ys.end());
    c.lx0 = std::log10(*xmin) - 0.3;
    c.lx1 = std::log10(*xmax) + 0.3;
    if (c.lx1 - c.lx0 < 1.2) {
      double mid = (c.lx0 + c.lx1) / 2;
      c.lx0 = mid - 0.6;
      c.lx1 = mid + 0.6;
    }
    c.ly0 = std::log10(*ymin) - 0.25;
    c.ly1 = std::log10(*ymax) + 0.35;  // the roof labels sit above their lines
    if (c.ly1 - c.ly0 < 1.2) c.ly0 = c.ly1 - 1.2;

    // The left margin holds the y-axis title and the widest tick label.
    double widest = 0;
    for (double v : tick_values(c.ly0, c.ly1))
      widest = std::max(widest, estimate_text_width(y_tick_text(v), kFontSize));
    c.left = 10 + kFontSize + 8 + widest + 8;
    c.right = c.options.width - kLegendWidth - 16;
    c.top = c.emulator ? 96 : 66;
    c.bottom = c.options.height - 62;

    for (const Mark& m : drawn) {
      const KernelResult* k = m.kernel;
      double x = c.px(m.intensity), y = c.py(k->achieved_flops_per_s);
      double hi = whiskers && k->time_s->min > 0 ? c.py(k->flops / k->time_s->min) : y;
      double lo = whiskers && k->time_s->max > 0 ? c.py(k->flops / k->time_s->max) : y;
      c.points.push_back(
          {k, x, y, std::min(hi, y), std::max(lo, y), m.shape, m.colour, m.level, m.anchor});
      c.layout.points.push_back(k->name);
      // A kernel's levels follow one another: join each to the one before.
      if (m.level && c.points.size() > 1) {
        const PlotPoint& before = c.points[c.points.size() - 2];
        if (before.kernel == k) c.joins.push_back({{before.x, before.y, x, y}, m.colour});
      }
    }
  }

  void add_text(TextBox b) { c.layout.texts.push_back(std::move(b)); }

  void place_frame_texts() {
    const double width = c.options.width - 2 * 12;
    add_text(text_box(fit_text(c.spec.title, width, kTitleSize, true), 12, 24, "title", kTitleSize,
                      true));
    std::string device = r.context.device.name.empty() ? "unknown device" : r.context.device.name;
    std::string date = r.context.timestamp_utc.substr(0, 10);
    std::string sub = fmt::format(
        "{}{} · backend {} · {}", device, c.spec.note.empty() ? "" : " · " + c.spec.note,
        to_string(r.context.backend), date.empty() ? "date unknown" : date);
    add_text(text_box(fit_text(sub, width, kFontSize), 12, 44, "subtitle"));
    if (c.emulator) {
      c.banner = text_box("CPU emulator — not GPU performance", (c.left + c.right) / 2, 76,
                          "banner", kBannerSize, true, "middle");
      add_text(c.banner);
    }
    for (double v : tick_values(c.lx0, c.lx1))
      add_text(
          text_box(x_tick_text(v), c.px(v), c.bottom + 16, "x-tick", kFontSize, false, "middle"));
    for (double v : tick_values(c.ly0, c.ly1))
      add_text(
          text_box(y_tick_text(v), c.left - 6, c.py(v) + 4, "y-tick", kFontSize, false, "end"));
    add_text(text_box(c.spec.x_title, (c.left + c.right) / 2, c.bottom + 36, "x-axis-title",
                      kFontSize, false, "middle"));
    // Rotated -90 degrees about (cx, cy): the glyphs extend to the left of cx.
    std::string y_title = "Performance (FLOP/s)";
    double cx = 10 + kFontSize, cy = (c.top + c.bottom) / 2;
    double h = estimate_text_width(y_title, kFontSize);
    add_text({y_title, cx - kFontSize, cy - h / 2, cx + kDescent * kFontSize, cy + h / 2,
              "y-axis-title"});
    if (c.spec.kernels.empty())
      add_text(text_box(fit_text(c.spec.empty_note, c.right - c.left - 8, kFontSize),
                        (c.left + c.right) / 2, (c.top + c.bottom) / 2, "empty-note", kFontSize,
                        false, "middle"));
  }

  // Roof lines first (labels avoid them), then their labels at the line's end.
  void place_roofs() {
    const double x_lo = std::pow(10, c.lx0), x_hi = std::pow(10, c.lx1);
    double top_compute = 0;
    for (const auto& roof : c.spec.roofs)
      if (!roof.memory && !roof.datasheet) top_compute = std::max(top_compute, roof.value);
    for (const auto& roof : c.spec.roofs) {
      DrawnRoof d{&roof, {}, std::nullopt};
      if (roof.memory) {
        // A diagonal ends where it meets the highest measured compute roof.
        double x_end = top_compute > 0 ? std::min(x_hi, top_compute / roof.value) : x_hi;
        d.line = {c.px(x_lo), c.py(roof.value * x_lo), c.px(x_end), c.py(roof.value * x_end)};
      } else {
        auto ridge = roof.datasheet ? datasheet_ridge_of(roof) : ridge_of(roof);
        double x_start = ridge ? std::clamp(*ridge, x_lo, x_hi) : x_lo;
        d.line = {c.px(x_start), c.py(roof.value), c.px(x_hi), c.py(roof.value)};
        if (ridge && !roof.datasheet && *ridge > x_lo && *ridge < x_hi) d.ridge = *ridge;
      }
      c.roofs.push_back(d);
      c.segments.push_back(d.line);
    }
    place_roof_labels(c);
  }

  void place_legend() {
    double x = c.right + 16, y = c.top + 4;
    const double width = c.options.width - x - 6;
    auto heading = [&](std::string text) {
      y += 6;
      add_text(text_box(fit_text(std::move(text), width, kFontSize, true), x, y + 10,
                        "legend-heading", kFontSize, true));
      y += 18;
    };
    auto entry = [&](std::string text, LegendMark mark) {
      if (y + 14 > c.bottom) return;
      mark.y = y;
      c.legend_marks.push_back(mark);
      add_text(
          text_box(fit_text(std::move(text), width - 20, kFontSize), x + 20, y + 10, "legend"));
      y += 17;
    };
    if (!c.family_shape.empty()) {
      heading("Family (marker)");
      for (const auto& [family, shape] : c.family_shape)
        entry(family, {LegendMark::marker, std::string(shape), "#cccccc", 0});
    }
    place_level_keys(heading, entry);
    if (!c.units.empty()) {
      heading("Compute unit (colour)");
      for (const auto& unit : c.units) {
        auto u = parse_compute_unit(unit);
        entry(u ? fmt::format("{} ({})", unit, compute_ceiling_name(*u)) : unit,
              {LegendMark::swatch, "", unit_colour(unit), 0});
      }
    }
    heading("Lines");
    entry("measured roof", {LegendMark::line, "", std::string(kHbmColour), 0});
    if (c.has_datasheet)
      entry("datasheet roof", {LegendMark::dotted, "", std::string(kHbmColour), 0});
    bool l2 = false, l1 = false;
    for (const auto& roof : c.spec.roofs) {
      l2 = l2 || roof.name.starts_with("l2");
      l1 = l1 || roof.name.starts_with("smem");
    }
    if (l2) entry("L2 roof", {LegendMark::line, "", std::string(kL2Colour), 0});
    if (l1) entry("L1 / shared roof", {LegendMark::line, "", std::string(kL1Colour), 0});
    if (!c.joins.empty()) entry("one kernel's levels", {LegendMark::join, "", "#333333", 0});
    bool ridges = false;
    for (const auto& d : c.roofs) ridges = ridges || d.ridge.has_value();
    if (ridges) entry("ridge (DRAM meets roof)", {LegendMark::ridge, "", "#444444", 0});
    if (!c.arrows().empty()) entry("baseline → rung", {LegendMark::arrow, "", "#333333", 0});
    if (c.spec.whiskers)
      entry("whisker: min–max over reps", {LegendMark::whisker, "", "#333333", 0});
    // A roof whose label found no room on the plot is named here instead.
    if (!c.layout.unlabelled_roofs.empty()) {
      heading("Other roofs (no room)");
      for (const auto& d : c.roofs) {
        const Roof& roof = *d.roof;
        if (std::find(c.layout.unlabelled_roofs.begin(), c.layout.unlabelled_roofs.end(),
                      roof.label()) == c.layout.unlabelled_roofs.end())
          continue;
        entry(roof.label(),
              {roof.datasheet ? LegendMark::dotted : LegendMark::line, "", roof.colour, 0});
      }
    }
  }

  // The hierarchy view's key: a marker per level drawn, and the hollow
  // marker of a level the cost model stands in for.
  template <typename Heading, typename Entry>
  void place_level_keys(Heading& heading, Entry& entry) {
    bool any[3] = {false, false, false}, modelled = false;
    static const char* const kLevels[3] = {"L1", "L2", "DRAM"};
    static const char* const kKeys[3] = {"L1 / shared (l1_bytes)", "L2 (l2_bytes)",
                                         "DRAM (read + write)"};
    for (const auto& p : c.points) {
      if (!p.level) continue;
      for (int i = 0; i < 3; ++i) any[i] = any[i] || p.level->level == kLevels[i];
      modelled = modelled || !p.level->counted;
    }
    if (!any[0] && !any[1] && !any[2]) return;
    heading("Memory level (marker)");
    for (int i = 0; i < 3; ++i)
      if (any[i])
        entry(kKeys[i], {LegendMark::marker, std::string(level_marker(kLevels[i])), "#cccccc", 0});
    if (modelled) entry("hollow: modelled", {LegendMark::hollow, "circle", "#333333", 0});
  }

  void place_footnote() {
    std::string s;
    if (!c.layout.unplotted.empty())
      s += fmt::format("{} timed kernel(s) with 0 FLOP are not on log axes (see the report). ",
                       c.layout.unplotted.size());
    if (!c.spec.label_note.empty()) s += c.spec.label_note + " ";
    if (c.labels_without_room > 0)
      s += fmt::format("{} label(s) did not fit: hover a point for its name.",
                       c.labels_without_room);
    while (s.ends_with(' ')) s.pop_back();
    if (!s.empty())
      add_text(text_box(fit_text(s, c.options.width - 24, kFontSize), 12, c.options.height - 8,
                        "footnote"));
  }

  const Results& r;
  PlacedChart& c;
};

}  // namespace

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

double PlacedChart::px(double x) const {
  return left + (std::log10(x) - lx0) / (lx1 - lx0) * (right - left);
}

double PlacedChart::py(double y) const {
  double t = (std::log10(y) - ly0) / (ly1 - ly0);
  // Lines may leave the plot (the clip path crops them); the clamp only keeps
  // coordinates finite and small.
  return bottom - std::clamp(t, -20.0, 20.0) * (bottom - top);
}

std::vector<std::pair<std::size_t, std::size_t>> PlacedChart::arrows() const {
  std::vector<std::pair<std::size_t, std::size_t>> out;  // from (baseline), to (rung)
  if (!spec.rung_arrows) return out;
  for (std::size_t to = 0; to < points.size(); ++to) {
    const auto& k = *points[to].kernel;
    if (k.baseline.empty()) continue;
    for (std::size_t from = 0; from < points.size(); ++from)
      if (points[from].kernel->name == k.baseline && points[from].kernel->shape == k.shape)
        out.emplace_back(from, to);
  }
  return out;
}

PlacedChart place_chart(const Results& results, const ChartOptions& options) {
  if (!valid_view_name(options.view))
    throw std::invalid_argument(fmt::format(
        "unknown chart view '{}' (overview, memory, simt, tensor, hierarchy or family:NAME)",
        options.view));
  PlacedChart c;
  c.options = options;
  c.spec = view_spec(results, c.options.view);
  for (char ch : c.options.view) c.id += std::isalnum(static_cast<unsigned char>(ch)) ? ch : '-';
  c.emulator = results.context.backend == Backend::emulator;
  c.layout.width = c.options.width;
  c.layout.height = c.options.height;
  for (const auto& k : results.kernels)
    if (k.time_s && !plottable(k) && k.family != "ceilings") c.layout.unplotted.push_back(k.name);
  Placer(results, c).place();
  return c;
}

}  // namespace rl::roofline::chart
