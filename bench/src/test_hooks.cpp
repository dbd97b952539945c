#include "rl/bench/test_hooks.hpp"

#include <cstdlib>

namespace rl::bench {

std::optional<std::size_t> count_from_env(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr || *value == '\0') return std::nullopt;
  return static_cast<std::size_t>(std::strtoull(value, nullptr, 10));
}

}  // namespace rl::bench
