// The emulator's environment: every RL_EMU_* variable is read and checked in
// environment.cpp, once, at its first use.  A malformed value is one line
// naming the variable and what it takes, then exit code 2.
//   RL_EMU_THREADS     host worker threads (rl::emu::worker_threads)
//   RL_EMU_SCHEDULE    thread order between barriers (rl::emu::current_schedule)
//   RL_EMU_STACK_KB    fiber stack size
//   RL_EMU_POISON      initcheck: fill new memory with kPoisonByte
//   RL_EMU_WATCHDOG_S  seconds without progress before a block is stopped
//   RL_EMU_CC          the emulated compute capability (rl::emu::hopper)
//   RL_EMU_DEVICES     how many devices are emulated (rl::emu::device_count)
#pragma once

#include <cstddef>

namespace rl::emu::detail {

// One line naming an RL_EMU_* variable's bad value and what it takes, then
// exit code 2: the one way the emulator refuses its environment.
[[noreturn]] void bad_environment(const char* name, const char* value, const char* expected);

// RL_EMU_STACK_KB: KiB per fiber stack, in [16, 65536] (default 64; 256
// under ASan, whose redzones make frames several times larger).
std::size_t stack_kib_setting();

// RL_EMU_POISON=1 (initcheck): see kPoisonByte in internal.hpp.
bool poison_enabled();

// RL_EMU_WATCHDOG_S: seconds without progress before a block is stopped (0: never).
double watchdog_seconds();

// RL_EMU_DEVICES: emulated devices, in [1, 64] (default 1).
int environment_devices();

}  // namespace rl::emu::detail
