// What the counter plan does the same with or without CUPTI: choosing a
// role's metric from the answers of a lookup, and the names of the results.
#include "counter_plan_choice.hpp"

namespace rl::roofline {

std::string_view counter_status_name(CounterStatus status) {
  switch (status) {
    case CounterStatus::preferred:
      return "preferred";
    case CounterStatus::equivalent:
      return "equivalent";
    case CounterStatus::missing:
      return "missing";
    case CounterStatus::absent:
      return "absent";
  }
  return "?";
}

std::vector<std::string_view> CounterPlan::metric_names() const {
  std::vector<std::string_view> names;
  for (const auto& r : roles)
    if (r.metric) names.push_back(r.metric->name);
  return names;
}

RolePlan choose_metric(const CounterRole& role, const MetricRejection& why_not) {
  RolePlan plan{.role = &role};
  for (const CounterMetric& m : role.metrics) {
    if (auto reason = why_not(m.name)) {
      plan.rejected.push_back(std::move(*reason));
      continue;
    }
    plan.metric = &m;
    plan.status = &m == role.metrics.data() ? CounterStatus::preferred : CounterStatus::equivalent;
    return plan;
  }
  plan.status =
      role.need == CounterNeed::every_chip ? CounterStatus::missing : CounterStatus::absent;
  return plan;
}

}  // namespace rl::roofline
