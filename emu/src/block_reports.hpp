// The text of the scheduler's reports: kernel names, block labels, and what a
// deadlocked, timed-out or divergent block was doing.
#pragma once

#include <cstdint>
#include <string>

#include "block_state.hpp"

namespace rl::emu::detail {

// The kernel's demangled name (from the dynamic symbol table, then the ELF
// .symtab), or its address and parameter types in a stripped binary.
std::string kernel_name(const LaunchSpec& spec);
// kernel_name() once per kernel: reports made where nothing may allocate
// (the SIGSEGV handler) read the Job's copy.
const std::string& cached_kernel_name(const LaunchSpec& spec);

// blockIdx of the `linear`-th block of `grid` (x fastest).
uint3 block_index(std::uint64_t linear, const dim3& grid);
// "(x,y,z)"
std::string block_label(const uint3& b);
// "0x0000ffff"
std::string hex(unsigned v);

// synccheck: the barrier `b`'s live threads wait at after some exited.
std::string divergent_barrier_description(const Block& b);
// "N of M threads alive and none can proceed (...)": counts per wait and one
// example of a thread waiting for another.
std::string deadlock_description(const Block& b);
// "watchdog: no thread of the block made progress for ...": what each warp
// waits on; `interrupted` is the thread the watchdog's signal left, if any.
std::string watchdog_description(const Block& b, const Thread* interrupted);

}  // namespace rl::emu::detail
