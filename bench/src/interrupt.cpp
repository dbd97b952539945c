#include "rl/bench/interrupt.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstring>

namespace rl::bench {

namespace {

std::atomic<int> g_signal{0};
// Written before the handlers are installed; read by the handler with
// write(2) only (async-signal-safe).
char g_message[256] = {};
std::size_t g_message_length = 0;

extern "C" void on_interrupt(int signal) {
  std::signal(signal, SIG_DFL);  // a second one stops the process at once
  int expected = 0;
  if (g_signal.compare_exchange_strong(expected, signal)) [[maybe_unused]]
    const ssize_t written = ::write(STDERR_FILENO, g_message, g_message_length);
}

}  // namespace

void install_interrupt_handlers(const std::string& program) {
  const std::string text = program +
                           ": interrupted: finishing the current sample, then writing what "
                           "finished (interrupt again to stop at once)\n";
  g_message_length = std::min(text.size(), sizeof g_message);
  std::memcpy(g_message, text.data(), g_message_length);
  std::signal(SIGINT, on_interrupt);
  std::signal(SIGTERM, on_interrupt);
}

int interrupt_signal() {
  return g_signal.load();
}

std::string_view signal_name(int signal) {
  if (signal == SIGINT) return "SIGINT";
  if (signal == SIGTERM) return "SIGTERM";
  return "signal";
}

}  // namespace rl::bench
