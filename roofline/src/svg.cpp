#include "rl/roofline/svg.hpp"

#include "chart_layout.hpp"

#include "rl/roofline/model.hpp"
#include "rl/roofline/text.hpp"

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <utility>

#include <fmt/format.h>

namespace rl::roofline {

namespace {

using chart::kBannerSize;
using chart::kDescent;
using chart::kFontSize;
using chart::kTitleSize;
using chart::LegendMark;
using chart::PlacedChart;
using chart::Roof;
using chart::tick_values;

// Every coordinate goes through here: a non-finite value would make the SVG
// unreadable, so it is clamped (the callers never produce one; this is the guard).
std::string num(double v) {
  if (!std::isfinite(v)) v = 0;
  return fmt::format("{:.2f}", v);
}

constexpr std::string_view kDatasheetDash = "2,4";

// Built by appending: GCC 12 at -O3 reports a false -Wrestrict for
// `"M" + std::string` in this file (GCC PR 105329).
std::string marker_path(std::string_view shape, double x, double y, double r) {
  auto p = [&](double dx, double dy) { return num(x + dx) + "," + num(y + dy); };
  // "M p0 L p1 ... Z" through the corners.
  auto polygon = [&](std::initializer_list<std::pair<double, double>> corners) {
    std::string d;
    for (auto [dx, dy] : corners) {
      d += d.empty() ? "M" : " L";
      d += p(dx, dy);
    }
    return d + " Z";
  };
  if (shape == "square") return polygon({{-r, -r}, {r, -r}, {r, r}, {-r, r}});
  if (shape == "triangle") return polygon({{0, -r * 1.2}, {r * 1.1, r * 0.8}, {-r * 1.1, r * 0.8}});
  if (shape == "down") return polygon({{0, r * 1.2}, {r * 1.1, -r * 0.8}, {-r * 1.1, -r * 0.8}});
  if (shape == "diamond")
    return polygon({{0, -r * 1.3}, {r * 1.3, 0}, {0, r * 1.3}, {-r * 1.3, 0}});
  if (shape == "cross") {
    double t = r * 0.4;
    return polygon({{-t, -r},
                    {t, -r},
                    {t, -t},
                    {r, -t},
                    {r, t},
                    {t, t},
                    {t, r},
                    {-t, r},
                    {-t, t},
                    {-r, t},
                    {-r, -t},
                    {-t, -t}});
  }
  if (shape == "star" || shape == "hexagon") {
    std::string d;
    int corners = shape == "star" ? 10 : 6;
    for (int i = 0; i < corners; ++i) {
      double angle = M_PI / 2 + 2 * M_PI * i / corners;
      double radius = (shape == "star" && i % 2) ? r * 0.5 : r * 1.2;
      d += i ? " L" : "M";
      d += p(radius * std::cos(angle), -radius * std::sin(angle));
    }
    return d + " Z";
  }
  // circle as a path: one element kind for every marker keeps tests simple
  std::string arc = " A";
  arc += num(r) + "," + num(r) + " 0 1,0 ";
  std::string d = "M";
  d += p(-r, 0);
  d += arc;
  d += p(r, 0);
  d += arc;
  d += p(-r, 0);
  return d + " Z";
}

std::string grid_svg(const PlacedChart& c) {
  std::string s = "<g class=\"axes\" stroke=\"#999\" stroke-width=\"1\">\n";
  s += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\"/>\n",
                   num(c.left), num(c.top), num(c.right - c.left), num(c.bottom - c.top));
  for (double v : tick_values(c.lx0, c.lx1))
    s += fmt::format(
        "<line class=\"grid\" x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" "
        "stroke=\"#ececec\"/>\n",
        num(c.px(v)), num(c.top), num(c.px(v)), num(c.bottom));
  for (double v : tick_values(c.ly0, c.ly1))
    s += fmt::format(
        "<line class=\"grid\" x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" "
        "stroke=\"#ececec\"/>\n",
        num(c.left), num(c.py(v)), num(c.right), num(c.py(v)));
  s += "</g>\n";
  return s;
}

std::string roofs_svg(const PlacedChart& c) {
  std::string s = "<g class=\"roofs\" clip-path=\"url(#plot-area-" + c.id + ")\" fill=\"none\">\n";
  for (const auto& d : c.roofs) {
    const Roof& roof = *d.roof;
    // Measured roofs keep the classes scripts read; datasheet roofs have their own.
    std::string cls = roof.datasheet ? (roof.memory ? "datasheet-roof memory-datasheet"
                                                    : "datasheet-roof compute-datasheet")
                                     : (roof.memory ? "memory-ceiling" : "compute-ceiling");
    s += fmt::format(
        "<line class=\"{}\" data-name=\"{}\" x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" "
        "stroke=\"{}\" stroke-width=\"{}\"{}><title>{}</title></line>\n",
        cls, xml_escape(roof.name), num(d.line.x0), num(d.line.y0), num(d.line.x1), num(d.line.y1),
        roof.colour, roof.datasheet ? "1.6" : "2.2",
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

std::string arrows_svg(const PlacedChart& c) {
  // "fusion-arrow" is the class older scripts count; the arrow is a ladder's rung.
  std::string s = "<g class=\"arrows\" stroke=\"#333\" stroke-width=\"1.2\" fill=\"none\">\n";
  for (auto [from_i, to_i] : c.arrows()) {
    const auto &from = c.points[from_i], &to = c.points[to_i];
    double dx = to.x - from.x, dy = to.y - from.y, len = std::hypot(dx, dy);
    if (len < 14) continue;
    // Stop short of both markers so the arrowhead stays visible.
    double ux = dx / len, uy = dy / len;
    s += fmt::format(
        "<line class=\"rung-arrow fusion-arrow\" x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" "
        "marker-end=\"url(#arrowhead-{})\"><title>{} → {}: {:.2f}× faster</title></line>\n",
        num(from.x + ux * 7), num(from.y + uy * 7), num(to.x - ux * 8), num(to.y - uy * 8), c.id,
        xml_escape(from.kernel->name), xml_escape(to.kernel->name),
        from.kernel->time_s->median / to.kernel->time_s->median);
  }
  s += "</g>\n";
  return s;
}

// The hierarchy view's thin line through one kernel's levels, under its markers.
std::string joins_svg(const PlacedChart& c) {
  if (c.joins.empty()) return "";
  std::string s = "<g class=\"level-joins\" stroke-width=\"1\" fill=\"none\">\n";
  for (const auto& [j, colour] : c.joins)
    s += fmt::format(
        "<line class=\"level-join\" x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\"/>\n",
        num(j.x0), num(j.y0), num(j.x1), num(j.y1), colour);
  s += "</g>\n";
  return s;
}

// A point of the hierarchy view: filled where counted, hollow (white inside,
// a thicker outline in the kernel's colour) where the cost model stands in.
std::string level_point_svg(const chart::PlotPoint& p) {
  const auto& k = *p.kernel;
  const chart::LevelPoint& l = *p.level;
  const std::string source = l.counted ? "counted" : "modelled";
  return fmt::format(
      "<path class=\"kernel-point level-point\" data-name=\"{}\" data-level=\"{}\" "
      "data-source=\"{}\" d=\"{}\" fill=\"{}\" stroke=\"{}\" stroke-width=\"{}\"><title>{} ({}, "
      "{}): {} {} {}B, {:.3g} FLOP/B, {}FLOP/s</title></path>\n",
      xml_escape(k.name), l.level, source, marker_path(p.shape, p.x, p.y, 4.5),
      l.counted ? p.colour : "#ffffff", l.counted ? "#000" : p.colour, l.counted ? "0.7" : "1.8",
      xml_escape(k.name), xml_escape(k.family), xml_escape(shape_text(k.shape)), l.level, source,
      si(l.bytes), l.intensity, si(k.achieved_flops_per_s));
}

std::string points_svg(const PlacedChart& c) {
  std::string s = "<g class=\"points\">\n";
  for (const auto& p : c.points) {
    const auto& k = *p.kernel;
    if (p.level) {
      s += level_point_svg(p);
      continue;
    }
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
        xml_escape(k.name), marker_path(p.shape, p.x, p.y, 4.5), p.colour, xml_escape(k.name),
        xml_escape(k.family), xml_escape(to_string(k.precision)),
        xml_escape(compute_unit_name(k.unit)), xml_escape(shape_text(k.shape)),
        intensity(k.flops, k.bytes_model), si(k.achieved_flops_per_s),
        k.time_s->max > 0 ? si(k.flops / k.time_s->max) : "n/a",
        k.time_s->min > 0 ? si(k.flops / k.time_s->min) : "n/a",
        k.pct_of_roof ? fmt::format(", {:.0f}% of roof", *k.pct_of_roof) : "");
  }
  s += "</g>\n";
  return s;
}

std::string text_svg(const TextBox& b, std::string_view cls, std::string_view fill,
                     double size = kFontSize, bool bold = false) {
  return fmt::format("<text class=\"{}\" x=\"{}\" y=\"{}\" fill=\"{}\"{}{}>{}</text>\n", cls,
                     num(b.x0), num(b.y1 - kDescent * size), fill,
                     size != kFontSize ? fmt::format(" font-size=\"{}\"", num(size)) : "",
                     bold ? " font-weight=\"bold\"" : "", xml_escape(b.text));
}

std::string texts_svg(const PlacedChart& c) {
  std::string s = "<g class=\"labels\">\n";
  for (const auto& [roof, b] : c.roof_labels)
    s += text_svg(b, roof->datasheet ? "ceiling-label datasheet-label" : "ceiling-label",
                  roof->memory ? "#333333" : roof->colour);
  for (const auto& l : c.leaders)
    s += fmt::format(
        "<line class=\"leader\" x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" "
        "stroke=\"#aaa\" stroke-width=\"0.8\"/>\n",
        num(l.x0), num(l.y0), num(l.x1), num(l.y1));
  for (const auto& label : c.point_labels) s += text_svg(label.second, "point-label", "#222222");
  s += "</g>\n";
  for (const auto& b : c.layout.texts) {
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

std::string legend_marks_svg(const PlacedChart& c) {
  double x = c.right + 16;
  std::string s = "<g class=\"legend\">\n";
  for (const auto& m : c.legend_marks) {
    double cy = m.y + 6;
    switch (m.kind) {
      case LegendMark::marker:
        s += fmt::format("<path d=\"{}\" fill=\"{}\" stroke=\"#000\" stroke-width=\"0.6\"/>\n",
                         marker_path(m.shape, x + 7, cy, 4.5), m.colour);
        break;
      case LegendMark::hollow:
        s += fmt::format("<path d=\"{}\" fill=\"#ffffff\" stroke=\"{}\" stroke-width=\"1.8\"/>\n",
                         marker_path(m.shape, x + 7, cy, 4.5), m.colour);
        break;
      case LegendMark::join:
        s += fmt::format(
            "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\" stroke-width=\"1\"/>\n",
            num(x), num(cy), num(x + 16), num(cy), m.colour);
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
            num(x), num(cy), num(x + 16), num(cy), m.colour, c.id);
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

std::string render(const PlacedChart& c) {
  std::string s;
  s += "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n";
  s += fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"{}\" height=\"{}\" "
      "viewBox=\"0 0 {} {}\" font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\" "
      "font-size=\"{}\" class=\"roofline-chart\" data-view=\"{}\">\n",
      num(c.options.width), num(c.options.height), num(c.options.width), num(c.options.height),
      num(kFontSize), xml_escape(c.options.view));
  s += "<title>" + xml_escape(c.spec.title) + "</title>\n";
  s += "<defs><marker id=\"arrowhead-" + c.id +
       "\" markerWidth=\"8\" markerHeight=\"6\" refX=\"7\" "
       "refY=\"3\" orient=\"auto\" markerUnits=\"userSpaceOnUse\"><path d=\"M0,0 L8,3 L0,6 "
       "Z\" fill=\"#333\"/></marker>\n";
  s += fmt::format(
      "<clipPath id=\"plot-area-{}\"><rect x=\"{}\" y=\"{}\" width=\"{}\" "
      "height=\"{}\"/></clipPath></defs>\n",
      c.id, num(c.left), num(c.top), num(c.right - c.left), num(c.bottom - c.top));
  s += fmt::format("<rect x=\"0\" y=\"0\" width=\"{}\" height=\"{}\" fill=\"#ffffff\"/>\n",
                   num(c.options.width), num(c.options.height));
  if (c.emulator)
    s += fmt::format(
        "<rect class=\"emulator-banner\" x=\"{}\" y=\"{}\" width=\"{}\" "
        "height=\"{}\" fill=\"#b00020\"/>\n",
        num(c.banner.x0 - 6), num(c.banner.y0 - 4), num(c.banner.x1 - c.banner.x0 + 12),
        num(c.banner.y1 - c.banner.y0 + 6));
  s += grid_svg(c);
  s += roofs_svg(c);
  s += arrows_svg(c);
  s += joins_svg(c);
  s += points_svg(c);
  s += texts_svg(c);
  s += legend_marks_svg(c);
  s += "</svg>\n";
  return s;
}

}  // namespace

ChartLayout layout_roofline_chart(const Results& results, const ChartOptions& options) {
  return chart::place_chart(results, options).layout;
}

std::string render_roofline_svg(const Results& results, const ChartOptions& options) {
  return render(chart::place_chart(results, options));
}

}  // namespace rl::roofline
