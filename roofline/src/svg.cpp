#include "rl/roofline/svg.hpp"

#include "rl/roofline/model.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>

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
constexpr double kCharWidth = 0.62 * kFontSize;  // conservative sans-serif average
constexpr double kLabelHeight = kFontSize + 3;

double text_width(std::string_view s) {
  return kCharWidth * static_cast<double>(s.size());
}

bool overlaps(const TextBox& a, const TextBox& b) {
  return a.x0 < b.x1 && b.x0 < a.x1 && a.y0 < b.y1 && b.y0 < a.y1;
}

const std::array<std::string_view, 8> kMarkerShapes{"circle", "square", "triangle", "diamond",
                                                    "down",   "cross",  "star",     "hexagon"};

std::string precision_colour(const std::string& precision) {
  static const std::map<std::string, std::string> kColours{
      {"fp32", "#1f77b4"}, {"bf16", "#ff7f0e"}, {"fp16", "#2ca02c"}, {"tf32", "#9467bd"},
      {"fp8", "#d62728"},  {"int8", "#8c564b"}, {"fp64", "#7f7f7f"}};
  if (auto it = kColours.find(precision); it != kColours.end()) return it->second;
  static const std::array<std::string_view, 3> kOthers{"#e377c2", "#17becf", "#bcbd22"};
  return std::string(kOthers[std::hash<std::string>{}(precision) % kOthers.size()]);
}

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

struct PlotPoint {
  const KernelResult* kernel;
  double x, y;  // pixels
};

class Chart {
 public:
  Chart(const Results& results, const ChartOptions& options) : r_(results), o_(options) {
    emulator_ = r_.context.backend == "emulator";
    top_ = emulator_ ? 92 : 64;
    left_ = 84;
    right_ = o_.width - 230;
    bottom_ = o_.height - 62;
    collect();
    choose_ranges();
    place_ceiling_labels();
    place_point_labels();
  }

  const ChartLayout& layout() const { return layout_; }

  std::string render() const {
    std::string s;
    s += "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n";
    s += fmt::format(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"{}\" height=\"{}\" "
        "viewBox=\"0 0 {} {}\" font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\" "
        "font-size=\"{}\">\n",
        num(o_.width), num(o_.height), num(o_.width), num(o_.height), num(kFontSize));
    s += "<title>" + xml_escape(title()) + "</title>\n";
    s += "<defs><marker id=\"arrowhead\" markerWidth=\"10\" markerHeight=\"8\" refX=\"9\" "
         "refY=\"4\" orient=\"auto\" markerUnits=\"userSpaceOnUse\"><path d=\"M0,0 L10,4 L0,8 "
         "Z\" fill=\"#444\"/></marker>\n";
    s += fmt::format(
        "<clipPath id=\"plot-area\"><rect x=\"{}\" y=\"{}\" width=\"{}\" "
        "height=\"{}\"/></clipPath></defs>\n",
        num(left_), num(top_), num(right_ - left_), num(bottom_ - top_));
    s += fmt::format("<rect x=\"0\" y=\"0\" width=\"{}\" height=\"{}\" fill=\"#ffffff\"/>\n",
                     num(o_.width), num(o_.height));
    s += fmt::format(
        "<text class=\"title\" x=\"{}\" y=\"26\" font-size=\"16\" "
        "font-weight=\"bold\">{}</text>\n",
        num(left_), xml_escape(title()));
    s += fmt::format("<text class=\"subtitle\" x=\"{}\" y=\"46\" fill=\"#555\">{}</text>\n",
                     num(left_), xml_escape(subtitle()));
    if (emulator_) {
      s += fmt::format(
          "<g class=\"emulator-banner\"><rect x=\"{}\" y=\"56\" width=\"{}\" height=\"26\" "
          "fill=\"#b00020\"/><text x=\"{}\" y=\"74\" fill=\"#ffffff\" font-size=\"15\" "
          "font-weight=\"bold\" text-anchor=\"middle\">CPU emulator — not GPU "
          "performance</text></g>\n",
          num(left_), num(right_ - left_), num((left_ + right_) / 2));
    }
    s += axes();
    s += ceilings_svg();
    s += arrows_svg();
    s += points_svg();
    s += labels_svg();
    s += legend_svg();
    if (points_.empty()) {
      s += fmt::format(
          "<text class=\"empty-note\" x=\"{}\" y=\"{}\" text-anchor=\"middle\" "
          "fill=\"#555\">no timed kernels with FLOPs to plot</text>\n",
          num((left_ + right_) / 2), num((top_ + bottom_) / 2));
    }
    if (!layout_.unplotted.empty() || !layout_.hidden.empty()) {
      s += fmt::format("<text class=\"footnote\" x=\"{}\" y=\"{}\" fill=\"#555\">{}</text>\n",
                       num(left_), num(o_.height - 8), xml_escape(footnote()));
    }
    s += "</svg>\n";
    return s;
  }

 private:
  std::string title() const {
    return fmt::format("Roofline — {}",
                       r_.context.device.name.empty() ? "unknown device" : r_.context.device.name);
  }

  std::string subtitle() const {
    std::string date = r_.context.timestamp_utc.substr(0, 10);
    return fmt::format(
        "driver {} · CUDA runtime {} · {} · backend {}",
        r_.context.driver_version.empty() ? "n/a" : r_.context.driver_version,
        r_.context.cuda_runtime_version.empty() ? "n/a" : r_.context.cuda_runtime_version,
        date.empty() ? "date unknown" : date, r_.context.backend);
  }

  std::string footnote() const {
    std::string s;
    if (!layout_.unplotted.empty())
      s += fmt::format("{} kernel(s) with 0 FLOP not on log axes (see report); ",
                       layout_.unplotted.size());
    if (!layout_.hidden.empty())
      s += fmt::format("{} label(s) omitted for space (hover a point for its name)",
                       layout_.hidden.size());
    return s;
  }

  void collect() {
    for (const auto& c : r_.ceilings) {
      if (!(c.value > 0) || !std::isfinite(c.value)) continue;
      (c.kind == "memory" ? memory_ : compute_).push_back(&c);
    }
    std::set<std::string> families, precisions;
    for (const auto& k : r_.kernels) {
      if (!k.time_s) continue;
      if (!(k.flops > 0) || !(k.bytes_model > 0) || !(k.achieved_flops_per_s > 0) ||
          !std::isfinite(k.achieved_flops_per_s)) {
        layout_.unplotted.push_back(k.name);
        continue;
      }
      kernels_.push_back(&k);
      families.insert(k.family);
      precisions.insert(k.precision);
    }
    int i = 0;
    for (const auto& f : families) family_shape_[f] = kMarkerShapes[i++ % kMarkerShapes.size()];
    precisions_.assign(precisions.begin(), precisions.end());
  }

  void choose_ranges() {
    std::vector<double> xs, ys;
    for (const auto* k : kernels_) {
      xs.push_back(intensity(k->flops, k->bytes_model));
      ys.push_back(k->achieved_flops_per_s);
    }
    double peak_compute = 0, peak_memory = 0, low_memory = 0;
    for (const auto* c : compute_) peak_compute = std::max(peak_compute, c->value);
    for (const auto* m : memory_) {
      peak_memory = std::max(peak_memory, m->value);
      low_memory = low_memory == 0 ? m->value : std::min(low_memory, m->value);
    }
    for (const auto* c : compute_) {
      ys.push_back(c->value);
      for (const auto* m : memory_) xs.push_back(c->value / m->value);
    }
    if (xs.empty()) xs = {0.1, 100};
    if (ys.empty()) ys = {1e9, 1e12};
    auto [xmin, xmax] = std::minmax_element(xs.begin(), xs.end());
    auto [ymin, ymax] = std::minmax_element(ys.begin(), ys.end());
    lx0_ = std::floor(std::log10(*xmin / 3));
    lx1_ = std::ceil(std::log10(*xmax * 3));
    if (lx1_ - lx0_ < 3) lx1_ = lx0_ + 3;
    double y_low = *ymin / 3;
    if (low_memory > 0)
      y_low = std::min(y_low, std::max(low_memory * std::pow(10, lx0_), *ymin / 30));
    ly0_ = std::floor(std::log10(y_low));
    ly1_ = std::ceil(std::log10(*ymax * 2));
    if (ly1_ - ly0_ < 2) ly0_ = ly1_ - 2;
    for (const auto* k : kernels_)
      points_.push_back({k, px(intensity(k->flops, k->bytes_model)), py(k->achieved_flops_per_s)});
  }

  double px(double x) const {
    return left_ + (std::log10(x) - lx0_) / (lx1_ - lx0_) * (right_ - left_);
  }
  double py(double y) const {
    double t = (std::log10(y) - ly0_) / (ly1_ - ly0_);
    return bottom_ - std::clamp(t, -0.05, 1.05) * (bottom_ - top_);
  }
  double x_at(double pixel) const {
    return std::pow(10, lx0_ + (pixel - left_) / (right_ - left_) * (lx1_ - lx0_));
  }

  bool inside(const TextBox& b) const {
    return b.x0 >= left_ + 2 && b.x1 <= right_ - 2 && b.y0 >= top_ + 2 && b.y1 <= bottom_ - 2;
  }

  bool free(const TextBox& b) const {
    if (!inside(b)) return false;
    for (const auto& other : layout_.labels)
      if (overlaps(b, other)) return false;
    for (const auto& p : points_) {
      TextBox marker{"", p.x - 5, p.y - 5, p.x + 5, p.y + 5};
      if (overlaps(b, marker)) return false;
    }
    return true;
  }

  TextBox box_at(const std::string& text, double x, double baseline) const {
    return {text, x, baseline - kFontSize, x + text_width(text), baseline + 3};
  }

  // Ceiling labels first: they anchor the chart; kernel labels avoid them.
  void place_ceiling_labels() {
    double best_bw = 0;
    for (const auto* m : memory_) best_bw = std::max(best_bw, m->value);
    for (const auto* c : compute_) {
      std::string text = fmt::format("{} {}FLOP/s", c->name, si(c->value));
      double y = py(c->value);
      for (int step = 0; step < 40; ++step) {
        double baseline = y - 4 - (step % 2 ? kLabelHeight * ((step + 1) / 2) : 0) +
                          (step % 2 ? 0 : kLabelHeight * (step / 2));
        TextBox b = box_at(text, right_ - 6 - text_width(text), baseline);
        if (free(b)) {
          ceiling_labels_.push_back({c, b});
          layout_.labels.push_back(b);
          break;
        }
      }
    }
    for (const auto* m : memory_) {
      std::string text = fmt::format("{} {}B/s", m->name, si(m->value));
      for (int step = 0; step < 60; ++step) {
        // Above the rising line: it is highest under the text's right end.
        double x = left_ + 12 + step * 18;
        double y = py(m->value * x_at(x + text_width(text)));
        TextBox b = box_at(text, x, y - 5);
        if (free(b)) {
          ceiling_labels_.push_back({m, b});
          layout_.labels.push_back(b);
          break;
        }
      }
    }
  }

  // Greedy placement: nearest free candidate around the point, searching
  // outwards; a label that finds no room is left out (listed in `hidden`).
  void place_point_labels() {
    std::vector<std::size_t> order(points_.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(),
              [&](auto a, auto b) { return points_[a].y < points_[b].y; });
    for (std::size_t i : order) {
      const auto& p = points_[i];
      const std::string& text = p.kernel->name;
      double w = text_width(text);
      std::optional<TextBox> placed;
      // Nearest first: rings of one label height, then columns further out.
      for (int column = 0; column < 3 && !placed; ++column) {
        double reach = column * (w + 12);
        for (int ring = 0; ring < 30 && !placed; ++ring) {
          double d = ring * kLabelHeight;
          const std::array<std::pair<double, double>, 6> candidates{
              {{p.x + 8 + reach, p.y + 4 - d},
               {p.x + 8 + reach, p.y + 4 + d},
               {p.x - 8 - w - reach, p.y + 4 - d},
               {p.x - 8 - w - reach, p.y + 4 + d},
               {p.x - w / 2, p.y - 10 - d},
               {p.x - w / 2, p.y + 18 + d}}};
          for (auto [x, baseline] : candidates) {
            TextBox b = box_at(text, x, baseline);
            if (free(b)) {
              placed = b;
              break;
            }
          }
        }
      }
      if (placed) {
        layout_.labels.push_back(*placed);
        point_labels_.push_back({&p, *placed});
      } else {
        layout_.hidden.push_back(text);
      }
    }
  }

  std::string axes() const {
    std::string s = "<g class=\"axes\" stroke=\"#999\" stroke-width=\"1\">\n";
    s += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\"/>\n",
                     num(left_), num(top_), num(right_ - left_), num(bottom_ - top_));
    for (double e = lx0_; e <= lx1_ + 1e-9; e += 1) {
      double x = left_ + (e - lx0_) / (lx1_ - lx0_) * (right_ - left_);
      s += fmt::format(
          "<line class=\"grid\" x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" "
          "stroke=\"#e5e5e5\"/>\n",
          num(x), num(top_), num(x), num(bottom_));
      s += fmt::format(
          "<text class=\"tick x-tick\" x=\"{}\" y=\"{}\" text-anchor=\"middle\" "
          "stroke=\"none\" fill=\"#333\">{}</text>\n",
          num(x), num(bottom_ + 16), xml_escape(decade_label(e, "")));
    }
    for (double e = ly0_; e <= ly1_ + 1e-9; e += 1) {
      double y = bottom_ - (e - ly0_) / (ly1_ - ly0_) * (bottom_ - top_);
      s += fmt::format(
          "<line class=\"grid\" x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" "
          "stroke=\"#e5e5e5\"/>\n",
          num(left_), num(y), num(right_), num(y));
      s += fmt::format(
          "<text class=\"tick y-tick\" x=\"{}\" y=\"{}\" text-anchor=\"end\" "
          "stroke=\"none\" fill=\"#333\">{}</text>\n",
          num(left_ - 6), num(y + 4), xml_escape(decade_label(e, "FLOP/s")));
    }
    s += "</g>\n";
    s += fmt::format(
        "<text class=\"axis-title\" x=\"{}\" y=\"{}\" text-anchor=\"middle\">"
        "Arithmetic intensity (FLOP/byte, against bytes_model)</text>\n",
        num((left_ + right_) / 2), num(bottom_ + 36));
    s += fmt::format(
        "<text class=\"axis-title\" x=\"18\" y=\"{}\" text-anchor=\"middle\" "
        "transform=\"rotate(-90 18 {})\">Performance (FLOP/s)</text>\n",
        num((top_ + bottom_) / 2), num((top_ + bottom_) / 2));
    return s;
  }

  static std::string decade_label(double exponent, std::string_view unit) {
    double v = std::pow(10, exponent);
    if (!unit.empty()) return si(v, 1) + std::string(unit);
    if (exponent < 3) return fmt::format("{:g}", v);
    std::string text = si(v, 1);
    text.erase(std::remove(text.begin(), text.end(), ' '), text.end());
    return text;
  }

  std::string ceilings_svg() const {
    std::string s = "<g class=\"ceilings\" clip-path=\"url(#plot-area)\" fill=\"none\">\n";
    double x_lo = std::pow(10, lx0_), x_hi = std::pow(10, lx1_);
    double top_compute = 0;
    for (const auto* c : compute_) top_compute = std::max(top_compute, c->value);
    for (const auto* m : memory_) {
      // The diagonal ends where it meets the highest compute roof.
      double x_end = top_compute > 0 ? std::min(x_hi, top_compute / m->value) : x_hi;
      bool l2 = m->name.starts_with("l2");
      s += fmt::format(
          "<line class=\"memory-ceiling\" data-name=\"{}\" x1=\"{}\" y1=\"{}\" "
          "x2=\"{}\" y2=\"{}\" stroke=\"{}\" stroke-width=\"2\"{}/>\n",
          xml_escape(m->name), num(px(x_lo)), num(py(m->value * x_lo)), num(px(x_end)),
          num(py(m->value * x_end)), l2 ? "#6a3d9a" : "#222",
          l2 ? " stroke-dasharray=\"6,3\"" : "");
    }
    double best_bw = 0;
    for (const auto* m : memory_) best_bw = std::max(best_bw, m->value);
    for (const auto* c : compute_) {
      double x_start = best_bw > 0 ? std::max(x_lo, c->value / best_bw) : x_lo;
      s += fmt::format(
          "<line class=\"compute-ceiling\" x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" "
          "stroke=\"#b35806\" stroke-width=\"2\"/>\n",
          num(px(x_start)), num(py(c->value)), num(px(x_hi)), num(py(c->value)));
      for (const auto* m : memory_) {
        double ridge = c->value / m->value;
        if (ridge < x_lo || ridge > x_hi) continue;
        s += fmt::format(
            "<circle class=\"ridge\" cx=\"{}\" cy=\"{}\" r=\"4\" fill=\"#ffffff\" "
            "stroke=\"#b35806\" stroke-width=\"1.5\"><title>ridge {} / {}: {} "
            "FLOP/B</title></circle>\n",
            num(px(ridge)), num(py(c->value)), xml_escape(c->name), xml_escape(m->name),
            fmt::format("{:.3g}", ridge));
      }
    }
    s += "</g>\n";
    return s;
  }

  std::string arrows_svg() const {
    std::string s = "<g class=\"arrows\" stroke=\"#444\" stroke-width=\"1.4\">\n";
    for (const auto& to : points_) {
      const auto& k = *to.kernel;
      if (k.baseline.empty()) continue;
      for (const auto& from : points_) {
        if (from.kernel->name != k.baseline || from.kernel->shape != k.shape) continue;
        double dx = to.x - from.x, dy = to.y - from.y, len = std::hypot(dx, dy);
        if (len < 12) continue;
        // Stop short of both markers so the arrowhead stays visible.
        double ux = dx / len, uy = dy / len;
        s += fmt::format(
            "<line class=\"fusion-arrow\" x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" "
            "marker-end=\"url(#arrowhead)\"><title>{} → {}</title></line>\n",
            num(from.x + ux * 7), num(from.y + uy * 7), num(to.x - ux * 8), num(to.y - uy * 8),
            xml_escape(from.kernel->name), xml_escape(k.name));
      }
    }
    s += "</g>\n";
    return s;
  }

  std::string points_svg() const {
    std::string s = "<g class=\"points\">\n";
    for (const auto& p : points_) {
      const auto& k = *p.kernel;
      s += fmt::format(
          "<path class=\"kernel-point\" d=\"{}\" fill=\"{}\" stroke=\"#000\" "
          "stroke-width=\"0.6\"><title>{} ({}, {}): {:.3g} FLOP/B, {}FLOP/s{}</title>"
          "</path>\n",
          marker_path(family_shape_.at(k.family), p.x, p.y, 4.5), precision_colour(k.precision),
          xml_escape(k.name), xml_escape(k.family), xml_escape(k.precision),
          intensity(k.flops, k.bytes_model), si(k.achieved_flops_per_s),
          k.pct_of_roof ? fmt::format(", {:.0f}% of roof", *k.pct_of_roof) : "");
    }
    s += "</g>\n";
    return s;
  }

  std::string labels_svg() const {
    std::string s = "<g class=\"labels\">\n";
    for (const auto& [ceiling, b] : ceiling_labels_)
      s += fmt::format("<text class=\"ceiling-label\" x=\"{}\" y=\"{}\" fill=\"{}\">{}</text>\n",
                       num(b.x0), num(b.y1 - 3), ceiling->kind == "memory" ? "#222" : "#b35806",
                       xml_escape(b.text));
    for (const auto& [p, b] : point_labels_) {
      double cx = std::clamp(p->x, b.x0, b.x1), cy = std::clamp(p->y, b.y0, b.y1);
      if (std::hypot(cx - p->x, cy - p->y) > 14)
        s += fmt::format(
            "<line class=\"leader\" x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" "
            "stroke=\"#bbb\" stroke-width=\"0.8\"/>\n",
            num(p->x), num(p->y), num(cx), num(cy));
      s += fmt::format("<text class=\"point-label\" x=\"{}\" y=\"{}\" fill=\"#222\">{}</text>\n",
                       num(b.x0), num(b.y1 - 3), xml_escape(b.text));
    }
    s += "</g>\n";
    return s;
  }

  std::string legend_svg() const {
    double x = right_ + 18, y = top_ + 6;
    std::string s = fmt::format(
        "<g class=\"legend\"><text x=\"{}\" y=\"{}\" "
        "font-weight=\"bold\">Family (marker)</text>\n",
        num(x), num(y + 10));
    y += 26;
    for (const auto& [family, shape] : family_shape_) {
      s += fmt::format(
          "<path d=\"{}\" fill=\"#ccc\" stroke=\"#000\" stroke-width=\"0.6\"/>"
          "<text class=\"legend-family\" x=\"{}\" y=\"{}\">{}</text>\n",
          marker_path(shape, x + 6, y - 4, 4.5), num(x + 18), num(y), xml_escape(family));
      y += 18;
    }
    y += 10;
    s += fmt::format("<text x=\"{}\" y=\"{}\" font-weight=\"bold\">Precision (colour)</text>\n",
                     num(x), num(y));
    y += 18;
    for (const auto& precision : precisions_) {
      s += fmt::format(
          "<rect x=\"{}\" y=\"{}\" width=\"12\" height=\"10\" fill=\"{}\"/>"
          "<text class=\"legend-precision\" x=\"{}\" y=\"{}\">{}</text>\n",
          num(x), num(y - 9), precision_colour(precision), num(x + 18), num(y),
          xml_escape(precision));
      y += 18;
    }
    y += 10;
    s += fmt::format("<text x=\"{}\" y=\"{}\" font-weight=\"bold\">Lines</text>\n", num(x), num(y));
    y += 18;
    const std::array<std::tuple<const char*, const char*, const char*>, 3> lines{
        {{"#222", "", "memory ceiling (DRAM)"},
         {"#6a3d9a", " stroke-dasharray=\"6,3\"", "memory ceiling (L2)"},
         {"#b35806", "", "compute ceiling"}}};
    for (auto [colour, dash, text] : lines) {
      s += fmt::format(
          "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\" "
          "stroke-width=\"2\"{}/><text x=\"{}\" y=\"{}\">{}</text>\n",
          num(x), num(y - 4), num(x + 14), num(y - 4), colour, dash, num(x + 18), num(y), text);
      y += 18;
    }
    s += fmt::format(
        "<circle cx=\"{}\" cy=\"{}\" r=\"4\" fill=\"#fff\" stroke=\"#b35806\"/>"
        "<text x=\"{}\" y=\"{}\">ridge point</text>\n",
        num(x + 7), num(y - 4), num(x + 18), num(y));
    y += 18;
    s += fmt::format(
        "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#444\" "
        "marker-end=\"url(#arrowhead)\"/><text x=\"{}\" y=\"{}\">naive → "
        "optimised</text>\n",
        num(x), num(y - 4), num(x + 14), num(y - 4), num(x + 18), num(y));
    s += "</g>\n";
    return s;
  }

  const Results& r_;
  ChartOptions o_;
  bool emulator_ = false;
  double left_ = 0, right_ = 0, top_ = 0, bottom_ = 0;
  double lx0_ = -1, lx1_ = 3, ly0_ = 9, ly1_ = 13;  // decades
  std::vector<const Ceiling*> memory_, compute_;
  std::vector<const KernelResult*> kernels_;
  std::vector<PlotPoint> points_;
  std::map<std::string, std::string_view> family_shape_;
  std::vector<std::string> precisions_;
  std::vector<std::pair<const Ceiling*, TextBox>> ceiling_labels_;
  std::vector<std::pair<const PlotPoint*, TextBox>> point_labels_;
  ChartLayout layout_;
};

}  // namespace

ChartLayout layout_roofline_chart(const Results& results, const ChartOptions& options) {
  return Chart(results, options).layout();
}

std::string render_roofline_svg(const Results& results, const ChartOptions& options) {
  return Chart(results, options).render();
}

}  // namespace rl::roofline
