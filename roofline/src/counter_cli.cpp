#include "counter_cli.hpp"

#include "cli_commands.hpp"

#include "rl/roofline/counter_plan.hpp"
#include "rl/roofline/sku.hpp"

#include <algorithm>
#include <cctype>
#include <iostream>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

namespace rl::roofline::cli_detail {

namespace {

std::string upper(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

// The chips to plan: the SKU row's, every chip of the SKU table, or the one named.
std::vector<std::string> chips_to_plan(const std::string& chip, const std::string& sku_key) {
  if (!sku_key.empty()) {
    const Sku* sku = find_sku(sku_key);
    if (!sku) throw UsageError(fmt::format("unknown SKU '{}' (roofline skus lists them)", sku_key));
    if (sku->chip.empty()) throw UsageError(fmt::format("SKU '{}' names no chip", sku_key));
    return {std::string(sku->chip)};
  }
  if (upper(chip) != "ALL") return {chip};
  std::vector<std::string> chips;
  for (const Sku& s : sku_table())
    if (!s.chip.empty() && std::ranges::find(chips, s.chip) == chips.end())
      chips.emplace_back(s.chip);
  return chips;
}

std::vector<std::string_view> skus_of(std::string_view chip) {
  std::vector<std::string_view> keys;
  for (const Sku& s : sku_table())
    if (upper(s.chip) == upper(chip)) keys.push_back(s.key);
  return keys;
}

std::string_view preferred_name(const RolePlan& r) {
  return r.role->metrics.front().name;
}

// The chosen counter that holds role `r`'s ops besides its own (CounterMetric::
// contains), or nullptr.  Where one does, a collection reads the role there
// and not through its own metric (bench/cuda_only/counter_readout.cpp), so
// that a sum over roles counts each op once.
const CounterMetric* held_by(const CounterPlan& plan, const RolePlan& r) {
  for (const auto& other : plan.roles)
    if (other.metric != nullptr &&
        std::ranges::find(other.metric->contains, r.role->key) != other.metric->contains.end())
      return other.metric;
  return nullptr;
}

// The metric column of one role: the chosen name, and why when it is not the
// preferred one.  An absent role whose ops another counter holds says only
// "-": fold_note names the holder, and the role's generic "folded ..., or no
// such path" would hedge what the plan knows.
std::string metric_cell(const CounterPlan& plan, const RolePlan& r) {
  switch (r.status) {
    case CounterStatus::preferred:
      return std::string(r.metric->name);
    case CounterStatus::equivalent:
      return fmt::format("{}  (MISSING {}; nearest equivalent{}{})", r.metric->name,
                         preferred_name(r), r.metric->differs.empty() ? "" : ": ",
                         r.metric->differs);
    case CounterStatus::missing:
      return fmt::format("MISSING {} (no equivalent on this chip: {})", preferred_name(r),
                         r.rejected.empty() ? "no metric listed" : r.rejected.front());
    case CounterStatus::absent:
      if (held_by(plan, r) != nullptr) return "-";
      return fmt::format("-  ({})", r.role->when_absent);
  }
  return {};
}

// What the metric column adds for a folded counter: the roles it holds, or
// for a held role, the counter that holds it.
std::string fold_note(const CounterPlan& plan, const RolePlan& r) {
  if (r.metric != nullptr && !r.metric->contains.empty())
    return fmt::format("  (holds {}: their ops are read here, once)",
                       fmt::join(r.metric->contains, ", "));
  if (const CounterMetric* holder = held_by(plan, r))
    return fmt::format("  ({}{} holds these ops)", r.metric != nullptr ? "not read: " : "",
                       holder->name);
  return "";
}

void print_plan(const CounterPlan& plan) {
  const auto skus = skus_of(plan.chip);
  fmt::print("{}{}: {} metrics, {} passes; CUPTI schedules at most {} hardware metrics per pass\n",
             plan.chip, skus.empty() ? "" : fmt::format(" ({})", fmt::join(skus, ", ")),
             plan.metric_names().size(), plan.passes, plan.max_hardware_metrics_per_pass);
  std::size_t width = 4;
  for (const auto& r : plan.roles) width = std::max(width, r.role->purpose.size());
  fmt::print("  {:<{}}  {}\n", "role", width, "metric");
  for (const auto& r : plan.roles)
    fmt::print("  {:<{}}  {}{}\n", r.role->purpose, width, metric_cell(plan, r),
               fold_note(plan, r));
}

nlohmann::json plan_json(const CounterPlan& plan) {
  nlohmann::json roles = nlohmann::json::array();
  for (const auto& r : plan.roles) {
    nlohmann::json role = {{"role", r.role->key},
                           {"purpose", r.role->purpose},
                           {"unit", r.role->unit},
                           {"status", counter_status_name(r.status)},
                           {"preferred", preferred_name(r)},
                           {"metric", nullptr},
                           {"rejected", r.rejected}};
    if (r.metric) {
      role["metric"] = r.metric->name;
      role["scale"] = r.metric->scale;
      role["differs"] = r.metric->differs;
      role["contains"] = r.metric->contains;  // the roles this counter also holds
    }
    if (const CounterMetric* holder = held_by(plan, r)) role["held_by"] = holder->name;
    if (r.status == CounterStatus::absent) role["when_absent"] = r.role->when_absent;
    roles.push_back(std::move(role));
  }
  nlohmann::json metrics = nlohmann::json::array();
  for (auto name : plan.metric_names()) metrics.push_back(name);
  return {{"chip", plan.chip},
          {"skus", skus_of(plan.chip)},
          {"passes", plan.passes},
          {"max_hardware_metrics_per_pass", plan.max_hardware_metrics_per_pass},
          {"metrics", std::move(metrics)},
          {"roles", std::move(roles)}};
}

}  // namespace

int run_counters(const std::string& chip, const std::string& sku, bool json) {
  if (!counter_plan_available())
    throw UsageError(fmt::format("counters: {}", counter_plan_unavailable_reason()));
  if (chip.empty() && sku.empty()) throw UsageError("counters needs --chip NAME|all or --sku KEY");
  std::vector<CounterPlan> plans;
  try {
    for (const auto& c : chips_to_plan(chip, sku)) plans.push_back(plan_counters(c));
  } catch (const CounterPlanError& e) {
    throw UsageError(fmt::format("counters: {}", e.what()));
  }
  if (json) {
    nlohmann::json chips = nlohmann::json::array();
    for (const auto& p : plans) chips.push_back(plan_json(p));
    std::cout << nlohmann::json{{"chips", std::move(chips)}}.dump(2) << "\n";
    return 0;
  }
  fmt::print(
      "Counter plan from CUPTI's Profiler Host API (no GPU needed); bench_roofline --counters "
      "collects these metrics on a GPU.\n");
  for (const auto& p : plans) {
    fmt::print("\n");
    print_plan(p);
  }
  return 0;
}

}  // namespace rl::roofline::cli_detail
