// The counter plan in a build without CUPTI (roofline/CMakeLists.txt compiles
// this file instead of counter_plan_cupti.cpp): every question is refused
// with one line saying why.
#include "rl/roofline/counter_plan.hpp"

namespace rl::roofline {

namespace {
constexpr std::string_view kReason =
    "built without CUPTI (configure with the CUDA toolkit's CUPTI and -DRL_ENABLE_CUPTI=ON)";
}  // namespace

bool counter_plan_available() {
  return false;
}

std::string_view counter_plan_unavailable_reason() {
  return kReason;
}

std::vector<std::string> counter_plan_chips() {
  throw CounterPlanError(std::string(kReason));
}

CounterPlan plan_counters(std::string_view, std::span<const CounterRole>) {
  throw CounterPlanError(std::string(kReason));
}

struct CounterHost::Impl {};

CounterHost::CounterHost(std::string_view, std::span<const std::uint8_t>) {
  throw CounterPlanError(std::string(kReason));
}

CounterHost::~CounterHost() = default;

CounterHost::Config CounterHost::configure(std::span<const std::string>) {
  throw CounterPlanError(std::string(kReason));
}

std::vector<double> CounterHost::evaluate(std::span<const std::uint8_t>,
                                          std::span<const std::string>, std::size_t) const {
  throw CounterPlanError(std::string(kReason));
}

}  // namespace rl::roofline
