#include "rl/roofline/precision.hpp"

namespace rl::roofline {

ResultPrecision ResultPrecision::from_json(std::string_view spelling) {
  if (const std::optional<Precision> known = parse_precision(spelling)) return *known;
  ResultPrecision other;
  other.unknown_ = std::string(spelling);
  return other;
}

}  // namespace rl::roofline
