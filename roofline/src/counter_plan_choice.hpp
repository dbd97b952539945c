// Internal to the counter plan: a role's metric is the first one the chip's
// lookup does not reject (counter_plan.cpp), whichever backend answers.
#pragma once

#include "rl/roofline/counter_plan.hpp"

#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace rl::roofline {

// Why the chip cannot collect a metric ("GB202 has no base metric
// dram__bytes_read"), or nullopt when it can.
using MetricRejection = std::function<std::optional<std::string>(std::string_view name)>;

RolePlan choose_metric(const CounterRole& role, const MetricRejection& why_not);

}  // namespace rl::roofline
