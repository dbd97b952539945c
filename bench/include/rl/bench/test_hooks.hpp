// Hooks the harness's tests drive through environment variables, so paths
// that need a crash, a throttling GPU or a Ctrl-C at a precise moment run
// deterministically without one.  Unset, they do nothing.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

namespace rl::bench {

// The non-negative integer in environment variable `name`; nullopt when unset
// or empty.
std::optional<std::size_t> count_from_env(const char* name);

// RL_BENCH_TEST_INTERRUPT_AT=POINT:N raises SIGINT the Nth time the harness
// passes the named point (N defaults to 1), as a Ctrl-C arriving there would.
// Points: "start" (before the first benchmark), "sample" (after a sample is
// taken, inside a repetition), "repetition" (after a repetition is reported,
// before the next), "benchmark" (after a benchmark is recorded), "render"
// (while the chart and report are written).  A malformed value is ignored.
void test_interrupt_point(std::string_view point);

}  // namespace rl::bench
