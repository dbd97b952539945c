#include "rl/roofline/results.hpp"

#include <fmt/format.h>

namespace rl::roofline {

std::string shape_text(const ShapeDims& shape) {
  std::string s;
  for (const auto& [dim, extent] : shape)
    s += fmt::format("{}{}={}", s.empty() ? "" : ",", dim, extent);
  return s;
}

}  // namespace rl::roofline
