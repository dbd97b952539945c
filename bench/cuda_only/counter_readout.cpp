// The plan's metrics as one CUPTI collection reads them (counter_readout.hpp).
#include "counter_readout.hpp"

#include <algorithm>
#include <stdexcept>

namespace rl::bench {

CounterReadout readout_of(const roofline::CounterPlan& plan) {
  CounterReadout readout;
  for (const roofline::RolePlan& role : plan.roles) {
    if (role.metric == nullptr) continue;  // missing or absent on this chip: no value
    const std::string_view name = role.metric->name;
    // A counter that folds several roles' quantities is read once, for the
    // first role it answers (counter_metrics.cpp), so that a sum over roles
    // (the tensor ops) counts it once.
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
