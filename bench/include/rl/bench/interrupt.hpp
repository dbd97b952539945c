// SIGINT / SIGTERM during a run: the first one is recorded and announced in
// one line; the harness then skips what has not started, keeps what finished,
// writes results.json and benchmarks.json marked incomplete, renders the
// report and exits 128 + signal.  The handler is reset on the first signal, so
// a second Ctrl-C stops the process at once.
#pragma once

#include <string>
#include <string_view>

namespace rl::bench {

void install_interrupt_handlers(const std::string& program);
// The signal that interrupted the run, 0 if none.
int interrupt_signal();
// "SIGINT", "SIGTERM", or "signal N".
std::string_view signal_name(int signal);

}  // namespace rl::bench
