// Hooks the harness's tests drive through environment variables, so paths
// that need a crash, a throttling GPU or a Ctrl-C at a precise moment run
// deterministically without one.  Unset, they do nothing.
#pragma once

#include <cstddef>
#include <optional>

namespace rl::bench {

// The non-negative integer in environment variable `name`; nullopt when unset
// or empty.
std::optional<std::size_t> count_from_env(const char* name);

}  // namespace rl::bench
