#include "results_json_names.hpp"

#include "results_json_reader.hpp"

#include <fmt/format.h>

namespace rl::roofline::results_json {

void require_one_of(const std::string& pointer, const std::string& value,
                    std::span<const std::string_view> allowed) {
  for (auto a : allowed)
    if (value == a) return;
  std::string list;
  for (auto a : allowed) list += fmt::format("{}\"{}\"", list.empty() ? "" : ", ", a);
  fail(pointer, fmt::format("\"{}\" is not one of {}", value, list));
}

}  // namespace rl::roofline::results_json
