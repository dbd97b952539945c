// The JSON spellings of results.json's enumerated strings (internal): the one
// place that names them.  The typed states (Backend, Status, Bound,
// CounterSource, CounterQuantity in results.hpp) convert both ways here:
// to_string (declared beside the enums) gives the spelling the writer writes,
// parse_* reads it back, refusing an unknown one; a comparison's quantity
// reads any spelling (ResultCounterQuantity::from_json keeps a newer
// writer's).  The compute unit's spelling is cost.hpp's compute_unit_name /
// parse_compute_unit.  The string fields that are not typed yet are checked
// against the lists below.
#pragma once

#include "rl/roofline/results.hpp"

#include <array>
#include <span>
#include <string>
#include <string_view>

namespace rl::roofline::results_json {

inline constexpr std::array<std::string_view, 2> kCeilingKindNames{"memory", "compute"};
inline constexpr std::array<std::string_view, 2> kCeilingUnitNames{"B/s", "FLOP/s"};
inline constexpr std::array<std::string_view, 2> kTimeKindNames{"cold", "batch"};

// Throws ResultsError("<pointer>: \"<value>\" is not one of \"a\", \"b\"") unless
// `value` is one of `names`.
void require_one_of(const std::string& pointer, const std::string& value,
                    std::span<const std::string_view> names);

// The state `value` spells; throws as require_one_of when it spells none.
Backend parse_backend(const std::string& pointer, const std::string& value);
Status parse_status(const std::string& pointer, const std::string& value);  // "" -> none
Bound parse_bound(const std::string& pointer, const std::string& value);    // "" -> none
LeftOutReason parse_left_out_reason(const std::string& pointer, const std::string& value);
CounterSource parse_counter_source(const std::string& pointer, const std::string& value);

}  // namespace rl::roofline::results_json
