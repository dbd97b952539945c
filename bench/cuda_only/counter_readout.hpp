// What one CUPTI collection reads for a chip's counter plan
// (rl/roofline/counter_plan.hpp): each chosen metric once, and for each role
// that has a metric, which of the values is its and the scale into the role's
// unit (32 B per sector where a chip counts L2 sectors, not bytes).  A metric
// two roles chose is the first role's only, and a role whose quantity a chosen
// metric contains (CounterMetric::contains) reads none: each op is in one
// role's value.  Plain C++, so a unit test checks
// a chip's mapping from CUPTI's host API alone.
#pragma once

#include "rl/roofline/counter_plan.hpp"

#include <cstddef>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace rl::bench {

struct CounterReadout {
  struct Role {
    std::string_view key;    // the role's key, what results store: "dram_bytes_read"
    std::size_t metric = 0;  // index into `metrics`
    double scale = 1;        // metric value x scale = the role's value
  };
  std::vector<std::string> metrics;  // to configure and evaluate, each once, in plan order
  std::vector<Role> roles;           // the plan's roles that read a metric, in plan order
};

CounterReadout readout_of(const roofline::CounterPlan& plan);

// Role key -> value, from the values of `readout.metrics` in their order.
std::map<std::string, double> role_values(const CounterReadout& readout,
                                          std::span<const double> metric_values);

}  // namespace rl::bench
