// The JSON spellings of results.json's enumerated strings (internal): the one
// place that names them, for the reader to check against (the compute unit's
// spelling is cost.hpp's compute_unit_name / parse_compute_unit).  Typed
// states (an enum per field) get their to- and from-JSON conversions here.
#pragma once

#include <array>
#include <span>
#include <string>
#include <string_view>

namespace rl::roofline::results_json {

inline constexpr std::array<std::string_view, 2> kBackendNames{"cuda", "emulator"};
inline constexpr std::array<std::string_view, 2> kCeilingKindNames{"memory", "compute"};
inline constexpr std::array<std::string_view, 2> kCeilingUnitNames{"B/s", "FLOP/s"};
inline constexpr std::array<std::string_view, 2> kTimeKindNames{"cold", "batch"};
inline constexpr std::array<std::string_view, 4> kStatusNames{"ok", "failed_validation", "error",
                                                              "skipped"};
// "" is a kernel without a roof to judge it by.
inline constexpr std::array<std::string_view, 5> kBoundNames{"memory", "compute", "below_both",
                                                             "above_roof", ""};

// Throws ResultsError("<pointer>: \"<value>\" is not one of \"a\", \"b\"") unless
// `value` is one of `names`.
void require_one_of(const std::string& pointer, const std::string& value,
                    std::span<const std::string_view> names);

}  // namespace rl::roofline::results_json
