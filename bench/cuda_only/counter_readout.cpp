// The plan's metrics as one CUPTI collection reads them (counter_readout.hpp).
#include "counter_readout.hpp"

#include <algorithm>
#include <set>
#include <stdexcept>

namespace rl::bench {

CounterReadout readout_of(const roofline::CounterPlan& plan) {
  // A role whose ops a chosen counter also counts (GB100's FP4/FP6/FP8
  // counter holds "tensor_fp4") reads nothing: the values then hold each op
  // once, and every sum over roles (the tensor ops the comparison adds up,
  // the views) counts it once.  Left out here and not in the comparison,
  // because only the plan knows which metric a role read: the same role key
  // holds a folded count on one chip and a clean one on another.
  std::set<std::string_view> contained;
  for (const roofline::RolePlan& role : plan.roles)
    if (role.metric != nullptr)
      contained.insert(role.metric->contains.begin(), role.metric->contains.end());
  CounterReadout readout;
  for (const roofline::RolePlan& role : plan.roles) {
    if (role.metric == nullptr) continue;  // missing or absent on this chip: no value
    if (contained.contains(role.role->key)) continue;
    const std::string_view name = role.metric->name;
    // A counter two roles chose is read once, for the first of them.
    if (std::ranges::find(readout.metrics, name) != readout.metrics.end()) continue;
    readout.roles.push_back(
        {.key = role.role->key, .metric = readout.metrics.size(), .scale = role.metric->scale});
    readout.metrics.emplace_back(name);
  }
  return readout;
}

std::map<std::string, double> role_values(const CounterReadout& readout,
                                          std::span<const double> metric_values) {
  if (metric_values.size() != readout.metrics.size())
    throw std::invalid_argument("role_values: " + std::to_string(metric_values.size()) +
                                " values for " + std::to_string(readout.metrics.size()) +
                                " metrics");
  std::map<std::string, double> values;
  for (const auto& role : readout.roles)
    values[std::string(role.key)] = metric_values[role.metric] * role.scale;
  return values;
}

}  // namespace rl::bench
