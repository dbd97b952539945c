#include "rl/bench/test_hooks.hpp"

#include <csignal>
#include <cstdlib>
#include <string>
#include <utility>

namespace rl::bench {

std::optional<std::size_t> count_from_env(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr || *value == '\0') return std::nullopt;
  return static_cast<std::size_t>(std::strtoull(value, nullptr, 10));
}

void test_interrupt_point(std::string_view point) {
  // Parsed once; counts every pass of the named point.
  static const auto wanted = []() -> std::optional<std::pair<std::string, std::size_t>> {
    const char* value = std::getenv("RL_BENCH_TEST_INTERRUPT_AT");
    if (value == nullptr || *value == '\0') return std::nullopt;
    const std::string text(value);
    const std::size_t colon = text.find(':');
    if (colon == std::string::npos) return std::pair{text, std::size_t{1}};
    return std::pair{text.substr(0, colon), static_cast<std::size_t>(std::strtoull(
                                                text.c_str() + colon + 1, nullptr, 10))};
  }();
  static std::size_t passes = 0;
  if (!wanted || wanted->first != point) return;
  if (++passes == wanted->second) std::raise(SIGINT);
}

}  // namespace rl::bench
