// The emulator's one interface to the sanitizers: racecheck (ThreadSanitizer,
// RL_SANITIZE=thread) and memcheck (AddressSanitizer, RL_SANITIZE=address).
//
// This header is the one place that asks which sanitizer the build has; the
// scheduler calls these functions unconditionally.  In a plain build every
// one is an inline no-op (or constant) and compiles away, so the fiber switch
// and the barrier paths cost what they did without them.  The out-of-line
// TSan parts (the fiber pool, CUDA's fence-then-atomic model) are in
// sanitizer_hooks.cpp.
#pragma once

#include <cstddef>

// RL_EMU_TSAN: defined by the public rl/emu/block.hpp, whose fenced atomics
// (race_fence, race_atomic_*) depend on it too.
#include "rl/emu/block.hpp"

#if defined(__SANITIZE_ADDRESS__)
#define RL_EMU_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define RL_EMU_ASAN 1
#endif
#endif

#if defined(RL_EMU_TSAN)
#include <sanitizer/tsan_interface.h>
// Exported by libtsan but not declared by GCC 12's header.
extern "C" void __tsan_ignore_thread_begin();
extern "C" void __tsan_ignore_thread_end();
#endif

#if defined(RL_EMU_ASAN)
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif

namespace rl::emu::detail {

#if defined(RL_EMU_TSAN)
inline constexpr bool kRacecheck = true;
#else
inline constexpr bool kRacecheck = false;
#endif

// ---- racecheck: happens-before edges and ignored bookkeeping ------------------
// Every CUDA thread is a TSan fiber and a switch between fibers implies no
// synchronisation, so TSan sees only the happens-before edges these calls
// add where CUDA gives them (barriers, warp collectives, mbarriers, fenced
// atomics, kernel boundaries).  The emulator's own bookkeeping, touched by
// whichever fiber runs, is hidden from TSan with RaceIgnored; a kernel's own
// memory accesses stay visible.

// ---- racecheck: TSan fibers ----------------------------------------------------
// Each CUDA thread runs as its own TSan fiber, taken by the worker for its
// block and given back when the block is done; race_switch() goes with every
// stack_switch_start(): the jump implies no synchronisation.
//   race_current_fiber()             the running TSan fiber (nullptr: plain build)
//   race_take_fiber(block_threads)   a fiber for one CUDA thread of a block of
//                                    that many (sanitizer_hooks.cpp)
//   race_give_back_fibers(f, count)  a finished block's fibers, for reuse
//   race_switch(fiber)               TSan now runs as `fiber`

#if defined(RL_EMU_TSAN)
inline void race_release(const void* sync) {
  __tsan_release(const_cast<void*>(sync));
}
inline void race_acquire(const void* sync) {
  __tsan_acquire(const_cast<void*>(sync));
}
inline void race_ignore_begin() {
  __tsan_ignore_thread_begin();
}
inline void race_ignore_end() {
  __tsan_ignore_thread_end();
}
inline void* race_current_fiber() {
  return __tsan_get_current_fiber();
}
inline void race_switch(void* fiber) {
  __tsan_switch_to_fiber(fiber, __tsan_switch_to_fiber_no_sync);
}
void* race_take_fiber(std::size_t block_threads);
void race_give_back_fibers(void* const* fibers, std::size_t count);
#else
inline void race_release(const void*) {}
inline void race_acquire(const void*) {}
inline void race_ignore_begin() {}
inline void race_ignore_end() {}
inline void* race_current_fiber() {
  return nullptr;
}
inline void race_switch(void*) {}
inline void* race_take_fiber(std::size_t) {
  return nullptr;
}
inline void race_give_back_fibers(void* const*, std::size_t) {}
#endif

// Emulator bookkeeping for the rest of the scope: TSan neither checks nor
// records this fiber's memory accesses (nests).
struct RaceIgnored {
  RaceIgnored() { race_ignore_begin(); }
  ~RaceIgnored() { race_ignore_end(); }
  RaceIgnored(const RaceIgnored&) = delete;
  RaceIgnored& operator=(const RaceIgnored&) = delete;
};

// The opposite, inside a RaceIgnored scope: the kernel's own accesses (its
// body, a warp instruction's shared-memory reads) are checked again.
struct RaceVisible {
  RaceVisible() { race_ignore_end(); }
  ~RaceVisible() { race_ignore_begin(); }
  RaceVisible(const RaceVisible&) = delete;
  RaceVisible& operator=(const RaceVisible&) = delete;
};

// ---- memcheck: fiber stacks under ASan -----------------------------------------
// ASan must be told of every switch between stacks (its fake stacks and the
// bounds it reports), and a fiber's stack may hold poisoned redzones left by
// a fiber unwound by an exception.
//   stack_switch_start(&fake, bottom, size)   before a jump to that stack;
//                                             nullptr `fake`: the leaving
//                                             fiber is done (its fake stack
//                                             is freed)
//   stack_switch_finish(fake, &bottom, &size) first thing after arriving; it
//                                             reports the stack left
//   unpoison_stack(bottom, size)              before a fresh start on it

#if defined(RL_EMU_ASAN)
inline constexpr std::size_t kDefaultStackKiB = 256;  // ASan's redzones make frames larger
inline void stack_switch_start(void** fake_stack, const void* bottom, std::size_t size) {
  __sanitizer_start_switch_fiber(fake_stack, bottom, size);
}
inline void stack_switch_finish(void* fake_stack, const void** from_bottom,
                                std::size_t* from_size) {
  __sanitizer_finish_switch_fiber(fake_stack, from_bottom, from_size);
}
inline void unpoison_stack(const void* bottom, std::size_t size) {
  ASAN_UNPOISON_MEMORY_REGION(bottom, size);
}
#else
inline constexpr std::size_t kDefaultStackKiB = 64;
inline void stack_switch_start(void**, const void*, std::size_t) {}
inline void stack_switch_finish(void*, const void**, std::size_t*) {}
inline void unpoison_stack(const void*, std::size_t) {}
#endif

}  // namespace rl::emu::detail
