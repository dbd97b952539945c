#include "schedule.hpp"

#include <charconv>
#include <string>
#include <utility>

namespace rl::emu {
namespace detail {
namespace {

std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

}  // namespace

PassOrder::PassOrder(const Schedule& schedule, std::uint64_t linear)
    : kind_(schedule.order), rng_(schedule.seed * 0x2545f4914f6cdd1dull + linear) {}

void PassOrder::start(std::vector<unsigned>& order, unsigned count) const {
  order.resize(count);
  for (unsigned r = 0; r < count; ++r)
    order[r] = kind_ == ScheduleOrder::reverse ? count - 1 - r : r;
}

void PassOrder::next_pass(std::vector<unsigned>& order) {
  if (kind_ != ScheduleOrder::random) return;
  for (auto i = static_cast<unsigned>(order.size()); i > 1; --i)
    std::swap(order[i - 1], order[splitmix64(rng_) % i]);
}

}  // namespace detail

std::optional<Schedule> parse_schedule(std::string_view text) {
  if (text == "forward") return Schedule{ScheduleOrder::forward, 0};
  if (text == "reverse") return Schedule{ScheduleOrder::reverse, 0};
  if (text == "random") return Schedule{ScheduleOrder::random, 1};
  constexpr std::string_view prefix = "random:";
  if (text.substr(0, prefix.size()) == prefix) {
    const std::string_view digits = text.substr(prefix.size());
    std::uint64_t seed = 0;
    auto [p, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), seed);
    if (ec == std::errc() && p == digits.data() + digits.size() && !digits.empty())
      return Schedule{ScheduleOrder::random, seed};
  }
  return std::nullopt;
}

std::string to_string(const Schedule& schedule) {
  switch (schedule.order) {
    case ScheduleOrder::forward:
      return "forward";
    case ScheduleOrder::reverse:
      return "reverse";
    case ScheduleOrder::random:
      return "random:" + std::to_string(schedule.seed);
  }
  return "forward";
}

}  // namespace rl::emu
