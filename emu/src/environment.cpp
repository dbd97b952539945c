// RL_EMU_* variables (see environment.hpp) and the public controls that
// override two of them from code (set_schedule, set_worker_threads).
#include "environment.hpp"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <optional>
#include <string>

#include "internal.hpp"
#include "rl/emu/arch.hpp"
#include "rl/emu/runtime.hpp"
#include "sanitizer_hooks.hpp"

namespace rl::emu {
namespace detail {
namespace {

std::mutex g_config_mutex;
std::optional<Schedule> g_schedule_override;
int g_worker_override = 0;

Schedule environment_schedule() {
  static const Schedule schedule = [] {
    const char* text = std::getenv("RL_EMU_SCHEDULE");
    if (text == nullptr || *text == '\0') return Schedule{};
    auto parsed = parse_schedule(text);
    if (!parsed) bad_environment("RL_EMU_SCHEDULE", text, "forward|reverse|random[:seed]");
    return *parsed;
  }();
  return schedule;
}

// A count: unset or empty is 1, else an integer in [1, most] or the one-line exit.
int count_setting(const char* name, int most, const char* expected) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') return 1;
  int n = 0;
  const char* end = text + std::strlen(text);
  auto [p, ec] = std::from_chars(text, end, n);
  if (ec != std::errc() || p != end || n < 1 || n > most) bad_environment(name, text, expected);
  return n;
}

int environment_workers() {
  static const int workers = count_setting("RL_EMU_THREADS", 256, "an integer in [1, 256]");
  return workers;
}

}  // namespace

void bad_environment(const char* name, const char* value, const char* expected) {
  std::fprintf(stderr, "rl::emu: %s='%s' is invalid (expected %s)\n", name, value, expected);
  std::exit(2);
}

std::size_t stack_kib_setting() {
  static const std::size_t kib = [] {
    std::size_t value = kDefaultStackKiB;
    if (const char* text = std::getenv("RL_EMU_STACK_KB")) {
      const char* end = text + std::strlen(text);
      auto [p, ec] = std::from_chars(text, end, value);
      if (ec != std::errc() || p != end || value < 16 || value > 65536)
        bad_environment("RL_EMU_STACK_KB", text, "an integer number of KiB in [16, 65536]");
    }
    return value;
  }();
  return kib;
}

bool poison_enabled() {
  static const bool poison = [] {
    const char* text = std::getenv("RL_EMU_POISON");
    if (text == nullptr || *text == '\0' || std::strcmp(text, "0") == 0) return false;
    if (std::strcmp(text, "1") != 0) bad_environment("RL_EMU_POISON", text, "0 or 1");
    return true;
  }();
  return poison;
}

double watchdog_seconds() {
  static const double seconds = [] {
    double s = 10.0;
    if (const char* text = std::getenv("RL_EMU_WATCHDOG_S"); text != nullptr && *text != '\0') {
      const char* end = text + std::strlen(text);
      auto [p, ec] = std::from_chars(text, end, s);
      if (ec != std::errc() || p != end || !(s >= 0.0) || s > 86400.0)
        bad_environment("RL_EMU_WATCHDOG_S", text,
                        "seconds in [0, 86400]; 0 disables the watchdog");
    }
    return s;
  }();
  return seconds;
}

int environment_devices() {
  static const int devices = count_setting("RL_EMU_DEVICES", kMaxDevices, "an integer in [1, 64]");
  return devices;
}

}  // namespace detail

Schedule current_schedule() {
  std::lock_guard lock(detail::g_config_mutex);
  return detail::g_schedule_override ? *detail::g_schedule_override
                                     : detail::environment_schedule();
}

void set_schedule(const Schedule& schedule) {
  std::lock_guard lock(detail::g_config_mutex);
  detail::g_schedule_override = schedule;
}

int worker_threads() {
  std::lock_guard lock(detail::g_config_mutex);
  return detail::g_worker_override > 0 ? detail::g_worker_override : detail::environment_workers();
}

void set_worker_threads(int count) {
  std::lock_guard lock(detail::g_config_mutex);
  detail::g_worker_override = std::clamp(count, 1, 256);
}

int compute_capability() {
  static const int cc = [] {
    const char* text = std::getenv("RL_EMU_CC");
    if (text == nullptr || *text == '\0') return 89;
    const std::string s = text;
    for (const int known : {89, 90, 100, 103, 120, 121}) {
      const std::string dotted = std::to_string(known / 10) + "." + std::to_string(known % 10);
      if (s == std::to_string(known) || s == dotted) return known;
    }
    detail::bad_environment("RL_EMU_CC", text,
                            "89 (Ada, the default), 90 (Hopper, sm_90a), 100 or 103 (Blackwell "
                            "B200/B300, sm_100a/sm_103a), 120 or 121 (RTX 50, RTX PRO, GB10: "
                            "sm_120a/sm_121a)");
  }();
  return cc;
}

}  // namespace rl::emu
