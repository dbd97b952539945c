#include "rl/roofline/text.hpp"

#include <algorithm>
#include <array>
#include <cmath>

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

double estimate_text_width(std::string_view text, double font_size, bool bold) {
  std::size_t code_points = 0;
  for (char ch : text)
    if ((static_cast<unsigned char>(ch) & 0xC0) != 0x80) ++code_points;
  return (bold ? 0.68 : 0.62) * font_size * static_cast<double>(code_points);
}

}  // namespace rl::roofline
