// JSON values the results writer builds from C++ values (internal): a
// non-finite number or an absent optional becomes null; a shape keeps its
// dimension order.
#pragma once

#include "rl/roofline/results.hpp"

#include <cmath>
#include <optional>

namespace rl::roofline::results_json {

// Templated on the JSON type: the public to_json returns nlohmann::json, while
// the file is written from an ordered_json so keys appear in schema order and
// shape keys keep the kernel's dimension order.
template <class J>
J number_or_null(double value) {
  if (!std::isfinite(value)) return J(nullptr);
  return J(value);
}

template <class J>
J optional_number(const std::optional<double>& value) {
  if (!value) return J(nullptr);
  return number_or_null<J>(*value);
}

template <class J>
J optional_bool(const std::optional<bool>& value) {
  if (!value) return J(nullptr);
  return J(*value);
}

template <class J>
J shape_json(const ShapeDims& shape) {
  J j = J::object();
  for (const auto& [dim, extent] : shape) j[dim] = extent;
  return j;
}

}  // namespace rl::roofline::results_json
